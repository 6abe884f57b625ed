"""War-family PAR sheets and Monte Carlo throughput.

- seconds for the exact one-seat sheets of Baccarat War and Blackjack War (default options: the
  13^4 initial rank tuples, the war recursion to 30 steps, FOUR_CARD over C(416, 4) hands);
- Monte Carlo rounds per second per process through the real kernel (one process, so the figure
  is per core; ``egm par`` runs one process per core).
"""

from __future__ import annotations

import os
import statistics
import time

from firmware.games.registry import get_game, make_options
from firmware.math import montecarlo, war

RUNS = int(os.environ.get("EGM_BENCH_PAR_WAR_RUNS", "3"))
MC_ROUNDS = int(os.environ.get("EGM_BENCH_PAR_MC_ROUNDS", "20000"))


def _exact(game_id: str) -> tuple[float, str]:
    samples = []
    for _ in range(RUNS):
        war.tie_run_numerators.cache_clear()
        options = make_options(game_id, {})
        start = time.perf_counter()
        sheet = war.par_sheet(get_game(game_id), options)
        samples.append(time.perf_counter() - start)
    assert sheet.wagers["bac"].rtp == 1
    return statistics.median(samples), f"s, exact one-seat sheet (median of {RUNS}, caches cleared)"


def _monte_carlo(game_id: str) -> tuple[float, str]:
    options = make_options(game_id, {})
    result = montecarlo.run(game_id, options, MC_ROUNDS, seed="bench", processes=1,
                            chunk_rounds=MC_ROUNDS)
    return MC_ROUNDS / result.elapsed, f"rounds/s per core, Monte Carlo through the kernel ({MC_ROUNDS:,} rounds)"


BENCHMARKS = [
    ("par_war: exact Baccarat War PAR sheet", lambda: _exact("baccarat-war")),
    ("par_war: exact Blackjack War PAR sheet", lambda: _exact("blackjack-war")),
    ("par_mc: baccarat-war, all wagers", lambda: _monte_carlo("baccarat-war")),
    ("par_mc: holdem-war, all wagers", lambda: _monte_carlo("holdem-war")),
    ("par_mc: split21-stud, all wagers", lambda: _monte_carlo("split21-stud")),
    ("par_mc: three-card-poker, all wagers", lambda: _monte_carlo("three-card-poker")),
]
