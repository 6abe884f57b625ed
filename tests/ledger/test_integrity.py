"""Integrity: a flipped byte in either copy is found at start-up and repaired from the other copy
(and logged); in both copies it locks the machine with the critical-memory error."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from firmware.cli import main
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.store import MIRROR_FILE, PRIMARY_FILE

MARK = "MARKER-VALIDATION-0000000001"


def make_ledger(path: Path) -> dict:
    with Ledger.open(path) as ledger:
        ledger.event("power_up")
        ledger.bill_in(5000)
        ledger.ticket_out(1200, MARK)
        ledger.bill_in(1000)
        return dict(ledger.meters)


def flip(file: Path, needle: bytes, offset: int = 3, last: bool = False) -> None:
    """Flip one bit of the first (or last) place ``needle`` is stored: the marker lives both in the
    log row and in the index on ``ref``, so the two cases hit the table and the index."""
    data = bytearray(file.read_bytes())
    at = data.rfind(needle) if last else data.find(needle)
    assert at >= 0, f"{needle!r} not found in {file.name}"
    data[at + offset] ^= 0x01
    file.write_bytes(bytes(data))


@pytest.mark.parametrize("last", [False, True], ids=["first-copy-of-bytes", "last-copy-of-bytes"])
@pytest.mark.parametrize("bad", [PRIMARY_FILE, MIRROR_FILE])
def test_one_flipped_byte_in_one_copy_is_repaired_and_logged(tmp_path, bad, last):
    meters = make_ledger(tmp_path)
    flip(tmp_path / bad, MARK.encode(), last=last)
    with Ledger.open(tmp_path, read_only=True) as ledger:      # detected, even read-only
        assert any(bad in r for r in ledger.repairs), ledger.repairs
    with Ledger.open(tmp_path) as ledger:                    # the terminal's start-up repairs it
        assert ledger.meters == meters | {"credits": meters["credits"]}
        assert ledger.events(1)[0]["event"] == "critical_memory_repaired"
        assert bad in " ".join(ledger.events(1)[0]["details"])
    with Ledger.open(tmp_path, read_only=True) as ledger:    # and it stays repaired
        assert ledger.repairs == []
        assert accounting_difference(ledger.meters) == 0


def test_the_same_record_flipped_in_both_copies_locks_the_machine(tmp_path):
    # A byte of the record's body (no index holds it): both copies read, both rows fail their MAC.
    make_ledger(tmp_path)
    flip(tmp_path / PRIMARY_FILE, b'"cashable":true', offset=4)
    flip(tmp_path / MIRROR_FILE, b'"cashable":true', offset=6)
    with pytest.raises(CriticalMemoryError, match="log record 4 is bad in both copies"):
        Ledger.open(tmp_path)


def test_an_indexed_value_flipped_in_both_copies_locks_the_machine(tmp_path):
    make_ledger(tmp_path)
    flip(tmp_path / PRIMARY_FILE, MARK.encode())
    flip(tmp_path / MIRROR_FILE, MARK.encode(), offset=5)
    # Both files fail integrity_check (the index disagrees with the row); read row by row, the
    # record's row fails its MAC in both.
    with pytest.raises(CriticalMemoryError, match="log record 4 is bad in both copies"):
        Ledger.open(tmp_path)


def test_egm_ledger_verify_reports_and_locks(tmp_path, capsys):
    make_ledger(tmp_path)
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0
    flip(tmp_path / MIRROR_FILE, MARK.encode())
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 1
    assert "needs repair" in capsys.readouterr().out
    assert main(["ledger", "verify", "--state-dir", str(tmp_path), "--repair"]) == 0
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0
    flip(tmp_path / PRIMARY_FILE, MARK.encode())
    flip(tmp_path / MIRROR_FILE, MARK.encode())
    capsys.readouterr()
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "critical memory" in err and err.count("\n") == 1


def test_a_copy_sqlite_cannot_read_is_rebuilt_from_the_other(tmp_path):
    meters = make_ledger(tmp_path)
    data = bytearray((tmp_path / PRIMARY_FILE).read_bytes())
    data[0:16] = b"not a database!!"                # the file header
    (tmp_path / PRIMARY_FILE).write_bytes(bytes(data))
    with Ledger.open(tmp_path) as ledger:
        assert any("unreadable" in r for r in ledger.repairs)
        assert ledger.meters == meters
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger.repairs == []


def test_tampered_meter_is_rewritten_from_the_log(tmp_path):
    meters = make_ledger(tmp_path)
    conn = sqlite3.connect(tmp_path / PRIMARY_FILE)
    conn.execute("UPDATE meters SET value = value + 100000 WHERE name = 'credits'")
    conn.commit()
    conn.close()
    with Ledger.open(tmp_path) as ledger:
        assert ledger.meters == meters
        assert any("meters did not match" in r for r in ledger.repairs)


def test_a_deleted_record_is_detected_and_restored(tmp_path):
    make_ledger(tmp_path)
    conn = sqlite3.connect(tmp_path / MIRROR_FILE)
    conn.execute("DELETE FROM log WHERE seq = 3")
    conn.commit()
    conn.close()
    with Ledger.open(tmp_path) as ledger:
        assert any(MIRROR_FILE in r for r in ledger.repairs)
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger.repairs == []


def test_missing_key_locks_the_machine(tmp_path):
    make_ledger(tmp_path)
    (tmp_path / "ledger.key").unlink()
    with pytest.raises(CriticalMemoryError, match="key"):
        Ledger.open(tmp_path)


def test_a_failing_disk_write_raises_the_critical_memory_error_and_changes_nothing(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(1000)
        before = dict(ledger.meters)
        # A full disk: SQLite may not grow the mirror by another page.
        mirror = ledger._store.copies[1].connect()
        pages = mirror.execute("PRAGMA page_count").fetchone()[0]
        mirror.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(CriticalMemoryError, match="write failed"):
            for i in range(200):
                ledger.event("door_open", door="main", note="x" * 2000 + str(i))
        assert ledger.meters["credits"] == before["credits"]
    with Ledger.open(tmp_path) as ledger:        # the next start rolls the mirror forward
        assert accounting_difference(ledger.meters) == 0


def test_an_io_error_stops_autoplay_instead_of_continuing(tmp_path, monkeypatch):
    from firmware.ledger import store

    calls = {"n": 0}
    real = store.Copy.write

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] > 12:
            raise sqlite3.OperationalError("disk I/O error")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(store.Copy, "write", failing)
    code = main(["run", "--sim", "--headless", "--autoplay", "50", "--state-dir", str(tmp_path)])
    assert code == 2          # the cabinet will turn this error into a locked tilt


# --- one damaged copy, as a user would damage it, seen by the reading commands ----------------------

def _truncate(file: Path) -> None:
    os.truncate(file, file.stat().st_size // 2)


def _flip_marker(file: Path) -> None:
    flip(file, MARK.encode())


def _delete(file: Path) -> None:
    file.unlink()


def _flip_a_round(file: Path) -> None:
    flip(file, b'"cards":["', offset=10, last=True)               # a card of the last round dealt


#: How a copy is damaged: the copy, the damage, what is found, what --repair would do, then did.
DAMAGE = {
    "truncated mirror": (MIRROR_FILE, _truncate, "unreadable", "rebuild it from ledger.db", "rebuilt from"),
    "flipped byte in primary": (PRIMARY_FILE, _flip_marker, "damaged", "rebuild it from ledger-mirror.db",
                                "rebuilt from"),
    "flipped round in primary": (PRIMARY_FILE, _flip_a_round, "1 log record(s) bad or missing",
                                 "restore them from ledger-mirror.db", "restored from"),
    "deleted mirror": (MIRROR_FILE, _delete, "missing", "rebuild it from ledger.db", "rebuilt from"),
}
READING = (["meters", "--json"], ["recall", "--json"], ["events", "--json"])


def _played(path: Path) -> None:
    """Critical memory with money moved and a few rounds played."""
    from firmware.cards.source import RngShoe
    from firmware.games.registry import get_game, make_options
    from firmware.kernel.round import RoundKernel
    from firmware.rng.service import RngService

    make_ledger(path)
    game = get_game("baccarat-war")
    options = make_options(game.id)
    source = RngShoe(RngService.seeded("damaged-copy"), game.shoe(options))
    with Ledger.open(path) as ledger:
        kernel = RoundKernel(game, options, journal=ledger)
        for _ in range(3):
            kernel.play(game.automatic_wagers(options, 1, 10), source, credits=ledger.credits)


def _hashes(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.iterdir()}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_one_damaged_copy_is_reported_as_found_and_reading_commands_warn_and_write_nothing(tmp_path, capsys, damage):
    bad, hurt, found, would, done = DAMAGE[damage]
    _played(tmp_path)
    expected = {}
    for args in READING:
        assert main([*args, "--state-dir", str(tmp_path)]) == 0
        expected[args[0]], err = capsys.readouterr()
        assert err == ""
    hurt(tmp_path / bad)
    before = _hashes(tmp_path)

    for args in READING:           # the right answer from the good copy, a warning, and exit 0
        assert main([*args, "--state-dir", str(tmp_path)]) == 0
        out, err = capsys.readouterr()
        assert out == expected[args[0]]
        (line,) = err.splitlines()
        assert line.startswith(f"egm {args[0]}: warning: critical memory: {bad}: {found}"), line
        assert line.endswith(f"; egm ledger verify --repair would {would}"), line
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"needs repair: {bad}: {found}" in out and f"egm ledger verify --repair would {would}" in out
    assert "rebuilt" not in out and "restored" not in out and "in both copies" not in out

    after = _hashes(tmp_path)      # nothing written: no file changed, the damaged copy not remade
    assert {n: h for n, h in after.items() if n in before} == before
    assert all(n.endswith(("-wal", "-shm")) and not n.startswith(bad + "-") or n in before for n in after), after
    assert bad in after if bad in before else bad not in after

    assert main(["ledger", "verify", "--state-dir", str(tmp_path), "--repair"]) == 0
    out = capsys.readouterr().out
    assert f"repaired: {bad}: {found}" in out and done in out
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0
    assert "in both copies" in capsys.readouterr().out
    assert main(["meters", "--json", "--state-dir", str(tmp_path)]) == 0
    assert capsys.readouterr() == (expected["meters"], "")
