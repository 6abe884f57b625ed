"""The round state machine as data: one Enum of states and one table of transitions.

The same machine runs every game. A game without player decisions goes DEALING -> SHOWDOWN
directly; SHOWDOWN covers the wars against the dealer, the pool contest and any showdown.
The table is reviewed and drawn (``egm diagram GAME``) exactly as the kernel runs it.
"""

from __future__ import annotations

import enum


class RoundState(enum.Enum):
    BETTING = "betting"          #: wagers are placed and validated; nothing is dealt
    DEALING = "dealing"          #: the initial cards (and dice) are dealt
    DECISIONS = "decisions"      #: waiting for players (fold/play, hand setting)
    SHOWDOWN = "showdown"        #: wars against the dealer, the war pool, showdown
    SETTLEMENT = "settlement"    #: every wager's outcome and net are fixed
    COMPLETE = "complete"        #: the round record is final


#: (trigger, source state(s), destination). Nothing else may happen (auto_transitions=False).
TRANSITIONS: tuple[tuple[str, tuple[RoundState, ...], RoundState], ...] = (
    ("deal", (RoundState.BETTING,), RoundState.DEALING),
    ("await_decisions", (RoundState.DEALING,), RoundState.DECISIONS),
    ("showdown", (RoundState.DEALING, RoundState.DECISIONS), RoundState.SHOWDOWN),
    ("settle", (RoundState.SHOWDOWN,), RoundState.SETTLEMENT),
    ("complete", (RoundState.SETTLEMENT,), RoundState.COMPLETE),
)


def transition_table() -> list[dict[str, object]]:
    """The table in the form ``transitions.Machine`` takes."""
    return [
        {"trigger": trigger, "source": list(sources), "dest": dest}
        for trigger, sources, dest in TRANSITIONS
    ]
