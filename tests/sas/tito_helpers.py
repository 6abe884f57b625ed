"""A machine with the TITO poll set over a real ledger and voucher book, and a cabinet stand-in
whose validator the test drives (stack, return) and whose power the test can cut."""

from __future__ import annotations

from pathlib import Path

from drivers.sas.codec import LongPoll
from firmware.cashless.vouchers import IssuedVoucher, VoucherBook
from firmware.ledger.ledger import Ledger
from firmware.sas.responder import SasMachine
from firmware.sas.tito import TitoPolls
from firmware.sas.tito_validation import SecureEnhanced
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, NOW, ask, general

ASSET = 0x1234


class Validator:
    """The cabinet as the redemption sees it: a credit limit, and the escrow it was told about."""

    def __init__(self, ledger: Ledger, limit_cents: int = 100_000) -> None:
        self.ledger = ledger
        self.limit_cents = limit_cents
        self.to_stack: str | None = None
        self.returned: list[str] = []

    def can_take(self, cents: int) -> str | None:
        if self.ledger.credits_cents + cents > self.limit_cents:
            return "the credit limit would be passed"
        return None

    def stack_ticket(self, validation: str) -> None:
        self.to_stack = validation

    def return_ticket(self, validation: str, reason: str) -> None:
        self.returned.append(validation)


class Printer:
    """The cash-out as system validation sees it: the vouchers it printed, the denials."""

    def __init__(self) -> None:
        self.printed: list[str] = []
        self.denied: list[str] = []

    def print_voucher(self, voucher: IssuedVoucher) -> None:
        self.printed.append(voucher.validation)

    def validation_denied(self, reason: str) -> None:
        self.denied.append(reason)


class Site:
    """One terminal's critical memory and its SAS machine; :meth:`power_cut` reopens everything."""

    def __init__(self, state: Path, *, validation: str = "secure-enhanced") -> None:
        self.state = state
        self.validation = validation
        self._open()

    def _open(self) -> None:
        self.ledger = Ledger.open(self.state, denomination=5)
        self.book = VoucherBook(self.ledger, terminal_id="T1")
        self.cabinet = Validator(self.ledger)
        self.printer = Printer()
        self.now = 100.0
        self.polls = TitoPolls(self.ledger, self.book, self.cabinet, validation=self.validation,
                               asset_number=ASSET, printer=self.printer, clock=lambda: self.now)
        self.machine = SasMachine(ADDRESS, LedgerView(self.ledger, IDENTITY, clock=lambda: NOW),
                                  polls=[self.polls])

    def power_cut(self) -> None:
        """The power goes and comes back: what the terminal does at power-up (the validator hands
        back what it held; money-in cancels a pending redemption; the TITO set ends a waiting one)."""
        self.ledger.close()
        self._open()
        pending = self.book.pending_redemption()
        if pending is not None:
            self.book.cancel_redeem(pending.validation, "power lost with the voucher in escrow")
        self.polls.settle_after_power_loss()

    def close(self) -> None:
        self.ledger.close()

    # --- the player and the validator --------------------------------------------------------
    def insert(self, validation: str) -> None:
        self.polls.redemption.ticket_escrowed(validation)

    def stack(self) -> None:
        """The validator stacked the ticket it was told to: the cabinet credits it."""
        validation = self.cabinet.to_stack
        assert validation is not None, "the validator was never told to stack"
        self.cabinet.to_stack = None
        self.book.commit_redeem(validation)
        self.polls.redemption.ticket_stacked(validation)

    # --- the host -----------------------------------------------------------------------------
    def ask(self, command: int, data: bytes = b"") -> object:
        return ask(self.machine, LongPoll(ADDRESS, command, data))

    def exceptions(self) -> list[int]:
        """Every exception the host reads now (general polls, each acknowledged by the next)."""
        out = []
        self.machine.receive(bytes([0x80 | 2]))           # not a retry of an earlier general poll
        while (code := general(self.machine)) != 0:
            out.append(code)
            self.machine.receive(bytes([0x80 | 2]))       # a poll to another machine: the implied ACK
        return out

    def print_ticket(self, cents: int) -> str:
        """A cash-out ticket numbered by the SAS validation and confirmed by the printer."""
        self.ledger.bill_in(cents)
        numbering = self.polls.numbering
        voucher = numbering.issue(cents) if isinstance(numbering, SecureEnhanced) else self.book.issue(cents)
        self.book.printed(voucher.validation)
        return voucher.validation
