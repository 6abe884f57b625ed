"""What the device-link benchmarks share: time back-to-back calls, and the figures of the samples.

Not a benchmark module itself (``python -m benchmarks`` runs the ``bench_*`` ones).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def repeat(call: Callable[[], object], n: int) -> None:
    """``call()`` ``n`` times, untimed (a warm-up)."""
    for _ in range(n):
        call()


def time_each_us(call: Callable[[], object], n: int) -> tuple[float, ...]:
    """``call()`` ``n`` times back to back; how long each took, in µs."""
    samples = []
    clock = time.perf_counter_ns
    for _ in range(n):
        start = clock()
        call()
        samples.append((clock() - start) / 1000)
    return tuple(samples)


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p99(samples: Sequence[float]) -> float:
    """The 99th percentile (nearest rank below)."""
    ordered = sorted(samples)
    return ordered[int(0.99 * (len(ordered) - 1))]


__all__ = ["median", "p99", "repeat", "time_each_us"]


def touch_latencies_us(dev, down: Callable[[], object], up: Callable[[], object],
                       at: tuple[int, int], warmup: int, n: int) -> tuple[float, ...]:
    """Touch-to-event latency of a touchscreen driver ``dev``: ``down()`` and ``up()`` alternate on
    the simulator; each is timed until the driver returns the calibrated ``Touch`` at ``at``, in µs.
    The first ``warmup`` reports are not kept."""
    from hal.events import Touch

    dev.drain_events()
    clock = time.perf_counter_ns
    samples = []
    for i in range(warmup + n):
        start = clock()
        (down if i % 2 == 0 else up)()
        event = dev.next_event(1.0)
        elapsed = (clock() - start) / 1000
        assert isinstance(event, Touch) and (event.x, event.y) == at, event
        if i >= warmup:
            samples.append(elapsed)
    return tuple(samples)
