"""The ``transitions`` machine class of the project's state machines (the round, the cabinet).

Stock ``transitions`` in every respect but one: a state reads its Enum member's name once. The
stock ``State.name`` resolves it on every access (about 24 times per round), which was a third of
the round machine's time. Tables, callbacks and their order stay the stock ones.
"""

from __future__ import annotations

import enum
from typing import Any

from transitions import Machine, State


class EnumNameState(State):
    """A ``transitions`` state whose name is read once."""

    def __init__(self, name: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(name, *args, **kwargs)
        self._plain_name = name.name if isinstance(name, enum.Enum) else name

    @property
    def name(self) -> str:
        return self._plain_name


class EnumMachine(Machine):
    """``transitions.Machine`` with :class:`EnumNameState`."""

    state_cls = EnumNameState
