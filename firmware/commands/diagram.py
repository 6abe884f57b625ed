"""``egm diagram NAME``: a state machine as Graphviz dot (default) or Mermaid."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

#: The terminal's table machines by name: the module and the table the code moves by.
TABLES: dict[str, str] = {
    "money-in": "firmware.cabinet.money_in:VALIDATOR_TABLE",
    "cash-out": "firmware.cabinet.cashout:PRINTING_TABLE",
    "rounds": "firmware.cabinet.rounds:ACTIVITY_TABLE",
    "vouchers": "firmware.cashless.voucher_states:VOUCHER_TABLE",
    "live-table": "firmware.table.phases:TABLE_PHASES",
}
#: Every machine name but the games'.
MACHINES: tuple[str, ...] = ("cabinet", *TABLES)


def register(sub: argparse._SubParsersAction) -> None:
    from firmware.games.registry import GAMES

    p = sub.add_parser("diagram", help=f"write a state machine ({', '.join(MACHINES)}, or a game id) "
                                       "as dot or Mermaid")
    p.add_argument("name", metavar="NAME", help=f"{', '.join(MACHINES)}, or a game id for the round machine "
                                                f"as that game runs it ({', '.join(GAMES)})")
    p.add_argument("--format", choices=["dot", "mermaid"], default="dot", help="Graphviz dot (default) or Mermaid")
    p.add_argument("--out", help="file to write (default: stdout)")
    p.set_defaults(func=_diagram)


def _diagram(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from firmware.kernel.diagram import draw_table, round_machine, to_dot, to_mermaid
    from firmware.kernel.states import RoundState

    if args.name == "cabinet":
        # The very table the cabinet runs on (firmware.cabinet.states.TRANSITIONS), guards in brackets.
        from firmware.cabinet.states import CabinetState, diagram_transitions

        drawn = diagram_transitions()
        if args.format == "dot":
            text = to_dot("cabinet", list(CabinetState), drawn, CabinetState.POWER_UP)
        else:
            text = to_mermaid(list(CabinetState), drawn, CabinetState.POWER_UP)
    elif args.name in TABLES:
        module, _, attr = TABLES[args.name].partition(":")
        text = draw_table(getattr(importlib.import_module(module), attr), args.format)
    else:
        from firmware.games.registry import GAMES, get_game

        if args.name not in GAMES:
            raise UsageError(f"no state machine {args.name!r}: the machines are {', '.join(MACHINES)}, "
                             f"and each game's round ({', '.join(GAMES)})")
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
