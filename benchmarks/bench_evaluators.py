"""Throughput of the hand evaluators: scalar and numpy batch forms, on fixed random hands."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from benchmarks.timing import rate
from firmware.cards.poker3 import eval3, eval3_batch
from firmware.cards.poker5 import eval5, eval5_batch, eval7, eval7_batch

#: Seconds each measurement runs for.
DURATION_S = 1.0
#: Hands per scalar step / rows per batch call.
SCALAR_HANDS = 20_000
BATCH_ROWS = 1_000_000


def _rate(step: Callable[[], None], work_per_step: int) -> float:
    """Work per second over :data:`DURATION_S`, after a warm-up call (caches, page faults)."""
    return rate(step, work_per_step, duration_s=DURATION_S, warm_up=True)


def _hands(n_cards: int, count: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    return [tuple(rng.sample(range(52), n_cards)) for _ in range(count)]


def _array(n_cards: int, rows: int, seed: int) -> np.ndarray:
    """Rows of distinct cards: the first ``n_cards`` columns of random permutations of the deck."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((rows, 52)), axis=1)[:, :n_cards].astype(np.int8)


def _scalar(fn: Callable[[tuple[int, ...]], int], n_cards: int) -> tuple[float, str]:
    hands = _hands(n_cards, SCALAR_HANDS, seed=n_cards)

    def step() -> None:
        for h in hands:
            fn(h)

    return _rate(step, len(hands)), "evaluations/s"


def _batch(fn: Callable[[np.ndarray], np.ndarray], n_cards: int) -> tuple[float, str]:
    arr = _array(n_cards, BATCH_ROWS, seed=n_cards)
    return _rate(lambda: fn(arr), len(arr)), "evaluations/s"


def eval5_scalar() -> tuple[float, str]:
    return _scalar(eval5, 5)


def eval5_numpy() -> tuple[float, str]:
    return _batch(eval5_batch, 5)


def eval7_scalar() -> tuple[float, str]:
    return _scalar(eval7, 7)


def eval7_numpy() -> tuple[float, str]:
    return _batch(eval7_batch, 7)


def eval3_scalar() -> tuple[float, str]:
    return _scalar(eval3, 3)


def eval3_numpy() -> tuple[float, str]:
    return _batch(eval3_batch, 3)


BENCHMARKS = [
    ("evaluators: eval5 scalar (5-card poker strength)", eval5_scalar),
    ("evaluators: eval5_batch numpy (1M-row arrays)", eval5_numpy),
    ("evaluators: eval7 scalar (best 5 of 7, direct)", eval7_scalar),
    ("evaluators: eval7_batch numpy (1M-row arrays)", eval7_numpy),
    ("evaluators: eval3 scalar (3-card poker)", eval3_scalar),
    ("evaluators: eval3_batch numpy (1M-row arrays)", eval3_numpy),
]
