"""The TITO poll set (ticket in, ticket out): what a SAS host asks of the machine's tickets.

``TitoPolls(ledger, book, cabinet, validation=..., asset_number=...)`` is handed to
:class:`~firmware.sas.responder.SasMachine` with the other poll sets. ``validation`` is the site's
choice (``[sas] validation``):

- ``"secure-enhanced"``: the host sets the validation ID (0x4C) and reads the tickets printed (0x4D);
  the cash-out numbers its tickets through :attr:`TitoPolls.numbering`;
- ``"system"``: the host gives each ticket's number (0x57 / 0x58): not built yet, so this choice is
  refused rather than half served (docs/protocols/sas.md, "TITO");
- ``"none"``: the machine prints its own (offline) numbers and answers no validation poll.

Ticket redemption (0x70 / 0x71) and the ticket data polls (0x7B-0x7D) are answered in every case.
Exceptions come from the ledger records these modules commit (:mod:`firmware.sas.events`).
"""

from __future__ import annotations

from collections.abc import Mapping

from firmware.cashless.vouchers import VoucherBook
from firmware.ledger.ledger import Ledger
from firmware.sas.responder import Handler
from firmware.sas.tito_redeem import TicketCabinet, TicketRedemption
from firmware.sas.tito_ticket_data import HostTicketData
from firmware.sas.tito_validation import SecureEnhanced

#: The validation choices of ``[sas] validation``.
VALIDATIONS = ("none", "secure-enhanced", "system")


class TitoPolls:
    """The TITO long polls of one machine (a :class:`~firmware.sas.responder.PollSet`)."""

    def __init__(self, ledger: Ledger, book: VoucherBook, cabinet: TicketCabinet, *,
                 validation: str, asset_number: int) -> None:
        if validation not in VALIDATIONS:
            raise ValueError(f"[sas] validation is one of {', '.join(VALIDATIONS)}, not {validation!r}")
        if validation == "system":
            raise ValueError("[sas] validation = \"system\" (0x57 / 0x58) is not supported yet")
        self.validation = validation
        self.redemption = TicketRedemption(ledger, book, cabinet)
        self.ticket_data = HostTicketData(ledger, asset_number)
        #: the numbers of the cash-out tickets (None: the voucher book's own offline numbers)
        self.numbering = SecureEnhanced(ledger, book) if validation == "secure-enhanced" else None

    def handlers(self) -> Mapping[int, Handler]:
        polls: dict[int, Handler] = {
            0x70: self.redemption.send_validation_data, 0x71: self.redemption.redeem,
            0x7B: self.ticket_data.extended_status, 0x7C: self.ticket_data.set_extended,
            0x7D: self.ticket_data.set_ticket_data,
        }
        if self.numbering is not None:
            polls[0x4C] = self.numbering.set_validation_id
            polls[0x4D] = self.numbering.enhanced_validation
        return polls
