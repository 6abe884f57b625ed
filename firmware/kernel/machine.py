"""The ``transitions`` machine class of the project's state machines (the round, the cabinet, the
terminal's parts), and :class:`TableMachine`, a part's one state driven by a machine built from a
:class:`~firmware.kernel.table.StateTable`.

:class:`EnumMachine` is stock ``transitions`` in every respect but one: a state reads its Enum member's name once. The
stock ``State.name`` resolves it on every access (about 24 times per round), which was a third of
the round machine's time. Tables, callbacks and their order stay the stock ones.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from transitions import EventData, Machine, State

from firmware.kernel.table import StateTable


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


class _Model:
    """What a :class:`TableMachine`'s ``transitions`` machine drives: only ``state``."""

    state: Any


class TableMachine:
    """One state driven by a ``transitions`` machine built from a :class:`StateTable` and nothing
    else (no auto transitions), for a part that owns one such state (the bill validator's, the
    rounds', the printer's).

    :meth:`fire` asks the table first: a trigger it does not hold in the current state raises the
    table's error and changes nothing. ``effect``, the device command the move stands for, runs
    once the move is known to be legal and before the state changes: if it raises, the state stays
    (the device did not do it).
    """

    def __init__(self, table: StateTable) -> None:
        if table.initial is None or any(None in row.sources or row.dest is None or row.when
                                        for row in table.rows):
            raise ValueError(f"{table.name}: a part's machine has one destination per trigger and state, "
                             "and no row in or out of the machine")
        self.table = table
        self._model = _Model()
        self._machine = EnumMachine(
            model=self._model,
            states=list(table.states),
            transitions=[{"trigger": row.trigger, "source": list(row.sources), "dest": row.dest}
                         for row in table.rows],
            initial=table.initial,
            auto_transitions=False,
            send_event=True,
            before_state_change=self._before,
        )

    @property
    def state(self) -> Any:
        return self._model.state

    def fire(self, trigger: str, effect: Callable[[], object] | None = None) -> None:
        self.table.move(self.state, trigger)
        self._machine.events[trigger].trigger(self._model, effect=effect)

    @staticmethod
    def _before(event: EventData) -> None:
        effect = event.kwargs.get("effect")
        if effect is not None:
            effect()
