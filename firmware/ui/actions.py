"""What a touch, a click, a key or a button of the deck means to the screens: a :class:`UiAction`.

Hit-testing a drawn frame returns one (``Frame.action_at``); the input module maps keys and the
button deck to them; the app dispatches them. Names are a closed set (:data:`ACTIONS`), so a typo
is an error where the action is made, not a tap that silently does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ACTIONS: frozenset[str] = frozenset({
    "deal",          # deal the wagers on the table
    "repeat",        # put the last round's wagers back on the table
    "repeat_deal",   # the deck's REPEAT: the last wagers again, and deal
    "clear",         # take the wagers off the table
    "cash_out",      # cash out (a ticket, or a handpay)
    "chip",          # arg: the chip's value in credits
    "next_chip",     # the deck's BET button: the next chip value
    "bet",           # arg: (seat, wager): put the selected chip there
    "skip",          # show the rest of the round at once
    "help",          # the rules
    "paytable",      # the pays
    "games",         # the game selection
    "select_game",   # arg: game id
    "back",          # leave help / pays / selection
    "page",          # arg: +1 or -1 (help and pays pages)
    "wake",          # leave attract mode
    "decide",        # arg: (seat, action) (games with decisions)
    "sim",           # arg: the simulator control's words (the simulator panel, egm run --sim)
    "game",          # arg: the game's own (GameUi.act): a card picked, a hand set, house way
    "lab_done",      # lab mode's panel (firmware/ui/lab.py): the operator did the step
    "lab_cannot",    # ... could not do it
    "lab_panel",     # ... the panel itself: a touch on it does nothing
    "table_open",    # the dealer's screen (firmware/ui/livetable/dealer.py): open the betting window
    "table_close",   # ... close it
    "table_deal",    # ... deal (the live dealer confirms)
    "table_misdeal", # ... declare a misdeal
})


@dataclass(frozen=True, slots=True)
class UiAction:
    name: str
    arg: Any = None

    def __post_init__(self) -> None:
        if self.name not in ACTIONS:
            raise ValueError(f"unknown UI action {self.name!r}; actions are {', '.join(sorted(ACTIONS))}")
