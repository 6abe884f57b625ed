"""Run every benchmark module and print a figure table (markdown) for docs/benchmarks.md.

Each ``benchmarks/bench_*.py`` module exposes ``BENCHMARKS``: a list of ``(name, function)``;
the function runs the measurement itself and returns ``(value, unit)``, e.g.
``(1.2e6, "evaluations/s")``. Usage: ``python -m benchmarks [NAME-SUBSTRING ...]``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import platform
import sys
import time

import benchmarks


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def main(argv: list[str]) -> int:
    wanted = [a.lower() for a in argv]
    print(f"machine: {machine()}")
    print(f"date: {time.strftime('%Y-%m-%d')}")
    print()
    print("| benchmark | figure | unit |")
    print("|---|---:|---|")
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for name, fn in module.BENCHMARKS:
            if wanted and not any(w in name.lower() for w in wanted):
                continue
            value, unit = fn()
            shown = f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"
            print(f"| {name} | {shown} | {unit} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
