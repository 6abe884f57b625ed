"""A state machine as one table of rows, for the terminal's parts and the voucher book.

A :class:`StateTable` is the whole machine: its states, where it starts and its rows ``(trigger,
sources, dest)``. The code that owns the state asks the table before every move
(:meth:`StateTable.move`), so a move the table does not hold raises and nothing happens, and
``egm diagram`` draws the same rows (:meth:`StateTable.drawn`, :mod:`firmware.kernel.diagram`).

``None`` in a row stands for "not in the machine": a source None is a thing that does not exist yet
(a voucher not in the book), a dest None is one that leaves it (another machine's voucher returned
to the player). A part whose state always exists (the bill validator, the rounds) has no None.

Two rows may share a trigger and a source with different destinations; each then says in ``when``
which case it is, and the caller names the destination it means (a voucher's returned redemption
goes back to the state it came from).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import NamedTuple

from firmware.errors import EgmError

#: A state of a table, or None: not in the machine (before it exists, after it leaves).
Node = enum.Enum | None

#: Stands for "whichever destination the table has" in :meth:`StateTable.move`.
_ANY = object()


class IllegalMove(EgmError):
    """A move the table does not hold: nothing changed."""


class Row(NamedTuple):
    trigger: str
    sources: tuple[Node, ...]
    dest: Node
    when: str | None = None            #: which case this row is, when a trigger has several from one state


#: How :mod:`firmware.kernel.diagram` takes a machine: (label, sources, dest) rows.
Drawn = list[tuple[str, tuple[Node, ...], Node]]


def node_name(node: Node) -> str:
    return "(none)" if node is None else node.name


class StateTable:
    """The states, the start and the rows of one machine, with the lookup its owner moves by.

    ``error`` is what an illegal move raises (the owner's own error type, which its callers already
    handle; :class:`IllegalMove` by default); ``final`` are the states drawn as ends.
    """

    def __init__(self, name: str, states: Iterable[enum.Enum], initial: Node, rows: Iterable[Row], *,
                 final: Iterable[enum.Enum] = (), error: type[EgmError] = IllegalMove) -> None:
        self.name = name
        self.states: tuple[enum.Enum, ...] = tuple(states)
        self.initial = initial
        self.rows: tuple[Row, ...] = tuple(rows)
        self.final: tuple[enum.Enum, ...] = tuple(final)
        self.error = error
        self.triggers: tuple[str, ...] = tuple(dict.fromkeys(row.trigger for row in self.rows))
        self._dests: dict[tuple[Node, str], tuple[Node, ...]] = {}
        for row in self.rows:
            for node in (*row.sources, row.dest):
                if node is not None and node not in self.states:
                    raise ValueError(f"{name}: row {row.trigger} names {node!r}, not one of its states")
            for source in row.sources:
                dests = self._dests.setdefault((source, row.trigger), ())
                if row.dest in dests:
                    raise ValueError(f"{name}: {row.trigger} from {node_name(source)} to "
                                     f"{node_name(row.dest)} twice")
                if dests and row.when is None:
                    raise ValueError(f"{name}: {row.trigger} from {node_name(source)} has several "
                                     "destinations: each row says when it applies")
                self._dests[(source, row.trigger)] = (*dests, row.dest)

    def allowed(self, state: Node) -> tuple[str, ...]:
        """The triggers the table accepts in ``state``, in table order."""
        return tuple(t for t in self.triggers if (state, t) in self._dests)

    def sources(self, trigger: str) -> tuple[Node, ...]:
        """The states ``trigger`` may leave, in table order."""
        return tuple(dict.fromkeys(s for row in self.rows if row.trigger == trigger for s in row.sources))

    def move(self, state: Node, trigger: str, dest: object = _ANY, *, what: str | None = None) -> Node:
        """Where ``trigger`` takes ``state`` (to ``dest`` when the caller names it); raises
        :attr:`error`, saying it of ``what`` (default: the machine's name), when the table has no
        such row, before anything is done."""
        what = what or self.name
        dests = self._dests.get((state, trigger))
        if dests is None:
            allowed = ", ".join(self.allowed(state)) or "nothing"
            raise self.error(f"{what}: {trigger} is not allowed in {node_name(state)} "
                             f"(allowed there: {allowed})")
        if dest is _ANY:
            if len(dests) > 1:
                raise ValueError(f"{self.name}: {trigger} from {node_name(state)} needs its destination named")
            return dests[0]
        for known in dests:
            if known is dest:
                return known
        shown = node_name(dest) if dest is None or isinstance(dest, enum.Enum) else repr(dest)
        raise self.error(f"{what}: {trigger} does not take {node_name(state)} to {shown} "
                         f"(only to {', '.join(node_name(d) for d in dests)})")

    def drawn(self) -> Drawn:
        """The rows as :mod:`firmware.kernel.diagram` draws them: each case in brackets."""
        return [(row.trigger if row.when is None else f"{row.trigger} [{row.when}]", row.sources, row.dest)
                for row in self.rows]
