"""State machines drawn from the very tables they run on (for the certification file).

A state None (a row of a :class:`~firmware.kernel.table.StateTable` into or out of the machine)
is drawn as the start point when it is a source and as an end point when it is a destination.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from firmware.kernel.table import StateTable

#: (label, sources, dest) rows, as :meth:`StateTable.drawn` gives them.
Rows = Sequence[tuple[str, Sequence[enum.Enum | None], enum.Enum | None]]


def to_dot(name: str, states: Iterable[enum.Enum], transitions: Rows,
           initial: enum.Enum | None, final: Iterable[enum.Enum] = ()) -> str:
    finals = set(final)
    lines = [f'digraph "{name}" {{', "  rankdir=LR;", '  node [shape=box, style=rounded, fontname="Helvetica"];',
             '  __start [shape=point, label=""];']
    if initial is not None:
        lines.append(f"  __start -> {initial.name};")
    if any(dest is None for _, _, dest in transitions):
        lines.append('  __end [shape=doublecircle, label="", width=0.15];')
    for state in states:
        shape = ", peripheries=2" if state in finals else ""
        lines.append(f'  {state.name} [label="{state.name}"{shape}];')
    for trigger, sources, dest in transitions:
        for src in sources:
            lines.append(f'  {_dot_node(src, "__start")} -> {_dot_node(dest, "__end")} [label="{trigger}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_node(state: enum.Enum | None, outside: str) -> str:
    return outside if state is None else state.name


def to_mermaid(states: Iterable[enum.Enum], transitions: Rows,
               initial: enum.Enum | None, final: Iterable[enum.Enum] = ()) -> str:
    lines = ["stateDiagram-v2"]
    if initial is not None:
        lines.append(f"    [*] --> {initial.name}")
    for trigger, sources, dest in transitions:
        for src in sources:
            lines.append(f"    {_mermaid_node(src)} --> {_mermaid_node(dest)}: {trigger}")
    for state in final:
        lines.append(f"    {state.name} --> [*]")
    return "\n".join(lines) + "\n"


def _mermaid_node(state: enum.Enum | None) -> str:
    return "[*]" if state is None else state.name


def draw_table(table: StateTable, fmt: str) -> str:
    """``table`` as Graphviz dot (``fmt`` "dot") or Mermaid: every row, as the code moves by it."""
    if fmt == "dot":
        return to_dot(table.name, table.states, table.drawn(), table.initial, table.final)
    return to_mermaid(table.states, table.drawn(), table.initial, table.final)


def round_machine(game_has_decisions: bool) -> tuple[list[enum.Enum], list[tuple[str, tuple[enum.Enum, ...], enum.Enum]]]:
    """The round machine as a game uses it: without decisions, DECISIONS is never entered."""
    from firmware.kernel.states import TRANSITIONS, RoundState

    transitions: list[tuple[str, tuple[enum.Enum, ...], enum.Enum]]
    if game_has_decisions:
        transitions = list(TRANSITIONS)
        return list(RoundState), transitions
    transitions = []
    for trigger, sources, dest in TRANSITIONS:
        if RoundState.DECISIONS is dest:
            continue
        kept = tuple(s for s in sources if s is not RoundState.DECISIONS)
        transitions.append((trigger, kept, dest))
    return [s for s in RoundState if s is not RoundState.DECISIONS], transitions
