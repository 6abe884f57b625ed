"""evdev touch: latency of one touch report, simulator to ``Touch`` event, through a FIFO.

What is timed: the simulator encodes a one-contact frame (type-B multitouch records and
SYN_REPORT) and writes it into the FIFO; the production driver's reader thread wakes on ``select``,
reads, decodes, applies the fitted 3-point calibration and queues the :class:`~hal.events.Touch`;
the clock stops when ``next_event`` returns it. Each sample is one DOWN or one UP.
"""

from __future__ import annotations

import functools
import os
import tempfile

from benchmarks.timing import median_and_p99, touch_latencies_us
from drivers.touch.evdev_driver import EvdevTouch
from hal.calibration import fit, targets
from sim_hardware.touch_evdev import EvdevTouchSimulator, Sensor, make_fifo

#: Reports timed (after WARMUP untimed ones).
REPORTS = int(os.environ.get("EGM_BENCH_TOUCH_REPORTS", "5000"))
WARMUP = 200
W, H = 1920, 1080


@functools.cache
def _latencies_us() -> tuple[float, ...]:
    sensor = Sensor()
    points = targets(W, H)
    cal = fit(points, [sensor.raw(*p) for p in points], W, H).to_json()
    raw = sensor.raw(W // 2, H // 2)
    with tempfile.TemporaryDirectory() as tmp:
        fifo = make_fifo(os.path.join(tmp, "event0"))
        with EvdevTouch("bench", path=fifo, timeout=1.0, calibration=cal) as dev, \
                EvdevTouchSimulator(fifo, sensor=sensor).connect() as sim:
            return touch_latencies_us(dev, lambda: sim.down(*raw), sim.up, (W // 2, H // 2),
                                      WARMUP, REPORTS)


BENCHMARKS = median_and_p99("touch evdev: touch report latency through a FIFO", _latencies_us,
                            "touch report through a FIFO", f"{REPORTS:,} reports")
