"""Cash-out: the voucher printed for the credit meter, the service menu's test ticket, the handpay.

The voucher's number and amount are recorded (``VoucherBook.issue``) before it is sent to the
printer; only the printer's confirmation takes the credits off the meter. A voucher the printer
did not confirm is voided (its number can never be redeemed), the credits stay, the player is
told, and the cabinet locks up for a handpay, from which a fixed printer can retry. At or above
the handpay limit it is a handpay at once. A handpay is cleared by the attendant's jackpot-reset
key; the amount is recorded (``Ledger.handpay``) as the lockup ends.

:class:`Cashout` also prints text receipts for other parts (:meth:`Cashout.print_receipt`, the SAS
AFT receipts), told apart from vouchers by their key, and answers each one's ``done`` once.

:class:`Cashout` owns the tickets sent to the printer and not answered for yet (:class:`Printing`,
by validation number; what they are is its :class:`PrintingState`, moved only by the rows of
:data:`PRINTING_TABLE`) and the counts of tickets printed. It drives the cabinet's cashout and
handpay triggers and calls :meth:`Supervision.after_transition <firmware.cabinet.supervision.
Supervision.after_transition>` after the ones it starts.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from firmware.cabinet.errors import TerminalError
from firmware.cabinet.states import CabinetState, HandpayReason
from firmware.cashless.vouchers import IssuedVoucher
from firmware.kernel.machine import TableMachine
from firmware.kernel.table import Row, StateTable
from hal.devices.ticket import Receipt, Ticket, TicketKind
from hal.errors import DeviceError
from hal.events import PaperLow, TicketNotPrinted, TicketPrinted

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

S = CabinetState

#: The validation number of the service menu's test ticket: never issued, never redeemable.
TEST_VALIDATION = "0" * 18


class PrintingState(enum.Enum):
    """What the printer has been sent and has not answered for yet."""

    IDLE = "idle"                            #: nothing
    VOUCHER = "voucher"                      #: the cashout voucher
    TEST = "test"                            #: the service menu's test ticket
    TEST_AND_VOUCHER = "test_and_voucher"    #: the test ticket, and the voucher sent after it


P = PrintingState

#: The printing machine (``egm diagram cash-out``). A test ticket is sent only when nothing is
#: printing, and counts as sent once the printer took it; the cashout voucher is sent whenever the
#: cabinet cashes out, also while a test ticket printed just before the technician's key went off
#: is still unanswered. Each ticket is answered once: printed, or not (a refusal, a fault, the
#: printer gone).
PRINTING_TABLE = StateTable("cash-out", PrintingState, P.IDLE, (
    Row("send_voucher", (P.IDLE,), P.VOUCHER),
    Row("send_voucher", (P.TEST,), P.TEST_AND_VOUCHER),
    Row("voucher_printed", (P.VOUCHER,), P.IDLE),
    Row("voucher_printed", (P.TEST_AND_VOUCHER,), P.TEST),
    Row("voucher_not_printed", (P.VOUCHER,), P.IDLE),
    Row("voucher_not_printed", (P.TEST_AND_VOUCHER,), P.TEST),
    Row("send_test", (P.IDLE,), P.TEST),
    Row("test_printed", (P.TEST,), P.IDLE),
    Row("test_printed", (P.TEST_AND_VOUCHER,), P.VOUCHER),
    Row("test_not_printed", (P.TEST,), P.IDLE),
    Row("test_not_printed", (P.TEST_AND_VOUCHER,), P.VOUCHER),
))


@dataclass
class Printing:
    """A ticket the printer has not answered for yet: the cashout voucher, or the test ticket."""

    validation: str
    cents: int
    sent_at: float
    kind: TicketKind = TicketKind.CASHABLE


class TicketNumbering(Protocol):
    """A validation system that gives the cash-out tickets their numbers: at once (:meth:`issue`),
    or later when it is ``deferred`` (:meth:`request`; the number comes to
    :meth:`Cashout.print_numbered` or is refused to :meth:`Cashout.numbering_denied`)."""

    @property
    def deferred(self) -> bool: ...

    def cannot_issue(self) -> str | None:
        """Why no ticket can be numbered now, or None."""
        ...

    def request(self, amount_cents: int) -> None:
        """Ask for the number of a ticket for ``amount_cents`` (a deferred system)."""
        ...

    def tick(self, now: float) -> None:
        """Time passes (a deferred system gives up on a number that does not come)."""
        ...

    def issue(self, amount_cents: int) -> IssuedVoucher:
        """Issue the voucher (``VoucherBook.issue``) with the system's next number."""
        ...

    def ticket_text(self) -> tuple[str | None, tuple[str, ...] | None]:
        """The location and address lines the host set for the tickets (None: the configuration's)."""
        ...


