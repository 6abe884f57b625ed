"""What SAS AFT (``firmware.sas.aft``) needs of the cabinet, over a running terminal.

:class:`TerminalAft` answers :class:`firmware.sas.aft.AftCabinet` from the terminal's parts: a
transfer in is possible when the cabinet may take money (``MoneyIn.can_take``: IDLE, no cashout or
disable waiting, not in demo mode) and no round is open; a transfer out and a lock only in IDLE
(never in a game, a tilt, a handpay, a cashout, disabled or in service). The lock's hold is kept
here; the terminal asks for it through its SAS port (``SasPart.play_held``): no round starts while
the lock holds, until it is cancelled, used by a transfer, or times out. Receipts go to the printer through
the cash-out's printing (``Cashout.print_receipt``); their default location and address are the
vouchers' (``terminal.venue``, ``money.venue_address``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from drivers.sas.aft_receipt import ReceiptText
from firmware.cabinet.states import CabinetState
from hal.devices.ticket import Receipt

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal


class TerminalAft:
    """:class:`firmware.sas.aft.AftCabinet` for ``terminal``."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self._until: float | None = None

    def refusal(self, direction: str) -> str | None:
        cabinet = self.t.cabinet
        if cabinet.round_in_progress:
            return "a game is in progress"
        if direction == "in":
            return self.t.money_in.can_take(self.t.ledger.denom_cents)
        if cabinet.state is not CabinetState.IDLE or cabinet.cashout_pending or cabinet.disable_pending:
            return f"the cabinet cannot pay out now ({cabinet.state.name.lower()})"
        return None

    def credit_room(self) -> int:
        if self.refusal("in") is not None:
            return 0
        t = self.t
        return max(0, t.cfg.limits.max_credits * t.ledger.denom_cents - t.ledger.credits_cents)

    def lock_refusal(self) -> str | None:
        cabinet = self.t.cabinet
        if cabinet.round_in_progress:
            return "a game is in progress"
        if cabinet.state is not CabinetState.IDLE:
            return f"the cabinet cannot be locked now ({cabinet.state.name.lower()})"
        return None

    def hold(self, until: float | None) -> None:
        self._until = until

    @property
    def holding(self) -> bool:
        """The AFT lock holds play now (until it is released or times out)."""
        if self._until is not None and self.t.clock() >= self._until:
            self._until = None
        return self._until is not None

    def play_held(self) -> str | None:
        """Why play is held (the lock), or None: what the terminal asks of its SAS port."""
        return "locked for a funds transfer" if self.holding else None

    def show_transfer(self, direction: str, cents: int) -> None:
        amount = f"{cents // 100}.{cents % 100:02d}"
        self.t.message = f"Transfer {'in' if direction == 'in' else 'out'}: {amount}"

    # --- receipts ----------------------------------------------------------------------------
    def receipt_refusal(self) -> str | None:
        return self.t.cashout.printer_problem()

    def printer_busy(self) -> bool:
        return self.t.cashout.printer_busy()

    def receipt_texts(self) -> dict[int, str]:
        cfg = self.t.cfg
        address = tuple(cfg.money.venue_address)[:2]
        texts = {ReceiptText.LOCATION: cfg.terminal.venue}
        texts.update(zip((ReceiptText.ADDRESS1, ReceiptText.ADDRESS2), address, strict=False))
        return {int(code): text for code, text in texts.items()}

    def print_receipt(self, key: str, lines: tuple[str, ...], done: Callable[[str | None], None]) -> None:
        printable = tuple(line.replace("^", " ").replace("|", " ")[:40] for line in lines)
        self.t.cashout.print_receipt(Receipt(key, printable), done)
