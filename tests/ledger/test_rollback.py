"""Critical memory never rolls back silently: the WAL files of both copies removed after a power
cut, or both copies deleted with the key kept, is the critical-memory error (the high-water mark
outside both copies says how far the log got), never a ledger that is behind and says ok."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.mark import MARK_FILE, SLOT
from firmware.ledger.store import KEY_FILE, MIRROR_FILE, PRIMARY_FILE

VOUCHER = "VOUCHER-000000000042"

#: Play money in and out, print a voucher, then die like a SIGKILL (no close, no WAL checkpoint).
_KILLED = """
import os, sys
from firmware.ledger.ledger import Ledger
ledger = Ledger.open(sys.argv[1])
for i in range(int(sys.argv[2])):
    ledger.bill_in(1000)
    ledger.event("door_open", door="main")
    ledger.event("door_close", door="main")
ledger.ticket_out(2010, sys.argv[3])
os._exit(0)
"""


def killed_after_writes(state: Path, rounds: int) -> None:
    done = subprocess.run([sys.executable, "-c", _KILLED, str(state), str(rounds), VOUCHER],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def remove_wals(state: Path) -> list[str]:
    gone = []
    for name in (PRIMARY_FILE, MIRROR_FILE):
        for suffix in ("-wal", "-shm"):
            f = state / (name + suffix)
            if f.exists():
                f.unlink()
                gone.append(f.name)
    return gone


@pytest.mark.parametrize("rounds", [5, 400], ids=["young-ledger", "after-a-wal-checkpoint"])
def test_both_wals_removed_after_a_kill_is_the_critical_memory_error(tmp_path, rounds, capsys):
    killed_after_writes(tmp_path, rounds)
    assert "ledger.db-wal" in remove_wals(tmp_path)
    before = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "behind its high-water mark" in err and err.count("\n") == 1
    with pytest.raises(CriticalMemoryError, match="behind its high-water mark"):
        Ledger.open(tmp_path)                      # the terminal's start-up, with repair
    # Neither changed anything: the evidence is left for the technician.
    after = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    assert {n: v for n, v in after.items() if v} == before


def test_the_voucher_survives_a_kill_when_nothing_is_removed(tmp_path):
    killed_after_writes(tmp_path, 5)
    with Ledger.open(tmp_path) as ledger:
        assert ledger.cashless(1)[0]["validation"] == VOUCHER
        assert ledger.meters["ticket_out"] == 2010 and accounting_difference(ledger.meters) == 0


def test_a_truncated_wal_in_both_copies_is_the_critical_memory_error(tmp_path):
    killed_after_writes(tmp_path, 5)
    for name in (PRIMARY_FILE, MIRROR_FILE):
        wal = tmp_path / (name + "-wal")
        wal.write_bytes(wal.read_bytes()[: wal.stat().st_size // 2])
    with pytest.raises(CriticalMemoryError, match="high-water mark"):
        Ledger.open(tmp_path)


def make(state: Path) -> None:
    with Ledger.open(state) as ledger:
        ledger.bill_in(5000)
        ledger.ticket_out(2010, VOUCHER)


@pytest.mark.parametrize("kept", [(KEY_FILE, MARK_FILE), (KEY_FILE,), (MARK_FILE,)],
                         ids=["key-and-mark-kept", "key-kept", "mark-kept"])
def test_both_copies_deleted_never_start_a_fresh_ledger(tmp_path, kept):
    make(tmp_path)
    for f in list(tmp_path.iterdir()):
        if f.name not in kept:
            f.unlink()
    with pytest.raises(CriticalMemoryError):
        Ledger.open(tmp_path)
    with pytest.raises(CriticalMemoryError):        # and it stays an error: nothing was created
        Ledger.open(tmp_path)
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(kept)


def test_only_a_first_installation_creates_a_ledger(tmp_path):
    with Ledger.open(tmp_path / "new") as ledger:
        assert ledger.events(1)[0]["event"] == "ledger_created" and ledger.repairs == []
    assert (tmp_path / "new" / MARK_FILE).stat().st_size == 2 * SLOT


def test_a_mark_behind_the_log_by_one_write_is_rolled_forward(tmp_path):
    """A cut after both copies committed and before the mark was written."""
    make(tmp_path)
    before = (tmp_path / MARK_FILE).read_bytes()
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(1000)
        rows = ledger.rows
    (tmp_path / MARK_FILE).write_bytes(before)        # the note's mark never written
    with Ledger.open(tmp_path) as ledger:
        assert ledger.repairs == [] and ledger.rows == rows
        assert ledger.meters["bills_in"] == 6000
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger._store.mark.read().seq == ledger.rows


def _tear_the_newest_mark_slot(tmp_path):
    """A ledger whose newest mark slot is torn (the slot being written when the power went)."""
    make(tmp_path)
    mark = tmp_path / MARK_FILE
    with Ledger.open(tmp_path, read_only=True) as ledger:
        newest = ledger._store.mark.read()
    data = bytearray(mark.read_bytes())
    at = (newest.gen % 2) * SLOT
    data[at + 40: at + 80] = b"\x00" * 40
    mark.write_bytes(bytes(data))
    return mark


def test_a_torn_mark_slot_keeps_the_previous_mark(tmp_path):
    _tear_the_newest_mark_slot(tmp_path)
    with Ledger.open(tmp_path) as ledger:
        assert any(MARK_FILE in r for r in ledger.repairs)
        assert ledger.meters["ticket_out"] == 2010
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger.repairs == []


@pytest.mark.parametrize("damage", ["both-slots", "deleted", "other-ledger"])
def test_a_mark_that_cannot_be_trusted_is_the_critical_memory_error(tmp_path, damage):
    make(tmp_path)
    mark = tmp_path / MARK_FILE
    if damage == "both-slots":
        data = bytearray(mark.read_bytes())
        data[20] ^= 1
        data[SLOT + 20] ^= 1
        mark.write_bytes(bytes(data))
    elif damage == "deleted":
        mark.unlink()
    else:
        make(tmp_path / "other")
        mark.write_bytes((tmp_path / "other" / MARK_FILE).read_bytes())
    with pytest.raises(CriticalMemoryError, match="high-water mark"):
        Ledger.open(tmp_path)


def test_copies_restored_from_an_older_backup_are_behind(tmp_path):
    make(tmp_path)
    backup = tmp_path / "backup"
    backup.mkdir()
    with Ledger.open(tmp_path) as ledger:
        ledger.close()                                 # checkpointed: the .db files are whole
    for name in (PRIMARY_FILE, MIRROR_FILE):
        (backup / name).write_bytes((tmp_path / name).read_bytes())
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(1000)
    for name in (PRIMARY_FILE, MIRROR_FILE):
        (tmp_path / name).write_bytes((backup / name).read_bytes())
    with pytest.raises(CriticalMemoryError, match="behind its high-water mark"):
        Ledger.open(tmp_path)


def test_a_ledger_made_before_the_mark_is_adopted_once(tmp_path):
    import sqlite3

    from firmware.ledger.store import MARKED

    make(tmp_path)
    (tmp_path / MARK_FILE).unlink()
    for name in (PRIMARY_FILE, MIRROR_FILE):
        with sqlite3.connect(tmp_path / name) as conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (MARKED,))
        conn.close()
    with Ledger.open(tmp_path) as ledger:
        assert any("made before the high-water mark" in r for r in ledger.repairs)
    (tmp_path / MARK_FILE).unlink()                   # from now on its loss is an error
    with pytest.raises(CriticalMemoryError, match="high-water mark"):
        Ledger.open(tmp_path)


def test_a_torn_mark_slot_seen_read_only_says_what_repair_would_do_and_writes_nothing(tmp_path, capsys):
    mark = _tear_the_newest_mark_slot(tmp_path)
    torn = mark.read_bytes()
    problem = f"{MARK_FILE}: a torn or damaged slot"

    assert main(["meters", "--json", "--state-dir", str(tmp_path)]) == 0
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"egm meters: warning: critical memory: {problem}; egm ledger verify --repair would rewrite it from the log"
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 1
    assert f"needs repair: {problem}; egm ledger verify --repair would rewrite it from the log" in capsys.readouterr().out
    assert mark.read_bytes() == torn                   # read-only: the torn slot left as found

    assert main(["ledger", "verify", "--state-dir", str(tmp_path), "--repair"]) == 0
    assert f"repaired: {problem}; rewritten from the log" in capsys.readouterr().out
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0
    assert "needs repair" not in capsys.readouterr().out
