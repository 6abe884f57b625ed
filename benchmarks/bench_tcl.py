"""TCL link: round trip of one status poll (ENQ -> status record), driver to simulator and back,
over a real pty; and a whole voucher, ``print_voucher`` to ``TicketPrinted``.

What is timed for the poll is ``TclPrinter.poll()``: the production driver's exchange (drop stale
input, ENQ, pyserial write, read until the status record, decode, status tracker) against the
simulator serving the pty's master side in its own thread. The driver's poll thread is parked (a
one-hour poll interval) so only the measured polls touch the wire.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import time

from benchmarks.timing import median, median_and_p99, repeat, time_each_us
from drivers.tcl.codec import Flag
from drivers.tcl.driver import TclPrinter
from hal.events import TicketPrinted
from sim_hardware.pty_link import run_on_pty
from sim_hardware.tcl_printer import TclPrinterSimulator
from tests.drivers.tickets import ticket

#: Polls timed (after WARMUP untimed ones).
POLLS = int(os.environ.get("EGM_BENCH_TCL_POLLS", "5000"))
WARMUP = 200
TICKETS = int(os.environ.get("EGM_BENCH_TCL_TICKETS", "50"))
VOUCHER = ticket("GOLDEN STAR CASINO", ("1 MAIN STREET", "RENO NV 89501"), "EGM-0042",
                dt.datetime(2025, 3, 14, 13, 45, 9), 2050, "123456789012345678", 42, 30)


@functools.cache
def _round_trips_us() -> tuple[float, ...]:
    sim = TclPrinterSimulator()
    with run_on_pty(sim) as link, TclPrinter("bench", port=link.path, timeout=1.0,
                                             poll_interval=3600.0) as dev:
        repeat(dev.poll, WARMUP)
        assert dev.poll().flags == Flag.TOP_OF_FORM
        return time_each_us(dev.poll, POLLS)


@functools.cache
def _tickets_ms() -> tuple[float, ...]:
    """``print_voucher`` to ``TicketPrinted`` with the driver polling every 10 ms."""
    sim = TclPrinterSimulator(paper=TICKETS + 100)
    with run_on_pty(sim) as link, TclPrinter("bench", port=link.path, timeout=1.0,
                                             poll_interval=0.01) as dev:
        samples = []
        for _ in range(TICKETS):
            dev.drain_events()
            start = time.perf_counter_ns()
            dev.print_voucher(VOUCHER)
            while not isinstance(dev.next_event(2.0), TicketPrinted):
                pass
            samples.append((time.perf_counter_ns() - start) / 1e6)
        return tuple(samples)


def ticket_median() -> tuple[float, str]:
    return median(_tickets_ms()), (
        f"ms median, print_voucher to TicketPrinted, 10 ms polling, simulator 2-poll job "
        f"({TICKETS} tickets)")


BENCHMARKS = [
    *median_and_p99("tcl: status poll round trip over a pty", _round_trips_us,
                    "status poll over a pty", f"{POLLS:,} polls"),
    ("tcl: voucher confirmed printed over a pty, median", ticket_median),
]
