"""``egm diagram NAME``: a state machine as Graphviz dot (default) or Mermaid."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagram", help="write a state machine (cabinet, or a game id) as dot or Mermaid")
    p.add_argument("name", metavar="NAME", help="'cabinet' or a game id")
    p.add_argument("--format", choices=["dot", "mermaid"], default="dot", help="Graphviz dot (default) or Mermaid")
    p.add_argument("--out", help="file to write (default: stdout)")
    p.set_defaults(func=_diagram)


def _diagram(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from firmware.kernel.diagram import round_machine, to_dot, to_mermaid
    from firmware.kernel.states import RoundState

    if args.name == "cabinet":
        # The very table the cabinet runs on (firmware.cabinet.states.TRANSITIONS), guards in brackets.
        from firmware.cabinet.states import CabinetState, diagram_transitions

        drawn = diagram_transitions()
        if args.format == "dot":
            text = to_dot("cabinet", list(CabinetState), drawn, CabinetState.POWER_UP)
        else:
            text = to_mermaid(list(CabinetState), drawn, CabinetState.POWER_UP)
    else:
        from firmware.games.registry import get_game

        game = get_game(args.name)
        states, transitions = round_machine(game.has_decisions)
        if args.format == "dot":
            text = to_dot(f"{game.id} round", states, transitions, RoundState.BETTING, [RoundState.COMPLETE])
        else:
            text = to_mermaid(states, transitions, RoundState.BETTING, [RoundState.COMPLETE])
    if args.out:
        try:
            Path(args.out).write_text(text, "utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    else:
        sys.stdout.write(text)
    return 0
