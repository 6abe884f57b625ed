"""``egm host loadtest``: its options, and the exit status (docs/loadtest.md, docs/cli.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from firmware.commands._common import emit_json

#: the exit status when the check found something lost, twice or wrong (a usage error is 2)
FAILED = 1


def add_parser(hsub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = hsub.add_parser("loadtest", help="a floor of simulated terminals against the real host; checks "
                                         "every report stored exactly once")
    p.add_argument("--terminals", type=int, required=True, metavar="N", help="how many terminals")
    p.add_argument("--rate", type=float, required=True, metavar="R", help="reports per second per terminal")
    p.add_argument("--duration", type=float, required=True, metavar="S", help="seconds of reports")
    p.add_argument("--db", help="the host's database URL (default: SQLite in the run's state directory)")
    p.add_argument("--processes", type=int, metavar="P", help="simulator processes (default: 4, or more so that none runs more than 60 terminals)")
    p.add_argument("--threads", type=int, default=2, help="threads per simulator process (default 2)")
    p.add_argument("--broker", default="embedded", metavar="embedded|URL",
                   help="the embedded broker in a process of its own (default), or a broker's mqtts:// URL "
                        "that accepts the run's certificates")
    p.add_argument("--workers", type=int, default=1, metavar="K", help="host processes (egm host serve), default 1")
    p.add_argument("--cluster", action="store_true", help="a 3-node NATS JetStream cluster; the host workers "
                                                         "consume it as a group (--jetstream)")
    p.add_argument("--postgres-local", action="store_true", help="start a PostgreSQL of the run's own")
    p.add_argument("--faults", action="store_true",
                   help="during the run: SIGKILL a broker node (restarted 15 s later), SIGKILL a host worker "
                        "(started again), SIGSTOP PostgreSQL for 10 s (needs --cluster --postgres-local)")
    p.add_argument("--seed", type=int, default=1, help="the simulated players' seed (default 1)")
    p.add_argument("--drain", type=float, default=60.0, metavar="S",
                   help="at most this long to wait for every report's acknowledgement at the end (default 60)")
    p.add_argument("--commanded", type=int, metavar="C",
                   help="terminals that get disable, send_meters and enable during the run (default N/20, 1..10)")
    p.add_argument("--keep", type=Path, metavar="DIR", help="copy the run's state (PKI, databases, logs) here")
    p.add_argument("--drop-stored", type=int, default=0, metavar="N",
                   help="test the check: delete N stored reports before checking (the run must then fail)")
    p.add_argument("--json", action="store_true", help="print one JSON document (for machines) instead of text for people")
    p.set_defaults(func=_loadtest)


def _loadtest(args: argparse.Namespace) -> int:
    from rich.console import Console

    from firmware.commands._loadtest.report import Shown, table
    from firmware.commands._loadtest.run import Settings, default_processes, execute

    settings = Settings(terminals=args.terminals, rate=args.rate, duration=args.duration,
                        processes=args.processes or default_processes(args.terminals), threads=args.threads,
                        workers=args.workers, broker=args.broker, db=args.db, seed=args.seed, drain_s=args.drain,
                        commanded=args.commanded, cluster=args.cluster, postgres_local=args.postgres_local,
                        keep=args.keep, drop_stored=args.drop_stored, faults=args.faults)
    shown = Shown(quiet=args.json or not sys.stderr.isatty())
    try:
        doc = execute(settings, shown)
    finally:
        shown.close()
    if args.json:
        emit_json(doc)
    else:
        Console().print(table(doc))
    return 0 if doc["ok"] and not doc["lost"] and not doc["duplicates"] else FAILED
