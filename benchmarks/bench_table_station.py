"""A player station at a live table (issue 24): durable table bets per second in critical memory
(``table.bet``, ``table.accepted``, ``table.result``, each committed with fsync to both copies), and
the time the link's thread waits for an answer to be committed on the terminal's thread (the
hand-over through the command queue and the commit), p99 over 200 bets."""

from __future__ import annotations

import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from tests.table.stations import RecordingPort

WAGERS = {"bac": 10, "war": 10}
RESULTS = {"bac": {"outcome": "win", "net": 10}, "war": {"outcome": "push", "net": 0}}


def durable_table_bets() -> tuple[float, str]:
    path = Path(tempfile.mkdtemp(prefix="egm-bench-"))
    try:
        with Ledger.open(path) as ledger:
            ledger.bill_in(10_000_000)
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < 3.0:
                bet_id, round_id = f"B{n}", f"TABLE-1-{n:06d}"
                ledger.table_bet(bet_id, round_id, 3, "baccarat-war", WAGERS)
                ledger.table_answer(bet_id, True, round_id)
                ledger.table_result(bet_id, round_id, WAGERS, RESULTS, {"round_id": round_id, "seats": []})
                n += 1
            return n / (time.perf_counter() - start), "table bets/s at a station (3 durable records each)"
    finally:
        shutil.rmtree(path, ignore_errors=True)


def answer_handover_p99() -> tuple[float, str]:
    path = Path(tempfile.mkdtemp(prefix="egm-bench-"))
    cfg = Config.model_validate({"table": {"controller": "127.0.0.1:7717", "seat": 3}})
    ledger = Ledger.open(path)
    terminal = Terminal(cfg, ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"))
    terminal.power_up()
    table = terminal.table
    assert table is not None
    port = RecordingPort()
    terminal.connect_table(port)
    ledger.bill_in(10_000_000)
    table.link_state(True, "bench")
    runner = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.005})
    runner.start()
    waits = []
    try:
        for n in range(200):
            round_id = f"TABLE-1-{n:06d}"
            table.table_snapshot({"phase": "betting", "round_id": round_id, "game": "baccarat-war",
                                  "min_bet": 1, "max_bet": 500, "seats": []})
            terminal.call("play", wagers={3: WAGERS})
            bet = port.sent[-1]
            start = time.perf_counter()
            table.bet_answered({"bet_id": bet["bet_id"], "accepted": False, "round_id": round_id, "reason": "bench"})
            waits.append((time.perf_counter() - start) * 1000)
    finally:
        terminal.stop()
        runner.join(10)
        ledger.close()
        shutil.rmtree(path, ignore_errors=True)
    return statistics.quantiles(waits, n=100)[98], "ms p99: the link's answer handed over and committed"


BENCHMARKS = [
    ("station: durable table bets", durable_table_bets),
    ("station: answer hand-over and commit", answer_handover_p99),
]
