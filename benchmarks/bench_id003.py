"""ID-003 link: round trip of one status poll, driver to simulator and back, over a real pty.

What is timed is ``Id003Validator.poll()``: the production driver's exchange (drop stale input,
encode, pyserial write, read until the answering frame, decode, status tracker) against the
simulator serving the pty's master side in its own thread. The driver's poll thread is parked (a
one-hour poll interval) so only the measured polls touch the wire.
"""

from __future__ import annotations

import functools
import os

from benchmarks.timing import median_and_p99, repeat, time_each_us
from drivers.id003.codec import Status
from drivers.id003.driver import Id003Validator
from sim_hardware.id003_validator import Id003Simulator
from sim_hardware.pty_link import run_on_pty

#: Polls timed (after WARMUP untimed ones).
POLLS = int(os.environ.get("EGM_BENCH_ID003_POLLS", "5000"))
WARMUP = 200


@functools.cache
def _round_trips_us() -> tuple[float, ...]:
    sim = Id003Simulator()
    with run_on_pty(sim) as link, Id003Validator("bench", port=link.path, timeout=1.0,
                                                 poll_interval=3600.0) as dev:
        dev.enable([2000])
        repeat(dev.poll, WARMUP)
        assert dev.poll() is Status.IDLING
        return time_each_us(dev.poll, POLLS)


BENCHMARKS = median_and_p99("id003: status poll round trip over a pty", _round_trips_us,
                            "status poll over a pty", f"{POLLS:,} polls")
