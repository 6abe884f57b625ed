"""ITL SSP link: round trip of one POLL, driver to simulator and back, over a real pty; plain SSP
and eSSP (AES-128, a key negotiated at open).

What is timed is ``SspValidator.poll()``: the production driver's exchange (drop stale input,
encrypt, encode, pyserial write, read until the reply with the command's sequence flag, decode,
decrypt, event tracker) against the simulator serving the pty's master side in its own thread. The
driver's poll thread is parked (a one-hour poll interval) so only the measured polls touch the wire.
The fixed key is a benchmark key, not a machine's.
"""

from __future__ import annotations

import functools
import os

from benchmarks.timing import median_and_p99, repeat, time_each_us
from drivers.ssp.driver import SspValidator
from sim_hardware.pty_link import run_on_pty
from sim_hardware.ssp_validator import SspSimulator

#: Polls timed per mode (after WARMUP untimed ones).
POLLS = int(os.environ.get("EGM_BENCH_SSP_POLLS", "5000"))
WARMUP = 200
_BENCH_KEY = 0x0F1E2D3C4B5A6978


@functools.cache
def _round_trips_us(encryption: bool) -> tuple[float, ...]:
    sim = SspSimulator(encryption=encryption, fixed_key=_BENCH_KEY)
    with run_on_pty(sim) as link, SspValidator(
            "bench", port=link.path, timeout=1.0, poll_interval=3600.0, encryption=encryption,
            fixed_key=f"{_BENCH_KEY:016X}" if encryption else "") as dev:
        dev.enable([2000])
        repeat(dev.poll, WARMUP)
        assert dev.poll() == ()
        return time_each_us(dev.poll, POLLS)




BENCHMARKS = [
    *median_and_p99("ssp: poll round trip over a pty", lambda: _round_trips_us(False),
                    "POLL over a pty", f"{POLLS:,} polls"),
    *median_and_p99("essp: encrypted poll round trip over a pty", lambda: _round_trips_us(True),
                    "POLL over a pty", f"{POLLS:,} polls"),
]
