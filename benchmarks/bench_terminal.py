"""The running terminal, headless: time from ``egm run`` to attract, and from a deal request to
the first card dealt.

* **to attract**: ``egm run --sim --headless`` as a new process (interpreter start, imports,
  configuration, RNG known-answer and health tests, PAR check from the shipped sheets, critical
  memory verification, the simulated devices on their ptys, software verification, self-test)
  until the control socket reports IDLE. Fresh critical memory each time.
* **deal to first card**: a terminal with its simulated devices running in its own thread, as in
  ``egm run``; the request is submitted from another thread (as ``egm simctl play`` and the
  screens do) and the clock stops when the card source hands out the round's first card: the
  command queue, the wager checks, the write-ahead ``deal`` record in both copies of critical
  memory (fsync), and the draw.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ATTRACT_RUNS = 5
DEAL_ROUNDS = 300


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _attract_times() -> list[float]:
    from firmware.cabinet.control import ControlError, request

    times = []
    for _ in range(ATTRACT_RUNS):
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                                     "--state-dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                while True:
                    try:
                        if request(tmp, "status", timeout=5).get("state") == "IDLE":
                            break
                    except ControlError:
                        pass
                    if proc.poll() is not None:
                        raise RuntimeError("egm run exited before attract")
                    time.sleep(0.005)
                times.append(time.perf_counter() - started)
                request(tmp, "stop")
                proc.wait(timeout=30)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    return times


def attract_median() -> tuple[float, str]:
    times = _attract_times()
    return statistics.median(times) * 1000, f"ms egm run -> attract, median of {len(times)} (max {max(times) * 1000:.0f} ms)"


def _deal_latencies() -> list[float]:
    from firmware.cabinet.terminal import Devices, Terminal
    from firmware.cashless.vouchers import VoucherBook
    from firmware.config import Config
    from firmware.ledger.ledger import Ledger
    from firmware.rng.service import RngService
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    cfg = Config()
    specs = {"bill_validator": parse_spec("bill_validator", "sim:id003"), "printer": parse_spec("printer", "sim:tcl"),
             "io_board": parse_spec("io", "sim:io")}
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, Ledger.open(Path(tmp)) as ledger:
        rig = SimRig(specs)
        try:
            devices = Devices(**{slot: rig.device(slot) for slot in specs})
            terminal = Terminal(cfg, ledger, RngService.production(b"bench"), devices,
                                VoucherBook(ledger, terminal_id="BENCH"))
            terminal.power_up()
            ledger.bill_in(1_000_000 * ledger.denom_cents // 100)
            first: dict[str, float] = {}
            real_source = terminal.rounds.source

            def source(kernel):
                gated = real_source(kernel)
                inner_next = gated.inner.next_card

                def next_card():
                    card = inner_next()
                    first.setdefault("t", time.perf_counter())
                    return card

                gated.inner.next_card = next_card
                return gated

            terminal.rounds.source = source
            thread = threading.Thread(target=terminal.run, daemon=True)
            thread.start()
            for _ in range(DEAL_ROUNDS):
                first.clear()
                done = terminal.rounds_played
                t0 = time.perf_counter()
                terminal.call("play")
                while "t" not in first:
                    time.sleep(0.0002)
                latencies.append(first["t"] - t0)
                while terminal.rounds_played == done or terminal.kernel is not None:
                    time.sleep(0.0005)
            terminal.stop()
            thread.join(10)
        finally:
            rig.close()
    return latencies


_DEAL: list[float] = []


def deal_median() -> tuple[float, str]:
    _DEAL[:] = _deal_latencies()
    return statistics.median(_DEAL) * 1000, f"ms deal request -> first card, median of {len(_DEAL)} rounds"


def deal_p99() -> tuple[float, str]:
    if not _DEAL:
        _DEAL[:] = _deal_latencies()
    return _percentile(_DEAL, 0.99) * 1000, "ms deal request -> first card, 99th percentile"


BENCHMARKS = [
    ("terminal: egm run to attract (headless)", attract_median),
    ("terminal: deal request to first card (median)", deal_median),
    ("terminal: deal request to first card (p99)", deal_p99),
]
