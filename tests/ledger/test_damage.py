"""Storage damage: one copy, both copies, both WALs, the high-water mark and the key, damaged at
random offsets (bits flipped, blocks zeroed, files truncated or removed) after a power cut. Every
trial must end in exactly one of two ways: the terminal's start-up repairs it and nothing is lost
(every committed record there, the meters exact, both copies whole afterwards), or it halts with
the critical-memory error. No trial may end with a ledger that is behind and says ok.

``make fuzz`` runs 1,200 trials (``EGM_DAMAGE_TRIALS``); the default suite runs a quick 40.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.mark import MARK_FILE
from firmware.ledger.store import KEY_FILE, MIRROR_FILE, PRIMARY_FILE

#: Money, rounds' worth of events, a voucher, then a SIGKILL: the newest records are in the WALs.
_KILLED = """
import os, sys
from firmware.ledger.ledger import Ledger
Ledger.CHECKPOINT_EVERY = 100        # checkpoints in the history, so start-up starts from one
ledger = Ledger.open(sys.argv[1])
for i in range(120):
    ledger.bill_in(1000)
    ledger.event("door_open", door="main")
    if i % 3 == 0:
        ledger.ticket_out(500, f"V{i:017d}")
    ledger.event("door_close", door="main")
os._exit(0)
"""

COPY_FILES = [PRIMARY_FILE, MIRROR_FILE]
WALS = [PRIMARY_FILE + "-wal", MIRROR_FILE + "-wal"]
TARGETS = {
    "one copy": lambda r: [r.choice(COPY_FILES + WALS)],
    "both copies": lambda r: [r.choice([PRIMARY_FILE, PRIMARY_FILE + "-wal"]),
                              r.choice([MIRROR_FILE, MIRROR_FILE + "-wal"])],
    "both WALs": lambda r: WALS,
    "high-water mark": lambda r: [MARK_FILE],
    "key": lambda r: [KEY_FILE],
}


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, list[tuple[int, bytes]], dict[str, int]]:
    """The state directory a SIGKILL left, and what a clean start-up finds in it."""
    state = tmp_path_factory.mktemp("damage") / "template"
    done = subprocess.run([sys.executable, "-c", _KILLED, str(state)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (state / WALS[0]).stat().st_size > 0 and (state / WALS[1]).stat().st_size > 0
    reference = state.parent / "reference"
    shutil.copytree(state, reference)
    with Ledger.open(reference, read_only=True) as ledger:
        assert ledger._store.latest_checkpoint() is not None
    with Ledger.open(reference, full=True) as ledger:
        assert ledger.repairs == []
        return state, log_of(ledger), dict(ledger.meters)


def log_of(ledger: Ledger) -> list[tuple[int, bytes]]:
    return [(seq, bytes(mac)) for seq, mac in ledger._store.query("SELECT seq, mac FROM log ORDER BY seq")]


def damage(file: Path, rnd: random.Random) -> str:
    if not file.exists():
        return "absent"
    data = bytearray(file.read_bytes())
    how = rnd.choice(["flip", "flip", "zero", "truncate", "remove"])
    if how == "remove" or not data:
        file.unlink()
        return "removed"
    if how == "truncate":
        file.write_bytes(bytes(data[: rnd.randrange(len(data))]))
        return "truncated"
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randrange(len(data))
        if how == "zero":
            end = min(len(data), at + rnd.choice([16, 512, 4096]))
            data[at:end] = b"\0" * (end - at)
        else:
            for i in range(rnd.randint(1, 8)):
                if at + i < len(data):
                    data[at + i] ^= 1 << rnd.randrange(8)
    file.write_bytes(bytes(data))
    return how


def trial(template, work: Path, seed: int) -> str:
    """One damage trial; the outcome ('repaired' or 'halted'), or an AssertionError."""
    state, reference, meters = template
    rnd = random.Random(seed)
    kind = rnd.choice(sorted(TARGETS))
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(state, work)
    done = [f"{name}: {damage(work / name, rnd)}" for name in TARGETS[kind](rnd)]
    where = f"seed {seed}, {kind}: {', '.join(done)}"
    try:
        # The terminal's start-up (from the last checkpoint, with repair) must not be behind...
        with Ledger.open(work) as booted:
            assert booted.rows >= len(reference), f"{where}: start-up is behind"
            assert booted.meters == meters, f"{where}: start-up's meters differ"
        # ... and the full verification (every record and page) repairs the rest or halts.
        ledger = Ledger.open(work, full=True)
    except CriticalMemoryError:
        return "halted"
    with ledger:
        got = log_of(ledger)
        assert got[: len(reference)] == reference, f"{where}: the log is not the committed one (behind)"
        assert ledger.meters == meters, f"{where}: the meters differ"
        assert accounting_difference(ledger.meters) == 0, where
    with Ledger.open(work, read_only=True, full=True) as again:  # both copies whole again
        assert again.repairs == [], f"{where}: still needs repair: {again.repairs}"
        assert log_of(again) == got, where
    return "repaired"


def run_trials(template, tmp_path: Path, trials: int, seed: int) -> Counter:
    outcomes: Counter = Counter()
    for n in range(trials):
        outcomes[trial(template, tmp_path / "trial", seed * 1_000_003 + n)] += 1
    assert set(outcomes) <= {"repaired", "halted"}
    return outcomes


def test_storage_damage_quick(template, tmp_path):
    outcomes = run_trials(template, tmp_path, 40, seed=1)
    assert outcomes["repaired"] and outcomes["halted"], outcomes


@pytest.mark.fuzz
def test_storage_damage_fuzz(template, tmp_path):
    trials = int(os.environ.get("EGM_DAMAGE_TRIALS", "1200"))
    outcomes = run_trials(template, tmp_path, trials, seed=2026)
    print(f"storage damage: {trials} trials: {dict(outcomes)}")
    assert sum(outcomes.values()) == trials >= 1000 or "EGM_DAMAGE_TRIALS" in os.environ
