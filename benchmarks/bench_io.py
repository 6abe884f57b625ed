"""I/O board link: round trip of one status request, driver to simulator and back, over a
real pty.

What is timed is ``IoBoardDriver.status()``: the production driver's exchange (encode a
STATUS_REQUEST, pyserial write, the driver's read thread decodes the STATUS and wakes the caller)
against the simulated I/O board serving the pty's master side in its own thread. No input changes, so
only the measured requests touch the wire (the driver probes a quiet line only after its one-second
timeout, which the back-to-back requests never leave).
"""

from __future__ import annotations

import functools
import os

from benchmarks.timing import median_and_p99, repeat, time_each_us
from drivers.io_board.driver import IoBoardDriver
from sim_hardware.io_board import IoBoardSimulator
from sim_hardware.pty_link import run_on_pty

#: Requests timed (after WARMUP untimed ones).
REQUESTS = int(os.environ.get("EGM_BENCH_IO_REQUESTS", "5000"))
WARMUP = 200


@functools.cache
def _round_trips_us() -> tuple[float, ...]:
    sim = IoBoardSimulator()
    with run_on_pty(sim) as link, IoBoardDriver("bench", port=link.path, timeout=1.0) as dev:
        repeat(dev.status, WARMUP)
        assert dev.status().inputs == 0
        return time_each_us(dev.status, REQUESTS)


BENCHMARKS = median_and_p99("io board: status request round trip over a pty", _round_trips_us,
                            "status request over a pty", f"{REQUESTS:,} requests")
