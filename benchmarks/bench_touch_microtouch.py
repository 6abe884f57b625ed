"""3M MicroTouch touch: latency of one Format Tablet report, simulator to ``Touch`` event, over a pty.

What is timed: the simulator encodes one 5-byte report (touch-down or lift-off) and writes it
into the pty master on the calling thread; the production driver's reader thread (a pyserial read
of the slave) wakes, decodes, applies the fitted 3-point calibration and queues the
:class:`~hal.events.Touch`; the clock stops when ``next_event`` returns it. Each sample is one
DOWN or one UP. The software path only: at 9600 baud the 5 bytes of a report take 5.2 ms on a
real line.
"""

from __future__ import annotations

import functools
import os

from benchmarks.timing import median_and_p99, touch_latencies_us
from drivers.touch.microtouch_driver import MicroTouch
from hal.calibration import fit, targets
from sim_hardware.pty_link import run_on_pty
from sim_hardware.touch_microtouch import SENSOR, MicroTouchSimulator

#: Reports timed (after WARMUP untimed ones).
REPORTS = int(os.environ.get("EGM_BENCH_TOUCH_REPORTS", "5000"))
WARMUP = 200
W, H = 1920, 1080


@functools.cache
def _latencies_us() -> tuple[float, ...]:
    points = targets(W, H)
    cal = fit(points, [SENSOR.raw(*p) for p in points], W, H).to_json()
    sim = MicroTouchSimulator()
    with run_on_pty(sim) as link, \
            MicroTouch("bench", port=link.path, timeout=1.0, calibration=cal,
                       probe_interval=None) as dev:
        return touch_latencies_us(dev, lambda: sim.touch(W // 2, H // 2), sim.lift,
                                  (W // 2, H // 2), WARMUP, REPORTS)


BENCHMARKS = median_and_p99("touch microtouch: touch report latency through a pty", _latencies_us,
                            "touch report through a pty", f"{REPORTS:,} reports")
