"""The floor at scale (issue 27): the acceptance run and the fault run, both through the load test.

    .venv/bin/python -m benchmarks floor                       # both, in make bench's table
    .venv/bin/python -m benchmarks.bench_floor [--faults] [--terminals 1000] [--duration 300] [--rate 0.5]

Each is one ``egm host loadtest`` (firmware/commands/_loadtest/, docs/loadtest.md) on this
machine's own servers: a 3-node NATS JetStream cluster with TLS and client certificates
(``--cluster``), a PostgreSQL of its own with fsync on (``--postgres-local``) and two
``egm host serve`` workers consuming the stream as one group (``--workers 2``); 1,000 terminals,
each sending a report every 2 s for 5 minutes. The fault run adds ``--faults``: SIGKILL of a NATS
node (restarted 15 s later), SIGKILL of a host worker (started again), PostgreSQL stopped
(SIGSTOP) for 10 s. A run's whole JSON document is written to ``EGM_BENCH_FLOOR_DIR`` (default: the
system's temporary directory) as ``floor-acceptance.json`` / ``floor-faults.json``; the figures
below are taken from it. Without ``nats-server`` or PostgreSQL's binaries the figures are NaN and
the reason is printed. The acceptance: zero lost, zero duplicate, p99 seal-to-stored under 1 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

TERMINALS = 1000
RATE = 0.5
DURATION = 300.0
WORKERS = 2


def missing_servers() -> str | None:
    """Why the floor cannot run here (None: it can)."""
    from host.local.nats import find_nats_server
    from host.local.postgres import find_binaries

    if find_nats_server() is None:
        return "nats-server is not installed (apt-get install nats-server)"
    if find_binaries() is None:
        return "PostgreSQL's server binaries (initdb, postgres) are not installed"
    return None


def run(*, faults: bool, terminals: int = TERMINALS, rate: float = RATE, duration: float = DURATION,
        workers: int = WORKERS, drain: float = 120.0) -> dict[str, Any]:
    """One load test on the cluster, its own PostgreSQL and ``workers`` host workers: its document."""
    from firmware.commands._loadtest.report import Shown
    from firmware.commands._loadtest.run import Settings, default_processes, execute

    settings = Settings(terminals=terminals, rate=rate, duration=duration,
                        processes=default_processes(terminals), workers=workers, cluster=True,
                        postgres_local=True, drain_s=drain, faults=faults)
    shown = Shown(quiet=True)
    try:
        return execute(settings, shown)
    finally:
        shown.close()


def passed(doc: dict[str, Any], *, p99_limit_ms: float | None) -> bool:
    """The run's own check passed, nothing lost or twice, and (the acceptance) p99 under the limit."""
    ok = bool(doc["ok"]) and doc["lost"] == 0 and doc["duplicates"] == 0
    return ok and (p99_limit_ms is None or (doc["p99_ms"] is not None and doc["p99_ms"] < p99_limit_ms))


def cpu_by_kind(doc: dict[str, Any]) -> dict[str, float]:
    """CPU seconds of the run by process kind (host workers, simulators)."""
    kinds: dict[str, float] = {}
    for role, seconds in doc["cpu_s"].items():
        kind = role.split("-")[0]
        kinds[kind] = round(kinds.get(kind, 0.0) + seconds, 1)
    return kinds


_DOCS: dict[str, dict[str, Any] | None] = {}


def _doc(name: str) -> dict[str, Any] | None:
    if name not in _DOCS:
        why = missing_servers()
        if why is not None:
            print(f"floor {name}: not run: {why}", file=sys.stderr)
            _DOCS[name] = None
        else:
            doc = run(faults=name == "faults")
            out = Path(os.environ.get("EGM_BENCH_FLOOR_DIR", tempfile.gettempdir())) / f"floor-{name}.json"
            out.write_text(json.dumps(doc, indent=1, default=str))
            print(f"floor {name}: the whole document in {out}", file=sys.stderr)
            _DOCS[name] = doc
    return _DOCS[name]


def _figure(name: str, key: str, unit: str) -> Any:
    def measure() -> tuple[float, str]:
        found: Any = _doc(name)
        for part in key.split("."):
            found = None if found is None else found.get(part)
        return (math.nan if found is None else float(found)), unit
    return measure


def _verdict(name: str, p99_limit_ms: float | None) -> Any:
    def measure() -> tuple[float, str]:
        doc = _doc(name)
        return (math.nan if doc is None else float(passed(doc, p99_limit_ms=p99_limit_ms))), "1 = passed"
    return measure


_RUN = f"{TERMINALS} terminals x {RATE} reports/s x {DURATION:.0f} s, 3-node NATS cluster, PostgreSQL, {WORKERS} workers"
BENCHMARKS = [
    *[(f"floor acceptance: {label}, {_RUN}", _figure("acceptance", key, unit))
      for label, key, unit in (("reports stored", "stored", "reports"), ("lost", "lost", "reports"),
                               ("duplicates", "duplicates", "reports"),
                               ("throughput", "reports_per_second", "reports/s"),
                               ("p50 seal to stored", "p50_ms", "ms"), ("p99 seal to stored", "p99_ms", "ms"))],
    (f"floor acceptance: passed (nothing lost or twice, p99 < 1 s), {_RUN}", _verdict("acceptance", 1000.0)),
    *[(f"floor fault run: {label}, {_RUN}, node/worker SIGKILL + PostgreSQL SIGSTOP 10 s",
       _figure("faults", key, unit))
      for label, key, unit in (("reports stored", "stored", "reports"), ("lost", "lost", "reports"),
                               ("duplicates", "duplicates", "reports"), ("resends", "resends", "reports"),
                               ("p99 seal to stored", "p99_ms", "ms"), ("max seal to stored", "latency.max_ms", "ms"),
                               ("drain after the run", "timings.drain_s", "s"))],
    ("floor fault run: passed (every sequence complete, nothing twice, meters equal)", _verdict("faults", None)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", action="store_true", help="the fault run")
    parser.add_argument("--terminals", type=int, default=TERMINALS)
    parser.add_argument("--rate", type=float, default=RATE)
    parser.add_argument("--duration", type=float, default=DURATION)
    parser.add_argument("--workers", type=int, default=WORKERS)
    args = parser.parse_args()
    why = missing_servers()
    if why is not None:
        sys.exit(f"cannot run the floor: {why}")
    doc = run(faults=args.faults, terminals=args.terminals, rate=args.rate, duration=args.duration,
              workers=args.workers)
    keys = ("terminals", "sent", "stored", "lost", "duplicates", "reports_per_second", "p50_ms", "p99_ms", "ok",
            "problems", "resends", "rejected_as_replay", "timings", "faults")
    print(json.dumps({**{k: doc[k] for k in keys}, "cpu_by_kind": cpu_by_kind(doc), "cpu_s": doc["cpu_s"],
                      "latency_timeline": doc["latency_timeline"]}, indent=1, default=str))


if __name__ == "__main__":
    main()
