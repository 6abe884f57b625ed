"""Throughput of the certified RNG: DRBG bytes by mechanism, os.urandom for comparison, randbelow,
shuffles.

The byte figures (issue 26, the lab's raw-output collection) are measured in the same run: each
mechanism through ``RngService.random_bytes`` in 64 KiB requests, CTR_DRBG also through the writer
of ``egm rng dump`` into /dev/null, and ``os.urandom``; the ratio lines repeat the measurement of
a mechanism and of ``os.urandom`` back to back, in alternating slices, and divide.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from benchmarks.timing import rate
from firmware.commands.rng import write_stream
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


#: Alternating slices per ratio measurement, and each slice's length in seconds.
RATIO_SLICES = 10
RATIO_SLICE_S = 0.1
#: Bytes one ``egm rng dump`` writer call sends to /dev/null.
DUMP_BYTES = 64 * 1024 * 1024


def _service_bytes(mechanism: str) -> Callable[[], tuple[float, str]]:
    def measure() -> tuple[float, str]:
        rng = RngService.production(mechanism=mechanism)
        return _rate(lambda: rng.random_bytes(REQUEST_BYTES), REQUEST_BYTES), "bytes/s"

    return measure


def urandom_bytes() -> tuple[float, str]:
    return _rate(lambda: os.urandom(REQUEST_BYTES), REQUEST_BYTES), "bytes/s"


def ctr_dump_to_devnull() -> tuple[float, str]:
    rng = RngService.production(mechanism="ctr-drbg")
    with open(os.devnull, "wb") as out:
        return _rate(lambda: write_stream(rng, DUMP_BYTES, out), DUMP_BYTES), "bytes/s"


def _ratio_to_urandom(mechanism: str) -> Callable[[], tuple[float, str]]:
    """Mechanism bytes/s divided by os.urandom bytes/s, both timed in alternating slices."""

    def measure() -> tuple[float, str]:
        rng = RngService.production(mechanism=mechanism)
        drbg_rate = urandom_rate = 0.0
        for _ in range(RATIO_SLICES):
            drbg_rate += rate(lambda: rng.random_bytes(REQUEST_BYTES), REQUEST_BYTES, duration_s=RATIO_SLICE_S)
            urandom_rate += rate(lambda: os.urandom(REQUEST_BYTES), REQUEST_BYTES, duration_s=RATIO_SLICE_S)
        return drbg_rate / urandom_rate, "x os.urandom"

    return measure


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
    ("rng: HMAC_DRBG output via RngService.random_bytes (64 KiB requests)", _service_bytes("hmac-drbg")),
    ("rng: CTR_DRBG output via RngService.random_bytes (64 KiB requests)", _service_bytes("ctr-drbg")),
    ("rng: CTR_DRBG through egm rng dump's writer into /dev/null (64 MiB per call)", ctr_dump_to_devnull),
    ("rng: os.urandom (64 KiB requests), for comparison", urandom_bytes),
    ("rng: CTR_DRBG / os.urandom bytes per second, alternating slices", _ratio_to_urandom("ctr-drbg")),
    ("rng: HMAC_DRBG / os.urandom bytes per second, alternating slices", _ratio_to_urandom("hmac-drbg")),
    ("rng: RngService.randbelow(416)", randbelow_416),
    ("rng: Fisher-Yates shuffle of an 8-deck shoe (416 cards)", shuffle_8_decks),
]
