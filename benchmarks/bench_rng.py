"""Throughput of the certified RNG: DRBG bytes, os.urandom for comparison, randbelow, shuffles."""

from __future__ import annotations

import os
from collections.abc import Callable

from benchmarks.timing import rate
from firmware.rng.service import RngService

#: Seconds each measurement runs for.
DURATION_S = 1.0
#: Bytes per request when measuring byte throughput.
REQUEST_BYTES = 64 * 1024
#: An 8-deck shoe.
SHOE_CARDS = 8 * 52


def _rate(step: Callable[[], None], work_per_step: int) -> float:
    """Work per second over :data:`DURATION_S`."""
    return rate(step, work_per_step, duration_s=DURATION_S)


def drbg_bytes() -> tuple[float, str]:
    rng = RngService.production()
    return _rate(lambda: rng.random_bytes(REQUEST_BYTES), REQUEST_BYTES), "bytes/s"


def urandom_bytes() -> tuple[float, str]:
    return _rate(lambda: os.urandom(REQUEST_BYTES), REQUEST_BYTES), "bytes/s"


def randbelow_416() -> tuple[float, str]:
    rng = RngService.production()
    randbelow = rng.randbelow
    batch = 10_000

    def step() -> None:
        for _ in range(batch):
            randbelow(SHOE_CARDS)

    return _rate(step, batch), "draws/s"


def shuffle_8_decks() -> tuple[float, str]:
    rng = RngService.production()
    shoe = list(range(SHOE_CARDS))
    return _rate(lambda: rng.shuffle(shoe), 1), "shuffles/s"


BENCHMARKS = [
    ("rng: HMAC_DRBG output via RngService.random_bytes (64 KiB requests)", drbg_bytes),
    ("rng: os.urandom (64 KiB requests), for comparison", urandom_bytes),
    ("rng: RngService.randbelow(416)", randbelow_416),
    ("rng: Fisher-Yates shuffle of an 8-deck shoe (416 cards)", shuffle_8_decks),
]
