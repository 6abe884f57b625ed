"""State machines drawn from the very tables they run on (for the certification file)."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence


def to_dot(name: str, states: Iterable[enum.Enum], transitions: Sequence[tuple[str, Sequence[enum.Enum], enum.Enum]],
           initial: enum.Enum, final: Iterable[enum.Enum] = ()) -> str:
    finals = set(final)
    lines = [f'digraph "{name}" {{', "  rankdir=LR;", '  node [shape=box, style=rounded, fontname="Helvetica"];',
             '  __start [shape=point, label=""];', f"  __start -> {initial.name};"]
    for state in states:
        shape = ", peripheries=2" if state in finals else ""
        lines.append(f'  {state.name} [label="{state.name}"{shape}];')
    for trigger, sources, dest in transitions:
        for src in sources:
            lines.append(f'  {src.name} -> {dest.name} [label="{trigger}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(states: Iterable[enum.Enum], transitions: Sequence[tuple[str, Sequence[enum.Enum], enum.Enum]],
               initial: enum.Enum, final: Iterable[enum.Enum] = ()) -> str:
    lines = ["stateDiagram-v2", f"    [*] --> {initial.name}"]
    for trigger, sources, dest in transitions:
        for src in sources:
            lines.append(f"    {src.name} --> {dest.name}: {trigger}")
    for state in final:
        lines.append(f"    {state.name} --> [*]")
    return "\n".join(lines) + "\n"


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
