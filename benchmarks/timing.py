"""What the benchmarks share: time back-to-back calls, a rate of work, and the figures of the samples.

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


def rate(step: Callable[[], object], work_per_step: int, *, duration_s: float = 1.0,
         warm_up: bool = False) -> float:
    """Run ``step`` repeatedly for about ``duration_s`` seconds (after one untimed call with
    ``warm_up``); work done per second."""
    if warm_up:
        step()
    steps = 0
    start = time.perf_counter()
    deadline = start + duration_s
    while True:
        step()
        steps += 1
        now = time.perf_counter()
        if now >= deadline:
            return steps * work_per_step / (now - start)


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def p99(samples: Sequence[float]) -> float:
    """The 99th percentile (nearest rank below)."""
    ordered = sorted(samples)
    return ordered[int(0.99 * (len(ordered) - 1))]


#: A benchmark: its name, and the function that measures and returns ``(value, unit)``.
Benchmark = tuple[str, Callable[[], tuple[float, str]]]


def median_and_p99(name: str, samples_us: Callable[[], Sequence[float]], figure: str,
                   count: str) -> list[Benchmark]:
    """The two benchmarks ``"<name>, median"`` and ``"<name>, p99"`` of the µs ``samples_us()``
    (``figure``: what one sample times; ``count``: how many, e.g. ``"5,000 polls"``)."""
    return [
        (f"{name}, median", lambda: (median(samples_us()), f"µs median, {figure} ({count})")),
        (f"{name}, p99", lambda: (p99(samples_us()), f"µs 99th percentile, same {count}")),
    ]


__all__ = ["Benchmark", "median", "median_and_p99", "p99", "rate", "repeat", "time_each_us"]


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
