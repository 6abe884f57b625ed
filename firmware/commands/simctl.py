"""``egm simctl``: drive the simulators and the player's controls of a running terminal.

The terminal (``egm run --sim``) listens on ``<state-dir>/control.sock``; each ``simctl`` call is
one request. Simulator controls (what happens to the hardware)::

    note DOLLARS | bad-note | ticket VALIDATION | validator jam|stacker-full|stacker-removed|cheat|clear
    door open|close main|cash_box|logic | key audit|jackpot_reset on|off | button NAME
    paper out|out-mid-ticket|low|ok|load | printer jam|clear-jam|open|close|last | shoe misread|shuffle N|load CARDS|draw [N]
    touch X Y | power off|on DEVICE | unplug DEVICE | replug DEVICE
    rng entropy stuck|ok | rng reseed      (the RNG's entropy source: a forced failure, docs/rng.md)

A door opened while the cabinet was off is a start option: egm run --sim --sim-door-open DOOR.

The player's and the attendant's requests (what a touchscreen and a key would send)::

    status | play [SEAT:WAGER=AMOUNT ...] | decide SEAT ACTION | cashout | game GAME | bet CREDITS
    retry-ticket | handpay | wait STATE [--timeout S] [--rounds N] | stop

Service functions are ``egm simctl service ...`` (see ``egm simctl service help``).
"""

from __future__ import annotations

import argparse
from typing import Any

from firmware.commands._common import chosen_state_dir, emit_json, plain_text, state_dir_argument
from firmware.commands._tables import show
from firmware.errors import UsageError

#: simctl words -> the terminal's command and how its arguments are read.
TERMINAL_OPS = ("status", "play", "decide", "cashout", "game", "bet", "retry-ticket", "handpay", "wait",
                "stop", "service", "demo")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simctl", help="drive the simulated devices and controls of a running terminal",
                       description=plain_text(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter)
    state_dir_argument(p, "the running terminal's --state-dir (its control.sock)")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON document (default: tables)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds `wait` waits (default 10)")
    p.add_argument("--rounds", type=int, help="`wait`: until at least N rounds were played")
    p.add_argument("words", nargs="+", help="what to do (see above)")
    p.set_defaults(func=_simctl)


def parse_request(words: list[str], *, timeout: float = 10.0, rounds: int | None = None) -> tuple[str, dict[str, Any]]:
    """The control socket request for ``words`` (UsageError if they make none)."""
    verb, rest = words[0], words[1:]
    if verb not in TERMINAL_OPS:
        return "sim", {"words": words}
    if verb in ("status", "cashout", "retry-ticket", "handpay", "stop"):
        if rest:
            raise UsageError(f"{verb} takes no arguments")
        return {"retry-ticket": "retry_ticket", "handpay": "attendant_handpay"}.get(verb, verb), {}
    if verb == "play":
        wagers: dict[str, dict[str, int]] = {}
        for item in rest:
            seat, sep, bet = item.partition(":")
            name, eq, amount = bet.partition("=")
            if not (sep and eq and seat.isdigit() and amount.isdigit() and name):
                raise UsageError(f"a wager is SEAT:NAME=AMOUNT (e.g. 1:bac=10), not {item!r}")
            wagers.setdefault(seat, {})[name] = int(amount)
        return "play", ({"wagers": wagers} if wagers else {})
    if verb == "decide":
        if len(rest) != 2 or not rest[0].isdigit():
            raise UsageError("usage: decide SEAT ACTION")
        return "decide", {"seat": int(rest[0]), "action": rest[1]}
    if verb == "game":
        if len(rest) != 1:
            raise UsageError("usage: game GAME")
        return "game", {"game": rest[0]}
    if verb == "bet":
        if len(rest) != 1 or not rest[0].isdigit():
            raise UsageError("usage: bet CREDITS")
        return "bet", {"unit": int(rest[0])}
    if verb == "wait":
        if len(rest) > 1:
            raise UsageError("usage: wait [STATE] [--timeout S] [--rounds N]")
        args: dict[str, Any] = {"timeout": timeout}
        if rest:
            args["state"] = rest[0]
        if rounds is not None:
            args["rounds"] = rounds
        return "wait", args
    # service / demo: the words go to the service API
    return verb, {"words": rest}


def _simctl(args: argparse.Namespace) -> int:
    from firmware.cabinet.control import request
    from firmware.commands._common import checked_state_dir

    state = checked_state_dir(chosen_state_dir(args))
    op, req = parse_request(list(args.words), timeout=args.timeout, rounds=args.rounds)
    result = request(state, op, req, timeout=max(90.0, args.timeout + 5))
    if args.json:
        emit_json(result)
    elif result is not None:
        show(result)
    return 0
