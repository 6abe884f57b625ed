"""Money in: notes and vouchers through the bill validator, its escrow decisions, and credit.

* **notes**: the validator is enabled only while the cabinet can take money, the credit meter
  is below its limit and the casino system has not disabled it (SAS, :attr:`MoneyIn.acceptor_disabled`); a note escrowed when it cannot (a tilt raised meanwhile) is returned; a
  stacked note is credited (``Ledger.bill_in``) exactly once.
* **vouchers in**: checked by the voucher book (through the host link; offline, only this
  terminal's own vouchers and only where configured: docs/cashless.md), marked pending, stacked, and credited
  on the validator's confirmation; refused or returned ones change nothing.

:class:`MoneyIn` owns the validator's state (:class:`ValidatorState`, moved only by the rows of
:data:`VALIDATOR_TABLE`), the voucher in its escrow
and the count of notes stacked. It reads the terminal's configuration, ledger, cabinet, voucher
book, demo mode and host link, and tells the player through ``terminal.message``.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING, Protocol

from firmware.cashless.vouchers import POWER_LOST_ASKING
from firmware.errors import EgmError
from firmware.kernel.machine import TableMachine
from firmware.kernel.table import Row, StateTable
from hal.errors import DeviceError
from hal.events import NoteEscrowed, NoteStacked, Rejected, Returned, TicketEscrowed, TicketStacked

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

log = logging.getLogger(__name__)


class ValidatorState(enum.Enum):
    """What the terminal last made of the bill validator."""

    UNKNOWN = "unknown"      #: not set yet on this connection (power-up, reconnected, went away)
    ENABLED = "enabled"      #: taking notes (and tickets where configured)
    DISABLED = "disabled"    #: refusing everything


V = ValidatorState

#: The validator's machine (``egm diagram money-in``). :meth:`MoneyIn.update_validator` enables or
#: disables it only when that changes, so ENABLED is never enabled again; the halt disables it
#: whatever it was, and a connection going away or coming back makes it UNKNOWN until it is set.
VALIDATOR_TABLE = StateTable("money-in", ValidatorState, V.UNKNOWN, (
    Row("enable", (V.UNKNOWN, V.DISABLED), V.ENABLED),
    Row("disable", (V.UNKNOWN, V.ENABLED), V.DISABLED),
    Row("halt", (V.UNKNOWN, V.ENABLED, V.DISABLED), V.DISABLED),
    Row("connection_changed", (V.UNKNOWN, V.ENABLED, V.DISABLED), V.UNKNOWN),
))


class TicketHost(Protocol):
    """A host that decides on a ticket in escrow later (SAS: 0x70 / 0x71), not at once."""

    def ticket_escrowed(self, barcode: str) -> None:
        """Hold the ticket for the host; raises :class:`EgmError` if it cannot wait (returned)."""
        ...

    def ticket_stacked(self, barcode: str) -> None: ...

    def ticket_returned(self) -> None: ...


class MoneyIn:
    """Notes and vouchers in, for ``terminal``."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self._validator = TableMachine(VALIDATOR_TABLE)
        #: The voucher in the validator's escrow (its validation number), or None.
        self.redeeming: str | None = None
        #: A SAS host that decides on inserted tickets (firmware/cabinet/sas_tito.py), or None.
        self.ticket_host: TicketHost | None = None
        self.notes_stacked = 0
        #: Why the casino system has the bill acceptor disabled (SAS long poll 0x07), or None: the
        #: validator stays disabled and anything found in its escrow is returned.
        self.acceptor_disabled: str | None = None

    @property
    def validator(self) -> ValidatorState:
        state: ValidatorState = self._validator.state
        return state

    @property
    def accepting(self) -> bool:
        return self.validator is V.ENABLED

    def can_take(self, cents: int) -> str | None:
        """Why ``cents`` more cannot be credited now, or None."""
        t = self.t
        if not t.cabinet.can_accept_money:
            return f"the cabinet cannot take money ({t.cabinet.state.name.lower()})"
        if t.demo is not None and t.demo.active:
            return "the cabinet is in demo mode"
        limit = t.cfg.limits.max_credits * t.ledger.denom_cents
        if t.ledger.credits_cents + cents > limit:
            return f"the credit limit ({t.cfg.limits.max_credits} credits) would be passed"
        if cents % t.ledger.denom_cents:
            return f"{cents} cents is not a whole number of credits"
        return None

    # --- the validator's state ------------------------------------------------------------------
    def update_validator(self) -> None:
        """Enable the validator when the terminal can take money (and no voucher is in its escrow),
        disable it otherwise; only when that changes."""
        validator = self.t.devices.bill_validator
        if validator is None or not validator.is_open:
            return
        wanted = self.can_take(0) is None and self.redeeming is None and self.acceptor_disabled is None
        want = V.ENABLED if wanted else V.DISABLED
        if want is not self.validator:
            money = self.t.cfg.money
            try:
                if want is V.ENABLED:
                    self._validator.fire("enable", lambda: validator.enable(money.notes_cents,
                                                                            tickets=money.tickets_in))
                else:
                    self._validator.fire("disable", validator.disable)
            except DeviceError as exc:
                log.warning("bill validator: %s", exc)

    def connection_changed(self) -> None:
        """The validator went away or came back: its state is set again on the next connection."""
        self._validator.fire("connection_changed")

    def halt(self) -> None:
        """The terminal halts: a note taken now could not be credited."""
        validator = self.t.devices.bill_validator
        if validator is not None and validator.is_open:
            try:
                self._validator.fire("halt", validator.disable)
            except DeviceError as err:
                log.critical("bill validator could not be disabled: %s", err)

    def settle_after_power_loss(self) -> None:
        """A redemption in escrow is cancelled (the validator returns what it held at power-up); a
        redemption asked of the host that had not gone ahead is abandoned (docs/cashless.md)."""
        book = self.t.vouchers
        pending = book.pending_redemption()
        if pending is not None:
            book.cancel_redeem(pending.validation, "power lost with the voucher in escrow")
        for validation in book.unsettled_requests():  # asked of the host, never went ahead
            book.abandon_request(validation, POWER_LOST_ASKING)

    # --- the validator's events -----------------------------------------------------------------
    def on_note_escrowed(self, name: str, event: NoteEscrowed) -> None:
        cents = event.value_cents
        validator = self.t.devices.bill_validator
        assert validator is not None
        why = self.acceptor_disabled or self.can_take(cents)
        if why is None and cents not in self.t.cfg.money.notes_cents:
            why = f"{cents / 100:.2f} notes are not accepted"
        if why is None:
            validator.stack()
        else:
            validator.return_escrow()
            self.t.ledger.event("bill_returned", cents=cents, reason=why)
            self.t.message = f"note returned: {why}"

    def on_note_stacked(self, name: str, event: NoteStacked) -> None:
        self.t.ledger.bill_in(event.value_cents, denom_cents=event.value_cents)
        self._credit_recorded()
        self.notes_stacked += 1
        self.t.message = ""

    def _credit_recorded(self) -> None:
        """The stacked item's credit (or its refusal) is in critical memory: the validator may be told."""
        validator = self.t.devices.bill_validator
        if validator is not None:
            validator.credit_recorded()

    def on_ticket_escrowed(self, name: str, event: TicketEscrowed) -> None:
        barcode = event.barcode
        validator = self.t.devices.bill_validator
        assert validator is not None
        why = self.acceptor_disabled or self.can_take(0)   # the state first: no host asked for nothing
        if why is None and self.ticket_host is not None:
            try:
                self.ticket_host.ticket_escrowed(barcode)   # the SAS host decides (0x70 / 0x71)
                return
            except EgmError as exc:
                why = str(exc)
        elif why is None:
            try:
                link = self.t.hostlink
                host = link if link is not None and link.connected else None
                redemption = self.t.vouchers.begin_redeem(barcode, host=host)   # checks (asks the host) once
            except EgmError as exc:
                why = str(exc)
            else:
                why = self.can_take(redemption.amount_cents)
                if why is not None:
                    self.t.vouchers.cancel_redeem(barcode, why)
        if why is not None:
            validator.return_escrow()
            self.t.ledger.event("voucher_refused", validation=barcode, reason=why)
            self.t.message = f"voucher returned: {why}"
            return
        self.redeeming = barcode
        validator.stack()

    def on_ticket_stacked(self, name: str, event: TicketStacked) -> None:
        barcode = event.barcode
        if self.redeeming != barcode:
            self.t.ledger.event("voucher_stacked_unexpected", validation=barcode)
            self._credit_recorded()
            return
        self.t.vouchers.commit_redeem(barcode)
        self._credit_recorded()
        self.redeeming = None
        if self.ticket_host is not None:
            self.ticket_host.ticket_stacked(barcode)
        self.t.message = ""

    def on_returned(self, name: str, event: Returned | Rejected) -> None:
        """The validator gave back what it held: a voucher in its escrow is not redeemed."""
        if self.redeeming is not None:
            self.t.vouchers.cancel_redeem(self.redeeming, "returned by the validator")
            self.redeeming = None
        if self.ticket_host is not None:
            self.ticket_host.ticket_returned()

    def on_rejected(self, name: str, event: Rejected) -> None:
        self.on_returned(name, event)
        self.t.ledger.event("bill_rejected", reason=event.reason)
