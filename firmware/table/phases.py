"""The table's phases as one table of rows (``firmware.kernel.table.StateTable``): what the
controller's round may do next. ``egm diagram live-table`` draws it like the other machines; the snapshot's
``phase`` is the state's value (docs/protocols/table.md, "Phases")."""

from __future__ import annotations

import enum

from firmware.kernel.table import Row, StateTable
from firmware.table.errors import TableError


class TablePhase(enum.Enum):
    CLOSED = "closed"          #: no window open: between rounds, or a window closed with no bet
    BETTING = "betting"        #: the betting window is open
    DEALING = "dealing"        #: the window closed with bets; the cards are being dealt
    DECISIONS = "decisions"    #: waiting for the seats' decisions (or their time-out)
    SHOWDOWN = "showdown"      #: wars, the pool contest, the showdown
    SETTLED = "settled"        #: the round is settled and its results sent
    MISDEAL = "misdeal"        #: the round ended in a misdeal: every wager returned
    PAUSED = "paused"          #: the dealer paused the table; no window opens


P = TablePhase
ENDED = (P.CLOSED, P.SETTLED, P.MISDEAL)

TABLE_PHASES = StateTable(
    "live-table", TablePhase, P.CLOSED,
    [
        Row("open", ENDED, P.BETTING),
        Row("close", (P.BETTING,), P.DEALING, when="bets"),
        Row("close", (P.BETTING,), P.CLOSED, when="no bet"),
        Row("resume", (P.CLOSED,), P.DEALING),              # power-up with the round in the journal
        Row("await_decisions", (P.DEALING,), P.DECISIONS),
        Row("showdown", (P.DEALING, P.DECISIONS), P.SHOWDOWN),
        Row("settle", (P.SHOWDOWN,), P.SETTLED),
        Row("misdeal", (P.DEALING, P.DECISIONS, P.SHOWDOWN), P.MISDEAL),
        Row("pause", ENDED, P.PAUSED),
        Row("unpause", (P.PAUSED,), P.CLOSED),
    ],
    error=TableError,
)
