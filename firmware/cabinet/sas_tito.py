"""The cabinet's side of SAS TITO (firmware/sas/tito.py): the bill validator's escrow for the
ticket redemption polls, and the numbers and text of the cash-out tickets.

:func:`sas_tito` builds the TITO poll set for a terminal and ends a redemption cycle a power cut
left waiting; the SAS port (``firmware/cabinet/sas_port.py``, built by the terminal at the end of
its power-up from ``[sas] validation``) passes the poll set to ``SasMachine(..., polls=[...])`` and
offers the terminal what the set takes over: money-in hands inserted tickets to the SAS host
(``MoneyIn.ticket_host``), the cash-out numbers its tickets through it (``Cashout.numbering``).
Everything runs on the terminal's thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from firmware.cashless.vouchers import IssuedVoucher
from firmware.sas.tito import TitoPolls
from firmware.sas.tito_system import SystemValidation
from firmware.sas.tito_validation import SecureEnhanced

if TYPE_CHECKING:
    from firmware.cabinet.cashout import TicketNumbering
    from firmware.cabinet.money_in import TicketHost
    from firmware.cabinet.terminal import Terminal


class SasTicketCabinet:
    """:class:`~firmware.sas.tito_redeem.TicketCabinet` over the terminal's money-in."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal

    def can_take(self, cents: int) -> str | None:
        return self.t.money_in.can_take(cents)

    def stack_ticket(self, validation: str) -> None:
        validator = self.t.devices.bill_validator
        if validator is None or not validator.is_open:  # gone since the ticket was inserted
            self.t.vouchers.cancel_redeem(validation, "the bill validator is not connected")
            return
        self.t.money_in.redeeming = validation       # its stacking commits the ticket_in
        validator.stack()

    def return_ticket(self, validation: str, reason: str) -> None:
        validator = self.t.devices.bill_validator
        if validator is not None and validator.is_open:
            validator.return_escrow()
        self.t.ledger.event("voucher_refused", validation=validation, reason=reason)
        self.t.message = f"voucher returned: {reason}"


class SasCashoutPrinter:
    """:class:`~firmware.sas.tito_system.CashoutPrinter` over the terminal's cash-out."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal

    def print_voucher(self, voucher: IssuedVoucher) -> None:
        self.t.cashout.print_numbered(voucher)

    def validation_denied(self, reason: str) -> None:
        self.t.cashout.numbering_denied(reason)


class SasTicketOut:
    """``Cashout.numbering``: the numbers of the configured validation, and the host's ticket text
    and expiration."""

    def __init__(self, terminal: Terminal, polls: TitoPolls) -> None:
        self.t = terminal
        self.polls = polls

    @property
    def deferred(self) -> bool:
        return isinstance(self.polls.numbering, SystemValidation)

    def cannot_issue(self) -> str | None:
        numbering = self.polls.numbering
        return numbering.cannot_issue() if isinstance(numbering, SecureEnhanced) else None

    def _expiry(self) -> None:
        expiry = self.polls.ticket_data.printed().expiry_days
        if expiry is not None:
            self.t.vouchers.expiry_days = expiry

    def issue(self, amount_cents: int) -> IssuedVoucher:
        self._expiry()
        numbering = self.polls.numbering
        if isinstance(numbering, SecureEnhanced):
            return numbering.issue(amount_cents)
        return self.t.vouchers.issue(amount_cents)

    def request(self, amount_cents: int) -> None:
        self._expiry()
        if isinstance(self.polls.numbering, SystemValidation):
            self.polls.numbering.request(amount_cents)

    def tick(self, now: float) -> None:
        if isinstance(self.polls.numbering, SystemValidation):
            self.polls.numbering.tick(now)

    def ticket_text(self) -> tuple[str | None, tuple[str, ...] | None]:
        printed = self.polls.ticket_data.printed()
        return printed.location, printed.address


@dataclass(frozen=True, slots=True)
class SasTito:
    """The terminal's TITO poll set, and what it takes over from the terminal: the tickets inserted
    (``ticket_host``) and the numbering of the tickets printed; the terminal connects them when its
    SAS port is built (:class:`firmware.cabinet.ports.SasPart`)."""

    polls: TitoPolls
    ticket_host: TicketHost
    numbering: TicketNumbering


def sas_tito(terminal: Terminal, *, validation: str, asset_number: int) -> SasTito:
    """Build the terminal's TITO poll set, and end a redemption cycle or a number request the power
    cut left waiting for the host."""
    polls = TitoPolls(terminal.ledger, terminal.vouchers, SasTicketCabinet(terminal),
                      validation=validation, asset_number=asset_number,
                      printer=SasCashoutPrinter(terminal), clock=terminal.clock)
    polls.settle_after_power_loss()
    return SasTito(polls, polls.redemption, SasTicketOut(terminal, polls))
