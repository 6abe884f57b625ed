"""``egm meters``, ``egm recall``, ``egm events`` and ``egm ledger verify|clear``: critical memory.

Reading commands open critical memory read-only (a running terminal is the one writer): they verify
both copies and report, but repair nothing. ``meters``, ``recall`` and ``events`` answer from the
verified log and warn on stderr, one line per problem, naming the damaged copy and what
``egm ledger verify --repair`` would do (exit 0: the answer is right); ``ledger verify`` lists the
problems on stdout and exits 1 until they are repaired.
"""

from __future__ import annotations

import argparse
import sys

from firmware.commands._common import (
    checked_state_dir,
    chosen_state_dir,
    emit_json,
    non_negative_int,
    state_dir_argument,
)
from firmware.commands._tables import show


def register(sub: argparse._SubParsersAction) -> None:
    m = sub.add_parser("meters", help="every meter and the credit balance, from critical memory")
    _state(m)
    m.set_defaults(func=_meters)

    r = sub.add_parser("recall", help="the last rounds, newest first (game recall)")
    _state(r)
    r.add_argument("--last", type=non_negative_int, default=10, help="how many rounds (default 10)")
    r.set_defaults(func=_recall)

    e = sub.add_parser("events", help="the event log, newest first")
    _state(e)
    e.add_argument("--last", type=non_negative_int, default=50, help="how many events (default 50)")
    e.set_defaults(func=_events)

    led = sub.add_parser("ledger", help="verify or clear critical memory")
    lsub = led.add_subparsers(dest="ledger_command", metavar="ACTION")
    lsub.required = True
    v = lsub.add_parser("verify", help="verify both copies; repair one from the other with --repair")
    _state(v)
    v.add_argument("--repair", action="store_true", help="repair a bad copy (the terminal must be stopped)")
    v.add_argument("--full", action="store_true",
                   help="every record and page of both copies (start-up checks what follows the last checkpoint)")
    v.set_defaults(func=_verify)
    c = lsub.add_parser("clear", help="RAM clear: erase critical memory, keeping the record of the clear")
    state_dir_argument(c)
    c.add_argument("--role", required=True, help="who clears (technician)")
    c.add_argument("--reason", required=True, help="why, in words: kept in the record of the clear")
    c.add_argument("--yes", action="store_true", help="confirm: every meter and all history are erased")
    c.add_argument("--denomination", type=int, default=1, help="cents per credit of the new memory")
    c.set_defaults(func=_clear)


def _state(p: argparse.ArgumentParser) -> None:
    state_dir_argument(p)
    p.add_argument("--json", action="store_true", help="print one JSON document (CONTRACTS.md) instead of a table")


def _open(args: argparse.Namespace, *, read_only: bool = True, warn: bool = True, full: bool = False):
    """Critical memory in ``--state-dir``; with ``warn``, a line on stderr for each damaged copy."""
    from firmware.ledger.ledger import Ledger

    ledger = Ledger.open(checked_state_dir(chosen_state_dir(args), write=not read_only), read_only=read_only,
                         full=full)
    if warn:
        for problem in ledger.repairs:
            print(f"egm {args.command}: warning: critical memory: {problem}", file=sys.stderr)
    return ledger


def _meters(args: argparse.Namespace) -> int:
    with _open(args) as ledger:
        doc = ledger.meters_report()
    if args.json:
        emit_json(doc)
    else:
        show(doc)
    return 0


def _recall(args: argparse.Namespace) -> int:
    with _open(args) as ledger:
        rounds = ledger.recall(args.last)
    if args.json:
        emit_json(rounds)
    else:
        rows = [{"round": r["round_id"] if "table" in r else r["round_id"][:12], "game": r["game"], "time": r.get("time", "-"),
                 "status": r["status"].replace("_", " "), "net": r.get("net"),
                 "credits before": r.get("credits_before"), "credits after": r.get("credits_after")}
                for r in rounds]
        show(rows, f"last {len(rows)} round(s), newest first (egm recall --json: the whole records)")
    return 0


def _events(args: argparse.Namespace) -> int:
    with _open(args) as ledger:
        events = ledger.events(args.last)
    if args.json:
        emit_json(events)
    else:
        show([{"seq": e["seq"], "time": e["time"], "event": e["event"],
               **{k: v for k, v in e.items() if k not in ("seq", "time", "event")}} for e in events],
             f"last {len(events)} event(s), newest first")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from firmware.ledger.ledger import accounting_difference

    with _open(args, read_only=not args.repair, warn=False, full=args.full) as ledger:
        doc = {"ok": (not ledger.repairs or args.repair) and not ledger.locked, "records": ledger.rows,
               "full": args.full, "problems": ledger.repairs, "locked": ledger.locked,
               "repaired": bool(args.repair and ledger.repairs),
               "accounting_difference_cents": accounting_difference(ledger.meters),
               "round_in_progress": ledger.open_round.round_id if ledger.open_round else None}
    if args.json:
        emit_json(doc)
    else:
        # "in both copies" only when both are whole: with problems, one of them is not (yet).
        where = "" if doc["problems"] else " in both copies"
        what = f"records verified{where}" if args.full else \
            f"records; verified{where} from the last checkpoint on (--full: every record)"
        sys.stdout.write(f"{doc['records']} {what}\n")
        for p in doc["problems"]:
            sys.stdout.write(f"  {'repaired' if args.repair else 'needs repair'}: {p}\n")
        if doc["locked"]:
            sys.stdout.write(f"  LOCKED: {doc['locked']}\n")
        sys.stdout.write(f"accounting difference: {doc['accounting_difference_cents']} cents\n")
    return 0 if doc["ok"] and doc["accounting_difference_cents"] == 0 else 1


def _clear(args: argparse.Namespace) -> int:
    from firmware.errors import UsageError
    from firmware.ledger.ledger import Ledger

    if not args.yes:
        raise UsageError("a RAM clear erases every meter and all history: add --yes to confirm")
    with Ledger.ram_clear(checked_state_dir(chosen_state_dir(args), create=True), role=args.role, reason=args.reason,
                          denomination=args.denomination) as ledger:
        sys.stdout.write(f"critical memory cleared; event {ledger.rows} records the clear\n")
    return 0
