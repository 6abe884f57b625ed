"""Unattended play (``egm run --autoplay ROUNDS``): a player who feeds notes, plays the automatic
wagers and strategy, and cashes out by ticket now and then, through the real devices.

It acts only through what a player has: notes into the bill validator (the simulator's slot), the
deal and decision requests a touchscreen would send, and the cash-out request. It never writes a
meter itself: every credit it plays with came in through the validator and every credit it takes
away left on a printed ticket.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from firmware.cabinet.states import CabinetState
from firmware.errors import EgmError
from firmware.kernel.states import RoundState

log = logging.getLogger(__name__)
S = CabinetState

#: Seconds to wait for a note to be credited before inserting another.
NOTE_WAIT_S = 3.0


class Autoplay:
    """Call it after every terminal step (``terminal.on_step``). ``insert_note(dollars)`` puts a
    note in the validator's slot (False: the slot did not take it)."""

    def __init__(self, rounds: int, insert_note: Callable[[int], bool], *, cashout_every: int,
                 note_values: list[int], clock: Callable[[], float]) -> None:
        self.rounds = rounds
        self.insert_note = insert_note
        self.cashout_every = cashout_every
        self.note_values = sorted(v // 100 for v in note_values if v % 100 == 0) or [20]
        self._clock = clock
        self._note_at: float | None = None
        self._notes_seen = 0
        self._since_cashout = 0
        self._played_seen = 0
        self.done = False
        self.errors: list[str] = []
        self._window: Any = None          #: the table's betting window bet in (a station's autoplay)

    def __call__(self, terminal: Any) -> None:
        if self.done:
            return
        if terminal.table is not None:
            self._at_table(terminal)
            return
        kernel = terminal.kernel
        if kernel is not None:
            if kernel.phase is RoundState.DECISIONS and terminal.cabinet.can_continue_round:
                request = kernel.pending()[0]
                terminal.decide(request.seat, kernel.game.automatic_decision(kernel.round, request))
            return
        self._count_rounds(terminal)
        if terminal.cabinet.state is not S.IDLE or terminal.printing is not None or terminal.starting:
            return
        if self._ended_or_cashed_out(terminal):
            return
        stake = self._stake(terminal)
        if terminal.ledger.credits < stake:
            self._feed(terminal, stake)
            return
        terminal.play()

    def _at_table(self, terminal: Any) -> None:
        """A player station (issue 24): answer the decision the table waits for, and bet the
        automatic wagers once per betting window (a refused bet is not tried again in it)."""
        table = terminal.table
        if table.decision is not None:
            try:
                terminal.decide(table.decision["seat"], table.automatic_decision())
            except EgmError as exc:           # the link is down: the table's clock decides
                self.errors.append(str(exc))
                table.decision = None
            return
        self._count_rounds(terminal)
        if terminal.cabinet.state is not S.IDLE or terminal.printing is not None or terminal.ledger.table_bets:
            return
        if self._ended_or_cashed_out(terminal):
            return
        snap = table.snapshot or {}
        if snap.get("phase") != "betting" or not table.link_up or snap.get("round_id") == self._window:
            return
        wagers = table.wagers_for(str(snap.get("game") or terminal.game_id))
        stake = self._stake(terminal, str(snap.get("game") or terminal.game_id), wagers) + table.cover_wanted()
        if terminal.ledger.credits < stake:
            self._feed(terminal, stake)
            return
        self._window = snap.get("round_id")
        try:
            terminal.play(wagers)
        except EgmError as exc:
            self.errors.append(str(exc))
            log.warning("autoplay: no bet in round %s: %s", self._window, exc)

    def _ended_or_cashed_out(self, terminal: Any) -> bool:
        """Between rounds: stop after the last round, or cash out when it is time (True: done so)."""
        if terminal.rounds_played >= self.rounds:
            self.done = True
            terminal.stop()
            return True
        if self._since_cashout >= self.cashout_every and terminal.ledger.credits > 0:
            self._since_cashout = 0
            terminal.request_cashout()
            return True
        return False

    def _count_rounds(self, terminal: Any) -> None:
        if terminal.rounds_played != self._played_seen:
            self._since_cashout += terminal.rounds_played - self._played_seen
            self._played_seen = terminal.rounds_played

    def _stake(self, terminal: Any, game_id: str | None = None,
               wagers: dict[int, dict[str, int]] | None = None) -> int:
        kernel = terminal.rounds.kernel_for(game_id or terminal.game_id)
        wagers = wagers or terminal.wagers_for()
        return sum(sum(b.values()) for b in wagers.values()) + kernel.game.reserved_stake(kernel.options, wagers)

    def _feed(self, terminal: Any, stake: int) -> None:
        now = self._clock()
        if terminal.notes_stacked != self._notes_seen:
            self._notes_seen = terminal.notes_stacked
            self._note_at = None
        if self._note_at is not None and now - self._note_at < NOTE_WAIT_S:
            return                                   # the last note is still on its way
        need_cents = (stake - terminal.ledger.credits) * terminal.ledger.denom_cents
        value = next((v for v in self.note_values if v * 100 >= need_cents and v >= 20),
                     self.note_values[-1])
        if self.insert_note(value):
            self._note_at = now
