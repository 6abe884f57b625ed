"""Critical memory: durable rounds per second (every journal step committed with fsync to both
copies), and start-up (``Ledger.open``, ``egm ledger verify``) with ``EGM_BENCH_STORED_ROUNDS``
stored rounds (default 100,000; the goal holds at 1,000,000) over the same with none, as a ratio."""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from firmware.cards.source import RngShoe
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService

WAGERS = {1: {"bac": 10, "war": 10}}
STORED_ROUNDS = int(os.environ.get("EGM_BENCH_STORED_ROUNDS", "100000"))


def _kernel(ledger: Ledger) -> tuple[RoundKernel, RngShoe]:
    game = get_game("baccarat-war")
    options = make_options(game.id)
    return RoundKernel(game, options, journal=ledger), RngShoe(RngService.seeded(1), game.shoe(options))


def durable_rounds() -> tuple[float, str]:
    path = Path(tempfile.mkdtemp(prefix="egm-bench-"))
    try:
        with Ledger.open(path) as ledger:
            ledger.bill_in(10_000_000)
            kernel, source = _kernel(ledger)
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < 3.0:
                kernel.play(WAGERS, source, credits=ledger.credits)
                n += 1
            return n / (time.perf_counter() - start), "durable rounds/s (fsync, both copies)"
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _round_records() -> list[tuple[str, str | None, dict]]:
    """The records of one real round (deal to complete), as the ledger committed them."""
    path = Path(tempfile.mkdtemp(prefix="egm-bench-"))
    try:
        with Ledger.open(path) as ledger:
            ledger.bill_in(100_000)
            kernel, source = _kernel(ledger)
            first = ledger.rows + 1
            kernel.play(WAGERS, source, credits=ledger.credits)
            return [(r["kind"], r["ref"], r["body"]) for r in
                    (ledger.log_record(seq) for seq in range(first, ledger.rows + 1))]
    finally:
        shutil.rmtree(path, ignore_errors=True)


def build(path: Path, rounds: int) -> int:
    """A ledger holding ``rounds`` rounds, written through the store in big batches (one
    transaction per copy per batch) instead of round by round: minutes instead of hours."""
    with Ledger.open(path) as ledger:
        ledger.bill_in(10 * rounds * 20 + 100_000)
    template = _round_records()
    with Ledger.open(path) as ledger:
        store = ledger._store
        batch: list = []
        for n in range(rounds):
            round_id = f"bench-{n:09d}"
            for kind, _ref, body in template:
                batch.append((kind, round_id, "2026-01-01T00:00:00.000Z", {**body, "round_id": round_id}))
            if len(batch) >= 20_000 or n == rounds - 1:
                store.append(batch, {})
                batch = []
    # The first start-up after the import verifies it whole and writes the first checkpoint, as a
    # terminal's does after an upgrade; the cabinet's own writes keep them coming from then on.
    with Ledger.open(path, full=True) as ledger:
        assert ledger.meters.get("games_played", 0) == rounds, ledger.meters.get("games_played")
        # The worst case for start-up, the same with or without history: a whole interval of
        # records after the newest checkpoint (or, with no history, no checkpoint yet).
        ledger._store.append([("event", None, "2026-01-01T00:00:00.000Z", {"event": "bench_filler"})]
                             * (Ledger.CHECKPOINT_EVERY - 1 - (ledger.rows if not rounds else 0)), {})
        return ledger.rows


def _timed(fn, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _open(path: Path, **kwargs) -> None:
    with Ledger.open(path, **kwargs):
        pass


_OPEN: dict[str, float] = {}


def open_times() -> dict[str, float]:
    """Start-up (``Ledger.open`` with repair, as ``egm run``) and ``egm ledger verify`` (read-only)
    on a ledger with 0 rounds and one with ``STORED_ROUNDS``, medians of 5."""
    if not _OPEN:
        root = Path(tempfile.mkdtemp(prefix="egm-bench-"))
        try:
            for label, rounds in (("0", 0), ("N", STORED_ROUNDS)):
                build(root / label, rounds)
                _OPEN[f"open {label}"] = _timed(lambda p=root / label: _open(p))
                _OPEN[f"verify {label}"] = _timed(lambda p=root / label: _open(p, read_only=True))
            _OPEN["full N"] = _timed(lambda: _open(root / "N", read_only=True, full=True), runs=1)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return _OPEN


def open_ratio() -> tuple[float, str]:
    t = open_times()
    return t["open N"] / t["open 0"], (f"x: Ledger.open with {STORED_ROUNDS:,} stored rounds over 0 rounds "
                                        f"({t['open N'] * 1000:.1f} ms / {t['open 0'] * 1000:.1f} ms)")


def verify_ratio() -> tuple[float, str]:
    t = open_times()
    return t["verify N"] / t["verify 0"], (f"x: egm ledger verify (read-only) with {STORED_ROUNDS:,} rounds over 0 "
                                            f"({t['verify N'] * 1000:.1f} ms / {t['verify 0'] * 1000:.1f} ms)")


def full_verify() -> tuple[float, str]:
    return open_times()["full N"], f"s: egm ledger verify --full, {STORED_ROUNDS:,} rounds (every record and page)"


BENCHMARKS = [
    ("ledger: durable rounds, baccarat-war bac+war", durable_rounds),
    ("ledger: start-up with history / without", open_ratio),
    ("ledger: verify with history / without", verify_ratio),
    ("ledger: full verification", full_verify),
]
