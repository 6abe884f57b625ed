"""The TITO poll set (ticket in, ticket out): what a SAS host asks of the machine's tickets.

``TitoPolls(ledger, book, cabinet, validation=..., asset_number=...)`` is handed to
:class:`~firmware.sas.responder.SasMachine` with the other poll sets. ``validation`` is the site's
choice (``[sas] validation``):

- ``"secure-enhanced"``: the host sets the validation ID (0x4C) and reads the tickets printed (0x4D);
  the cash-out numbers its tickets through :attr:`TitoPolls.numbering`;
- ``"system"``: the host gives each ticket's number (0x57 / 0x58, exception 0x57); the cash-out
  asks for it through :attr:`TitoPolls.numbering` and prints when it comes (``printer``);
- ``"none"``: the machine prints its own (offline) numbers and answers no validation poll.

Ticket redemption (0x70 / 0x71) and the ticket data polls (0x7B-0x7D) are answered in every case.
Exceptions come from the ledger records these modules commit (:mod:`firmware.sas.events`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from firmware.cashless.vouchers import VoucherBook
from firmware.ledger.ledger import Ledger
from firmware.sas.responder import Handler
from firmware.sas.tito_redeem import TicketCabinet, TicketRedemption
from firmware.sas.tito_system import CashoutPrinter, SystemValidation
from firmware.sas.tito_ticket_data import HostTicketData
from firmware.sas.tito_validation import SecureEnhanced

#: The validation choices of ``[sas] validation``.
VALIDATIONS = ("none", "secure-enhanced", "system")


class TitoPolls:
    """The TITO long polls of one machine (a :class:`~firmware.sas.responder.PollSet`)."""

    def __init__(self, ledger: Ledger, book: VoucherBook, cabinet: TicketCabinet, *,
                 validation: str, asset_number: int, printer: CashoutPrinter | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if validation not in VALIDATIONS:
            raise ValueError(f"[sas] validation is one of {', '.join(VALIDATIONS)}, not {validation!r}")
        self.validation = validation
        self.redemption = TicketRedemption(ledger, book, cabinet)
        self.ticket_data = HostTicketData(ledger, asset_number)
        #: the numbers of the cash-out tickets (None: the voucher book's own offline numbers)
        self.numbering: SecureEnhanced | SystemValidation | None = None
        if validation == "secure-enhanced":
            self.numbering = SecureEnhanced(ledger, book)
        elif validation == "system":
            if printer is None:
                raise ValueError("system validation prints through the cash-out: give the printer")
            self.numbering = SystemValidation(ledger, book, printer, clock=clock)

    def handlers(self) -> Mapping[int, Handler]:
        polls: dict[int, Handler] = {
            0x70: self.redemption.send_validation_data, 0x71: self.redemption.redeem,
            0x7B: self.ticket_data.extended_status, 0x7C: self.ticket_data.set_extended,
            0x7D: self.ticket_data.set_ticket_data,
        }
        if isinstance(self.numbering, SecureEnhanced):
            polls[0x4C] = self.numbering.set_validation_id
            polls[0x4D] = self.numbering.enhanced_validation
        elif isinstance(self.numbering, SystemValidation):
            polls[0x57] = self.numbering.pending_cashout
            polls[0x58] = self.numbering.receive_number
        return polls

    def settle_after_power_loss(self) -> None:
        """At power-up: end a redemption cycle and a number request the power cut left waiting."""
        self.redemption.settle_after_power_loss()
        if isinstance(self.numbering, SystemValidation):
            self.numbering.settle_after_power_loss()