class Cashout:
    """The player's cash-out, the printer's tickets and the handpay lockup, for ``terminal``."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self._sent: dict[str, Printing] = {}     #: by validation number
        #: receipts sent and not answered for yet: key -> done(None | reason)
        self._receipts: dict[str, Callable[[str | None], None]] = {}
        #: the cash-out voucher waiting for a receipt to finish printing
        self._after_receipt: IssuedVoucher | None = None
        self._receipts_to_send: list[Receipt] = []
        self._printing = TableMachine(PRINTING_TABLE)
        self.tickets_printed = 0
        self.last_ticket: str | None = None
        #: Who numbers the cash-out tickets (SAS secure-enhanced validation,
        #: firmware/cabinet/sas_tito.py); None: the voucher book's own numbers.
        self.numbering: TicketNumbering | None = None

    @property
    def printing_state(self) -> PrintingState:
        state: PrintingState = self._printing.state
        return state

    @property
    def printing(self) -> Printing | None:
        """The cashout voucher the printer has not answered for yet."""
        return next((p for p in self._sent.values() if p.kind is not TicketKind.TEST), None)

    # --- the player's cash-out -------------------------------------------------------------------
    def request(self) -> dict[str, Any]:
        """The player's cash-out: a voucher, or a handpay; pending until a round in play completes."""
        t = self.t
        if t.ledger.table_bets:
            raise TerminalError("a table bet is open: cash out once its round is settled")
        if t.ledger.credits_cents <= 0 and not t.cabinet.round_in_progress:
            raise TerminalError("there are no credits to cash out")
        t.cabinet.cashout()
        t.supervision.after_transition()
        return t.status()

    def start(self) -> None:
        """The cabinet is in CASHOUT: print the voucher for the meter, or lock up for a handpay."""
        t = self.t
        cents = t.ledger.credits_cents
        credits = cents // t.ledger.denom_cents
        if credits <= 0:
            # Nothing to pay (the round that was in play when the player asked lost it all).
            t.cabinet.cashout_empty()
            return
        if t.cabinet.requires_handpay(credits):
            self._enter_handpay(credits, HandpayReason.LIMIT)
            return
        problem = self.printer_problem() or (self.numbering.cannot_issue() if self.numbering else None)
        if problem is not None:
            t.message = f"ticket cannot be printed ({problem}): call an attendant"
            self._enter_handpay(credits, HandpayReason.PRINTER)
            return
        if self.numbering is not None and self.numbering.deferred:
            self.numbering.request(cents)           # the host gives the number: print_numbered
            return
        voucher = self.numbering.issue(cents) if self.numbering else t.vouchers.issue(cents)
        self._send_voucher(voucher)

    def print_numbered(self, voucher: IssuedVoucher) -> None:
        """The validation system numbered the cash-out's voucher (ISSUED): print it."""
        self._send_voucher(voucher)

    def numbering_denied(self, reason: str) -> None:
        """The validation system gave no number: the cash-out is a handpay."""
        t = self.t
        if t.cabinet.state is S.CASHOUT and self.printing is None:
            t.message = f"ticket cannot be printed ({reason}): call an attendant"
            self._enter_handpay(t.ledger.credits_cents // t.ledger.denom_cents, HandpayReason.PRINTER)

    def tick(self) -> None:
        """Time passes for a number the validation system has not given yet; receipts go out."""
        if self.numbering is not None:
            self.numbering.tick(self.t.clock())
        self._send_receipts()

    def _send_voucher(self, voucher: IssuedVoucher) -> None:
        t = self.t
        if self._receipts:                    # a receipt is printing: the voucher follows it
            self._after_receipt = voucher
            return
        cents = voucher.amount_cents
        printer = t.devices.printer
        self._printing.fire("send_voucher")
        self._sent[voucher.validation] = Printing(voucher.validation, cents, t.clock())
        problem = self.printer_problem()      # a number given later finds the printer gone
        if printer is None or problem is not None:
            self._not_printed(voucher.validation, problem or "no printer")
            return
        try:
            printer.print_voucher(self._ticket(voucher))
        except DeviceError as exc:
            self._not_printed(voucher.validation, str(exc))

    def print_receipt(self, receipt: Receipt, done: Callable[[str | None], None]) -> None:
        """Print a text ``receipt`` at the next :meth:`tick` (so that a SAS reply never waits for
        the printer's serial exchange); ``done(None)`` once the printer confirmed it,
        ``done(reason)`` if it did not (the printer missing, faulted or refusing it)."""
        self._receipts[receipt.key] = done
        self._receipts_to_send.append(receipt)
        self.t.wake()

    def _send_receipts(self) -> None:
        while self._receipts_to_send:
            receipt = self._receipts_to_send.pop(0)
            printer = self.t.devices.printer
            problem = self.printer_problem()
            if printer is None or problem is not None:
                self._not_printed(receipt.key, problem or "no printer")
                continue
            try:
                printer.print_receipt(receipt)
            except DeviceError as exc:
                self._not_printed(receipt.key, str(exc))

    def _voucher_after_receipt(self) -> None:
        voucher, self._after_receipt = self._after_receipt, None
        if voucher is not None and not self._receipts:
            self._send_voucher(voucher)
        elif voucher is not None:
            self._after_receipt = voucher

    def printer_busy(self) -> bool:
        """The printer has a ticket or a receipt it has not answered for."""
        printer = self.t.devices.printer
        return bool(self._sent or self._receipts or self._after_receipt) or (printer is not None and printer.printing is not None)

    def printer_problem(self) -> str | None:
        printer = self.t.devices.printer
        if printer is None:
            return "no printer"
        if not printer.is_open:
            return "printer offline"
        return printer.fault

    def _ticket(self, issued: IssuedVoucher, kind: TicketKind = TicketKind.CASHABLE) -> Ticket:
        cfg = self.t.cfg
        venue, address = self.numbering.ticket_text() if self.numbering else (None, None)
        return issued.ticket(venue=venue or cfg.terminal.venue,
                             address=address or tuple(cfg.money.venue_address),
                             machine=cfg.terminal.id[:20], kind=kind)

    def print_test_ticket(self) -> dict[str, Any]:
        """The service menu's printer test: a voucher printed TEST TICKET - VOID, worth one cent,
        numbered all zeros (a number the voucher book never issues, so it can never redeem)."""
        t = self.t
        if t.cabinet.state is not S.SERVICE:
            raise TerminalError("a test ticket is printed with the technician's key on (SERVICE)")
        problem = self.printer_problem()
        if problem is not None:
            raise TerminalError(f"the printer is not ready: {problem}")
        if self._sent:
            raise TerminalError("a ticket is printing")
        test = IssuedVoucher(TEST_VALIDATION, sequence=0, amount_cents=1,
                             issued=dt.datetime.now(dt.UTC).replace(microsecond=0), expiry_days=0)
        ticket = self._ticket(test, TicketKind.TEST)
        t.ledger.event("test_ticket_sent")
        self._sent[TEST_VALIDATION] = Printing(TEST_VALIDATION, 1, t.clock(), TicketKind.TEST)
        printer = t.devices.printer
        assert printer is not None
        try:
            self._printing.fire("send_test", lambda: printer.print_voucher(ticket))
        except DeviceError as exc:
            del self._sent[TEST_VALIDATION]
            raise TerminalError(f"the printer refused the test ticket: {exc}") from exc
        return {"printing": TEST_VALIDATION}

    # --- the printer's answers --------------------------------------------------------------------
    def on_ticket_printed(self, name: str, event: TicketPrinted) -> None:
        t = self.t
        if (done := self._receipts.pop(event.validation, None)) is not None:
            done(None)
            self._voucher_after_receipt()
            return
        printing = self._sent.pop(event.validation, None)
        if printing is None:
            t.ledger.event("ticket_confirmed_unexpected", validation=event.validation)
            return
        if printing.kind is TicketKind.TEST:
            self._printing.fire("test_printed")
            t.ledger.event("test_ticket_printed")
            return
        self._printing.fire("voucher_printed")
        t.vouchers.printed(printing.validation)     # ticket_out: the credits leave the meter
        self.tickets_printed += 1
        self.last_ticket = printing.validation
        t.message = f"take your ticket: {printing.cents / 100:.2f}"
        t.cabinet.ticket_printed(printing.cents // t.ledger.denom_cents)

    def on_ticket_not_printed(self, name: str, event: TicketNotPrinted) -> None:
        self._not_printed(event.validation, event.reason)

    def on_paper_low(self, name: str, event: PaperLow) -> None:
        self.t.ledger.event("printer_paper_low", low=event.low)

    def printer_offline(self, reason: str) -> None:
        """The printer went away: the voucher it had not confirmed is not printed."""
        printing = self.printing
        if printing is not None:
            self._not_printed(printing.validation, f"printer disconnected: {reason}")
        for key in list(self._receipts):
            self._not_printed(key, f"printer disconnected: {reason}")

    def _not_printed(self, validation: str, reason: str) -> None:
        t = self.t
        if (done := self._receipts.pop(validation, None)) is not None:
            done(reason)
            self._voucher_after_receipt()
            return
        printing = self._sent.pop(validation, None)
        if printing is None:
            return
        if printing.kind is TicketKind.TEST:
            self._printing.fire("test_not_printed")
            t.ledger.event("test_ticket_not_printed", reason=reason)
            return
        self._printing.fire("voucher_not_printed")
        t.vouchers.void(validation, reason)
        t.ledger.event("ticket_not_printed", validation=validation, cents=printing.cents, reason=reason)
        t.message = f"ticket not printed ({reason}): your credits are safe; call an attendant"
        if t.cabinet.state is S.CASHOUT:
            self._enter_handpay(printing.cents // t.ledger.denom_cents, HandpayReason.PRINTER)

    # --- handpay ----------------------------------------------------------------------------------
    def _enter_handpay(self, credits: int, reason: HandpayReason) -> None:
        self.t.ledger.store_setting("cabinet.handpay", {"credits": credits, "reason": reason.value})
        self.t.cabinet.handpay(credits, reason)

    def printer_handpay(self) -> bool:
        """A handpay lockup because the printer could not print the voucher (a retry may print it)."""
        pending = self.t.cabinet.handpay_pending
        return pending is not None and pending[1] is HandpayReason.PRINTER

    def retry_ticket(self) -> dict[str, Any]:
        """From a printer handpay lockup: try the voucher again (the printer must be ready)."""
        t = self.t
        if not (t.cabinet.state is S.HANDPAY and self.printer_handpay()):
            raise TerminalError("no ticket is waiting to be printed again")
        problem = self.printer_problem()
        if problem is not None:
            raise TerminalError(f"the printer is not ready: {problem}")
        t.ledger.store_setting("cabinet.handpay", {"credits": 0, "reason": ""})
        t.cabinet.retry_ticket()
        t.supervision.after_transition()
        return t.status()

    def attendant_handpay(self, attendant: str = "attendant") -> dict[str, Any]:
        """The attendant pays the lockup by hand: the amount is recorded, the lockup ends."""
        t = self.t
        pending = t.cabinet.handpay_pending
        if t.cabinet.state is not S.HANDPAY or pending is None:
            raise TerminalError("no handpay is waiting")
        credits, reason = pending
        t.ledger.handpay(credits * t.ledger.denom_cents, attendant=attendant)
        t.ledger.store_setting("cabinet.handpay", {"credits": 0, "reason": ""})
        t.cabinet.handpay_key_off()
        t.message = ""
        return {"paid": credits, "reason": reason.value}

    # --- after a power loss -------------------------------------------------------------------------
    def void_unconfirmed(self) -> None:
        """A voucher sent but unconfirmed when the power went is voided."""
        book, ledger = self.t.vouchers, self.t.ledger
        issued = book.unconfirmed()
        if issued is not None:
            book.void(issued.validation, "power lost before the printer confirmed")
            ledger.event("voucher_unconfirmed", validation=issued.validation, cents=issued.amount_cents)

    def resume_handpay(self) -> None:
        """A handpay lockup the power interrupted is entered again (through CASHOUT, marked
        ``restored``: nobody pressed the cash-out button, so SAS raises no 0x66 for it)."""
        cabinet = self.t.cabinet
        handpay = self.t.ledger.setting("cabinet.handpay")
        if handpay and handpay.get("credits") and cabinet.state is S.IDLE:
            cabinet.cashout(restored=True)
            cabinet.handpay(handpay["credits"], handpay["reason"])
