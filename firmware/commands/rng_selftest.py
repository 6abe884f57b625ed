"""``egm rng selftest``: run the statistical battery (:mod:`firmware.rng.battery`) and report.

A command of the composition root (``firmware.commands``): the RNG below it knows nothing of
the command line.

Prints one line per test (name, P-value, proportion of passing sequences or the chi-square
figures, verdict) and the overall verdict last; ``--json`` prints the battery report as one
document instead. Exit status 0 when every test passes, 1 otherwise. A rich progress bar goes to
stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress, TaskID

from firmware.commands._common import emit_json, mechanism_option, positive_int

log = logging.getLogger(__name__)


def register(rng_sub: argparse._SubParsersAction) -> None:
    p = rng_sub.add_parser(
        "selftest", help="run the statistical battery (NIST SP 800-22 and card-dealing chi-squares)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--sequences", type=positive_int, default=100, metavar="M",
                   help="SP 800-22 sequences (default 100)")
    p.add_argument("--bits", type=positive_int, default=1_000_000, metavar="N",
                   help="bits per sequence, a multiple of 8, at least 128 (default 1,000,000)")
    p.add_argument("--scale", type=float, default=1.0, metavar="F",
                   help="scale the shuffle and draw sample sizes by F (default 1)")
    p.add_argument("--seed", metavar="S",
                   help="test a deterministic DRBG seeded from S instead of the production source")
    mechanism_option(p)
    p.set_defaults(func=_selftest)


def _selftest(args: argparse.Namespace) -> int:
    from firmware.rng.battery import BatteryConfig, run_battery
    from firmware.rng.service import RngService

    if not 0 < args.scale <= 100:
        print(f"egm rng selftest: --scale must be in (0, 100], not {args.scale}", file=sys.stderr)
        return 2
    try:
        config = BatteryConfig(sequences=args.sequences, bits=args.bits).scaled(args.scale)
    except ValueError as exc:
        print(f"egm rng selftest: {exc}", file=sys.stderr)
        return 2
    if args.seed is None:
        source = RngService.production(mechanism=args.mechanism)
    else:
        source = RngService.seeded(args.seed, mechanism=args.mechanism)
    log.info("RNG self-test: %d x %d bits, %s %s source", config.sequences, config.bits,
             "production" if args.seed is None else "seeded", args.mechanism)
    with _Progress() as progress:
        report = run_battery(source, config, progress)
    document = report.to_json()
    document["source"] = "production" if args.seed is None else "seeded"
    document["mechanism"] = args.mechanism
    if args.json:
        emit_json(document)
    else:
        _print(document)
    return 0 if report.passed else 1


def _print(doc: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(f"RNG self-test ({doc['source']} source) of {doc['mechanism']}: {doc['sequences']} x {doc['bits']:,} bits, "
              f"alpha {doc['alpha']}, {doc['min_passing_sequences']}/{doc['sequences']} "
              f"sequences must pass\n")
    for t in doc["tests"]:
        if t["family"] == "sp800-22":
            figures = f"{t['passing_sequences']:>4d}/{t['sequences']:<4d}"
        else:
            figures = f"chi2 {t['statistic']} dof {t['dof']} n {t['samples']:,}"
        retry = " (repeated)" if t["attempts"] > 1 else ""
        out.write(f"{t['name']:<26s} p={t['p_value']:.6f}  {figures:<36s} {t['verdict']}{retry}\n")
    out.write(f"{doc['verdict']} in {doc['seconds']:.1f} s\n")


class _Progress:
    """One rich progress bar per battery phase, on stderr when it is a terminal."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}

    def __enter__(self) -> Callable[[str, int, int], None] | None:
        if not sys.stderr.isatty():
            return None
        from rich.console import Console
        from rich.progress import Progress

        self._progress = Progress(console=Console(stderr=True), transient=True)
        self._progress.start()
        return self._update

    def _update(self, phase: str, done: int, total: int) -> None:
        progress = self._progress
        if progress is None:          # only __enter__ hands this out, once the bar is made
            return
        task = self._tasks.get(phase)
        if task is None:
            task = self._tasks[phase] = progress.add_task(phase, total=total)
        progress.update(task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
