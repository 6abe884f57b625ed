"""The player's bet slip: the wagers on the table before DEAL, in integer credits.

Touching a wager area puts the selected chip there (capped at the table maximum); CLEAR takes
everything off; REPEAT puts the last dealt wagers back. The game says which wagers follow others
(``link``: Baccarat War's WAR equals BAC when the rules require it). The slip refuses what the
terminal would refuse (a total above the round maximum or the credits) with a catalogue message,
and changes nothing when it refuses.
"""

from __future__ import annotations

from collections.abc import Callable

from firmware.kernel.limits import BetLimits
from firmware.ui.messages import text

Wagers = dict[int, dict[str, int]]


def stake(wagers: Wagers) -> int:
    return sum(sum(bets.values()) for bets in wagers.values())


def follow(wagers: Wagers, leader: str, follower: str, times: int = 1) -> Wagers:
    """Every spot with ``leader`` staked has ``follower`` at ``times`` the leader; a spot without
    the leader has no follower (Baccarat War's WAR = BAC, Split 21 Stud's HIGH = k x LOW)."""
    out: Wagers = {}
    for seat, bets in wagers.items():
        bets = dict(bets)
        if bets.get(leader):
            bets[follower] = times * bets[leader]
        else:
            bets.pop(follower, None)
        out[seat] = bets
    return out


def short_spot(wagers: Wagers, required: tuple[str, ...]) -> tuple[int, str] | None:
    """The first spot with chips down that lacks one of the ``required`` wagers, and that wager."""
    for seat, bets in sorted(wagers.items()):
        if any(bets.values()):
            for wager in required:
                if not bets.get(wager):
                    return seat, wager
    return None


def has_chips(wagers: Wagers) -> bool:
    return any(any(bets.values()) for bets in wagers.values())


class SlipRefused(Exception):
    """A chip that cannot go where the player put it; ``str()`` is the player's message."""


class BetSlip:
    def __init__(self, limits: BetLimits, chips: tuple[int, ...], *,
                 link: Callable[[Wagers], Wagers] = lambda w: w) -> None:
        if not chips:
            raise ValueError("a bet slip needs at least one chip value")
        self.limits = limits
        self.chips = chips
        self.chip = chips[min(2, len(chips) - 1)] if len(chips) > 2 else chips[0]
        self.link = link
        self.wagers: Wagers = {}
        self.last: Wagers | None = None

    # --- chips ----------------------------------------------------------------------------------
    def select(self, value: int) -> None:
        if value not in self.chips:
            raise SlipRefused(text("message.no_such_chip"))
        self.chip = value

    def next_chip(self) -> int:
        i = self.chips.index(self.chip) if self.chip in self.chips else -1
        self.chip = self.chips[(i + 1) % len(self.chips)]
        return self.chip

    # --- wagers ---------------------------------------------------------------------------------
    @property
    def total(self) -> int:
        return stake(self.wagers)

    def amount(self, seat: int, wager: str) -> int:
        return self.wagers.get(seat, {}).get(wager, 0)

    def place(self, seat: int, wager: str, credits: int) -> int:
        """Add the selected chip to ``wager`` of ``seat``; the amount it holds now."""
        current = self.amount(seat, wager)
        if current >= self.limits.max_bet:
            raise SlipRefused(text("message.at_table_max", max=self.limits.max_bet))
        new = min(current + self.chip, self.limits.max_bet)
        trial = {s: dict(b) for s, b in self.wagers.items()}
        trial.setdefault(seat, {})[wager] = new
        self._check(self.link(trial), credits)
        self.wagers = self.link(trial)
        return self.amount(seat, wager)

    def _check(self, wagers: Wagers, credits: int) -> None:
        total = stake(wagers)
        if total > self.limits.max_total_bet:
            raise SlipRefused(text("message.over_round_max", max=self.limits.max_total_bet))
        if total > credits:
            raise SlipRefused(text("message.not_enough_credits", needed=total, credits=credits))

    def clear(self) -> None:
        self.wagers = {}

    def repeat(self, credits: int) -> None:
        """The last dealt wagers back on the table (refused, and nothing changed, if they no
        longer fit the credits)."""
        if not self.last:
            raise SlipRefused(text("message.nothing_to_repeat"))
        again = {s: dict(b) for s, b in self.last.items()}
        self._check(again, credits)
        self.wagers = again

    def dealt(self) -> None:
        """The wagers went into a round: they are what REPEAT brings back; the table is cleared."""
        self.last = {s: dict(b) for s, b in self.wagers.items() if b}
        self.wagers = {}
