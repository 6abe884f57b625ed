"""What one simulator process of the load test costs per report (issue 27): CPU milliseconds of the
process (user + system, from /proc) per report its terminals made.

    .venv/bin/python -m benchmarks simcpu                      # in make bench's table
    .venv/bin/python -m benchmarks.bench_simcpu [--terminals 60] [--rate 0.5] [--duration 40] [--repeat 2]

Each run is one ``egm host loadtest`` (docs/loadtest.md) with ONE simulator process
(``firmware/commands/_loadtest/worker.py``) of N terminals against the embedded broker and one
``egm host serve`` on SQLite. The load test samples every process's CPU when the terminals are told
to go and again once they have drained; the simulator's CPU over that window divided by the reports
its terminals made is the figure. The broker's and the host's are printed beside it. On a machine
shared with others the figures move with the load: compare two versions in the same window and
repeat.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

TERMINALS = 60
RATE = 0.5
DURATION = 40.0


def run(*, terminals: int = TERMINALS, rate: float = RATE, duration: float = DURATION,
        threads: int = 2) -> dict[str, Any]:
    """One load test with one simulator process; its figures (CPU ms per report by process kind)."""
    from firmware.commands._loadtest.report import Shown
    from firmware.commands._loadtest.run import Settings, execute

    settings = Settings(terminals=terminals, rate=rate, duration=duration, processes=1, threads=threads,
                        drain_s=30.0)
    shown = Shown(quiet=True)
    try:
        doc = execute(settings, shown)
    finally:
        shown.close()
    return figures(doc)


def figures(doc: dict[str, Any]) -> dict[str, Any]:
    """CPU ms per report made, per process of the load test's document (``sim-0``, ``host-0``, ...)."""
    made = doc["made_during_run"]
    per_report = {role: round(1000 * cpu / made, 3) if made else math.nan for role, cpu in doc["cpu_s"].items()}
    return {"terminals": doc["terminals"], "made": made, "ok": doc["ok"], "cpu_s": doc["cpu_s"],
            "cpu_ms_per_report": per_report, "sim_cpu_ms_per_report": per_report.get("sim-0", math.nan),
            "load_avg": doc["machine"]["load_avg"], "problems": doc["problems"]}


def _sim_ms() -> tuple[float, str]:
    return run()["sim_cpu_ms_per_report"], f"CPU ms per report, one simulator process of {TERMINALS} terminals"


BENCHMARKS = [
    (f"simcpu: one load-test simulator process, {TERMINALS} terminals at {RATE}/s", _sim_ms),
]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_simcpu", description=__doc__.split("\n\n")[0])
    p.add_argument("--terminals", type=int, default=TERMINALS)
    p.add_argument("--rate", type=float, default=RATE)
    p.add_argument("--duration", type=float, default=DURATION)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args(argv)
    if not 1 <= a.terminals <= 120:
        p.error(f"--terminals is 1..120 here (the machine is shared), not {a.terminals}")
    for _ in range(a.repeat):
        print(json.dumps(run(terminals=a.terminals, rate=a.rate, duration=a.duration, threads=a.threads)),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
