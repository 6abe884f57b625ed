"""Boot to attract: ``egm run --sim --headless`` as a process, from its start to the cabinet in IDLE
with the host link started, on a state directory holding ``EGM_BENCH_BOOT_ROUNDS`` stored rounds
(default 1,000,000) over the same with none, as a ratio (the goal: at most 1.2 x).

The large ledger is built once per run (in a temp dir, removed at the end) through the ledger's own
batches: one transaction per copy for every few thousand records instead of an fsync per record,
with the ledger's real records: each round's journal (a real Baccarat War round's, repeated), notes,
vouchers printed (the voucher book's records and ``ticket_out``), door and power events, meters
snapshots, and the host link's reports acknowledged (``host_ack``) but for the newest
:data:`OUTSTANDING` still outstanding. Checkpoints are written as the terminal writes them.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.bench_ledger import _round_records
from firmware.cashless.vouchers import VoucherBook
from firmware.config import load_config
from firmware.hostlink.outbox import REPORTED
from firmware.ledger.ledger import Ledger

STORED_ROUNDS = int(os.environ.get("EGM_BENCH_BOOT_ROUNDS", "1000000"))
RUNS = int(os.environ.get("EGM_BENCH_BOOT_RUNS", "5"))
#: reports left unacknowledged at the end of the history (the host link was down for a while)
OUTSTANDING = 300
BATCH_ROUNDS = 2_500
BOOT_TIMEOUT_S = 120.0


def build(path: Path, rounds: int) -> None:
    """A state directory whose critical memory holds ``rounds`` rounds and what goes with them."""
    cfg = load_config(None)
    template = _round_records()
    with Ledger.open(path, denomination=cfg.terminal.denomination) as ledger:
        if not rounds:
            return
        book = VoucherBook(ledger, terminal_id=cfg.terminal.id)
        reports = [0]

        def count(seq: int, kind: str, ref: str | None, time: str, body: dict) -> None:
            reports[0] += kind in REPORTED

        ledger.listeners.append(count)
        ledger.bill_in(100 * rounds + 100_000)
        done = 0
        while done < rounds:
            with ledger.batch():
                for n in range(done, min(rounds, done + BATCH_ROUNDS)):
                    round_id = f"bench-{n:09d}"
                    for kind, _ref, body in template:
                        ledger._commit(kind, round_id, {**body, "round_id": round_id})
                    if n % 10 == 0:
                        ledger.bill_in(2_000)
                    if n % 200 == 0:
                        book.printed(book.issue(1_000).validation)
                    if n % 250 == 0:
                        ledger.event("door_open", door="main")
                        ledger.event("door_close", door="main")
                    if n % 500 == 0:
                        ledger.meters_snapshot("periodic")
                    if n % 1_000 == 0:
                        ledger.event("power_down")
                        ledger.event("power_up")
                done = min(rounds, done + BATCH_ROUNDS)
            # The host acknowledged everything so far, but for the newest reports at the end.
            ledger.host_ack(reports[0] - (OUTSTANDING if done == rounds else 0))
        assert ledger.meters.get("games_played", 0) == rounds, ledger.meters.get("games_played")


def _egm() -> list[str]:
    script = Path(sys.executable).with_name("egm")
    return [str(script)] if script.exists() else [sys.executable, "-c", "import sys; from firmware.cli import main; sys.exit(main())"]


def boot(state_dir: Path) -> float:
    """Seconds from starting ``egm run --sim --headless`` to the cabinet in IDLE with the host link
    started (its ``host link:`` line); the terminal is then stopped (untimed)."""
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy"}
    start = time.perf_counter()
    proc = subprocess.Popen([*_egm(), "run", "--sim", "--headless", "--state-dir", str(state_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert proc.stdout is not None
        state = None
        for line in proc.stdout:
            if line.startswith("cabinet: "):
                state = line.split()[1].rstrip(";")
            elif line.startswith("host link:"):
                elapsed = time.perf_counter() - start
                if state != "IDLE":
                    raise RuntimeError(f"the terminal in {state_dir} came up in {state}, not IDLE")
                return elapsed
            if time.perf_counter() - start > BOOT_TIMEOUT_S:
                break
        raise RuntimeError(f"egm run on {state_dir} did not reach its host link line (exit {proc.poll()})")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


_TIMES: dict[str, float] = {}


def boot_times() -> dict[str, float]:
    """Medians of :data:`RUNS` boots with 0 and with :data:`STORED_ROUNDS` stored rounds, taken in
    turn (so both see the same load), after one untimed boot of each (PKI, PAR cache, page cache)."""
    if not _TIMES:
        root = Path(tempfile.mkdtemp(prefix="egm-bench-boot-"))
        try:
            dirs = {"0": root / "0", "N": root / "N"}
            start = time.perf_counter()
            build(dirs["0"], 0)
            build(dirs["N"], STORED_ROUNDS)
            _TIMES["build"] = time.perf_counter() - start
            samples: dict[str, list[float]] = {"0": [], "N": []}
            for label in dirs:
                boot(dirs[label])
            for _ in range(RUNS):
                for label in dirs:
                    samples[label].append(boot(dirs[label]))
            _TIMES.update({label: statistics.median(s) for label, s in samples.items()})
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return _TIMES


def boot_ratio() -> tuple[float, str]:
    t = boot_times()
    return t["N"] / t["0"], (f"x: egm run --sim --headless to attract with {STORED_ROUNDS:,} stored rounds "
                             f"over 0 ({t['N']:.2f} s / {t['0']:.2f} s, medians of {RUNS}; goal <= 1.2 x)")


def build_time() -> tuple[float, str]:
    return boot_times()["build"], f"s: building the {STORED_ROUNDS:,}-round state directory (not part of a boot)"


BENCHMARKS = [
    ("boot: to attract with history / without", boot_ratio),
    ("boot: building the history", build_time),
]
