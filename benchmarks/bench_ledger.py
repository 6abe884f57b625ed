"""Critical memory: durable rounds per second (every journal step committed with fsync to both
copies), and the time from start to a verified ledger holding 100,000 rounds."""

from __future__ import annotations

import os
import shutil
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


def verified_start() -> tuple[float, str]:
    path = Path(tempfile.mkdtemp(prefix="egm-bench-"))
    try:
        with Ledger.open(path) as ledger:
            ledger.bill_in(100_000_000)
            kernel, source = _kernel(ledger)
            done = 0
            while done < STORED_ROUNDS:
                with ledger.batch():
                    for _ in range(min(2000, STORED_ROUNDS - done)):
                        kernel.play(WAGERS, source, credits=ledger.credits)
                        done += 1
        start = time.perf_counter()
        with Ledger.open(path) as ledger:
            assert ledger.meters["games_played"] == STORED_ROUNDS and not ledger.repairs
        return time.perf_counter() - start, f"s to a verified ledger of {STORED_ROUNDS:,} rounds"
    finally:
        shutil.rmtree(path, ignore_errors=True)


BENCHMARKS = [
    ("ledger: durable rounds, baccarat-war bac+war", durable_rounds),
    ("ledger: start-up verification, both copies", verified_start),
]
