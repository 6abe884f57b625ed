"""What a touch on a service screen means: a :class:`ServiceAction`.

The same shape as the player screens' :class:`~firmware.ui.actions.UiAction` (a name from a closed
set and one argument), so the core's frame hit-testing (``Frame.action_at``, ``input.tap``) serves
both; a misspelt name is an error where the action is made, never a dead button.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ACTIONS: frozenset[str] = frozenset({
    "role",          # arg: role: choose who logs in (the PIN pad follows)
    "digit",         # arg: "0".."9" (or a hex digit on the seed pad)
    "erase",         # the last digit off
    "clear_entry",   # every digit off
    "enter",         # send the PIN (login) or the seed
    "cancel",        # leave the PIN pad / a confirmation / an editor
    "open",          # arg: page id: open a page of the menu
    "menu",          # back to the menu
    "logout",        # end the session
    "page",          # arg: +1 / -1: the next / previous page of a list
    "select",        # arg: index: a row of a list (a round, an option)
    "refresh",       # ask the API again for the page's data
    "run",           # arg: tuple of words: one service request (a test button, a handpay...)
    "game",          # arg: game id (configuration)
    "choice",        # arg: value chosen for the option being edited
    "step",          # arg: signed step for a numeric option
    "apply",         # send the edited option (config set)
    "reason",        # arg: catalogue key of a RAM-clear reason
    "confirm",       # confirm the RAM clear
    "algorithm",     # arg: software hash algorithm
    "package",       # arg: (verb, name): approve / reject a waiting package
    "calibrate",     # start the touch calibration
})


@dataclass(frozen=True, slots=True)
class ServiceAction:
    name: str
    arg: Any = None     #: its type depends on the name (above); the name's handler declares it

    def __post_init__(self) -> None:
        if self.name not in ACTIONS:
            raise ValueError(f"unknown service action {self.name!r}; actions are {', '.join(sorted(ACTIONS))}")


#: What the menu calls with an action's ``arg``: a part's method, its parameter typed for its action.
Handler = Callable[[Any], None]
