"""How a wager's :class:`~firmware.games.base.WagerResult` follows from its credit change."""

from __future__ import annotations

from firmware.games.base import Outcome, WagerResult


def signed(net: int) -> WagerResult:
    """The result of a wager whose credit change is ``net``: a win above 0, a loss below, a push
    at 0 (an ANTE with its bonus, a player-banker's BANK)."""
    if net > 0:
        return WagerResult(Outcome.WIN, net)
    if net < 0:
        return WagerResult(Outcome.LOSE, net)
    return WagerResult(Outcome.PUSH, 0)


def paid(stake: int, multiple: int) -> WagerResult:
    """A ``stake`` paid ``multiple``:1 by a pay table; a multiple of 0 loses the stake."""
    return WagerResult(Outcome.WIN, stake * multiple) if multiple else WagerResult(Outcome.LOSE, -stake)
