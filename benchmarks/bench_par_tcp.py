"""Time of the exact Three Card Poker PAR sheet (firmware/math/three_card_poker.py): wall-clock
seconds, the best of a few runs (the first run also pays numpy's and the tables' warm-up)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from firmware.games.registry import make_options
from firmware.math.three_card_poker import ante_play_par, ante_play_table, pair_plus_par, par_sheet

GAME = "three-card-poker"
#: Runs per measurement; the fastest is reported.
RUNS = 3


def _best(fn: Callable[[], Any], runs: int = RUNS) -> tuple[float, str]:
    fn()  # warm-up
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best, "s"


def _ante_play_default() -> tuple[float, str]:
    options = make_options(GAME, {})
    return _best(lambda: ante_play_par(ante_play_table(options)))


def _sheet_default() -> tuple[float, str]:
    options = make_options(GAME, {})
    return _best(lambda: par_sheet(options))


def _pair_plus() -> tuple[float, str]:
    options = make_options(GAME, {})
    return _best(lambda: pair_plus_par(options))


def _ante_play_four() -> tuple[float, str]:
    options = make_options(GAME, {"dealer_cards": 4})
    return _best(lambda: ante_play_par(ante_play_table(options)), runs=1)


def _six_card() -> tuple[float, str]:
    options = make_options(GAME, {"six_card": True})
    return _best(lambda: par_sheet(options), runs=1)


BENCHMARKS = [
    ("par_tcp: exact ANTE/PLAY, default rules (407,170,400 deals, strategy derived)", _ante_play_default),
    ("par_tcp: exact PAIR PLUS (22,100 hands)", _pair_plus),
    ("par_tcp: whole default sheet (ANTE/PLAY + PAIR PLUS)", _sheet_default),
    ("par_tcp: exact ANTE/PLAY, dealer_cards = 4 (4,682,459,600 deals)", _ante_play_four),
    ("par_tcp: whole sheet with SIX CARD (20,358,520 six-card sets)", _six_card),
]
