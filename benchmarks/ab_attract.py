"""Start to attract of two checkouts, measured interleaved (not a ``make bench`` entry).

    .venv/bin/python -m benchmarks.ab_attract BEFORE_TREE AFTER_TREE [RUNS]

``egm run --sim --headless --state-dir NEW`` as a new process, run from each tree in turn (its
``PYTHONPATH``), timed to IDLE on the control socket as ``bench_terminal.py`` does; the trees
alternate run by run so both see the same machine. Prints the median, minimum and maximum of each
and the ratio of the medians (docs/benchmarks.md, "Start to attract, fixed"). Make a checkout of an
older commit with ``git worktree add --detach DIR COMMIT``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from firmware.cabinet.control import ControlError, request


def attract_seconds(tree: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--state-dir", tmp],
                                cwd=tree, env={**os.environ, "PYTHONPATH": tree},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    if request(tmp, "status", timeout=5).get("state") == "IDLE":
                        break
                except ControlError:
                    pass
                if proc.poll() is not None:
                    raise RuntimeError(f"egm run from {tree} exited before attract")
                time.sleep(0.005)
            elapsed = time.perf_counter() - started
            request(tmp, "stop")
            proc.wait(timeout=30)
            return elapsed
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    trees = {"before": argv[0], "after": argv[1]}
    runs = int(argv[2]) if len(argv) == 3 else 12
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            times[name].append(attract_seconds(tree))
    for name, values in times.items():
        print(f"{name} ({trees[name]}): median {statistics.median(values) * 1000:.0f} ms, "
              f"min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f} (n={len(values)})")
    print(f"after / before (medians): {statistics.median(times['after']) / statistics.median(times['before']):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
