"""A copy whose file is damaged (``PRAGMA integrity_check`` fails) is not thrown away whole: every
record SQLite can still read from it counts, and the log is rebuilt record by record from whatever
is authentic in either copy. Only a record authentic in neither copy locks the machine. (The damage
here is in records before the last checkpoint, which the full verification reads.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.store import MIRROR_FILE, PRIMARY_FILE

RECORDS = 1300
PAGE = 4096


def tag(i: int) -> str:
    return f"record-{i:05d}-" + "x" * 60


def make_ledger(path: Path) -> int:
    with Ledger.open(path) as ledger:
        for i in range(RECORDS):
            if i % 10 == 0:
                ledger.bill_in(100)
            else:
                ledger.event("marker", tag=tag(i))
        return ledger.rows                       # closed: the WAL is checkpointed into the files


def page_of(file: Path, needle: str) -> int:
    at = file.read_bytes().find(needle.encode())
    assert at >= 0, needle
    return at // PAGE


def zero_page(file: Path, page: int) -> None:
    data = bytearray(file.read_bytes())
    data[page * PAGE:(page + 1) * PAGE] = b"\0" * PAGE
    file.write_bytes(bytes(data))


def flip_body(file: Path, needle: str) -> None:
    data = bytearray(file.read_bytes())
    at = data.find(needle.encode())
    data[at + 20] ^= 0x01                        # inside the tag's x's: the row reads, its MAC fails
    file.write_bytes(bytes(data))


def tags(ledger: Ledger) -> set[str]:
    return {e["tag"] for e in ledger.events(RECORDS * 2) if e["event"] == "marker"}


def test_a_damaged_copy_is_repaired_record_by_record_from_both(tmp_path):
    rows = make_ledger(tmp_path)
    primary, mirror = tmp_path / PRIMARY_FILE, tmp_path / MIRROR_FILE
    lost = page_of(primary, tag(201))
    zero_page(primary, lost)                     # a page of the primary's log: integrity_check fails
    assert page_of(primary, tag(907)) != lost
    flip_body(mirror, tag(907))                  # and record 907's row fails its MAC in the mirror
    with Ledger.open(tmp_path, full=True) as ledger:
        assert ledger.rows == rows + 1                 # and the repair's own record
        assert any("damaged (integrity check failed)" in r for r in ledger.repairs), ledger.repairs
        assert any(MIRROR_FILE in r for r in ledger.repairs)
        assert tags(ledger) == {tag(i) for i in range(RECORDS) if i % 10}
        assert accounting_difference(ledger.meters) == 0 and ledger.meters["bills_in"] == 100 * (RECORDS // 10)
    with Ledger.open(tmp_path, read_only=True, full=True) as ledger:     # both copies whole again
        assert ledger.repairs == [] and ledger.rows == rows + 1


def test_both_copies_damaged_on_different_pages_lose_nothing(tmp_path):
    rows = make_ledger(tmp_path)
    zero_page(tmp_path / PRIMARY_FILE, page_of(tmp_path / PRIMARY_FILE, tag(301)))
    zero_page(tmp_path / MIRROR_FILE, page_of(tmp_path / MIRROR_FILE, tag(1101)))
    with Ledger.open(tmp_path, full=True) as ledger:
        assert ledger.rows == rows + 1
        assert sum("damaged" in r for r in ledger.repairs) == 2
        assert tag(301) in tags(ledger) and tag(1101) in tags(ledger)
    with Ledger.open(tmp_path, read_only=True, full=True) as ledger:
        assert ledger.repairs == []


def test_a_record_lost_from_both_copies_locks_the_machine(tmp_path):
    make_ledger(tmp_path)
    for name in (PRIMARY_FILE, MIRROR_FILE):
        zero_page(tmp_path / name, page_of(tmp_path / name, tag(501)))
    with pytest.raises(CriticalMemoryError, match="is bad in both copies"):
        Ledger.open(tmp_path, full=True)


def test_a_damaged_copy_seen_read_only_is_reported_with_what_repair_would_do(tmp_path, capsys):
    from firmware.cli import main

    make_ledger(tmp_path)
    primary, mirror = tmp_path / PRIMARY_FILE, tmp_path / MIRROR_FILE
    zero_page(primary, page_of(primary, tag(201)))
    flip_body(mirror, tag(907))
    before = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    assert main(["ledger", "verify", "--full", "--state-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    damaged, bad_record = [line.strip() for line in out.splitlines() if "needs repair" in line]
    assert damaged.startswith(f"needs repair: {PRIMARY_FILE}: damaged (integrity check failed), ")
    assert damaged.endswith("log records authentic in it; egm ledger verify --repair would rebuild it "
                            "from both copies, record by record")
    assert bad_record.startswith(f"needs repair: {MIRROR_FILE}: 1 log record(s) bad or missing")
    assert bad_record.endswith(f"egm ledger verify --repair would restore them from {PRIMARY_FILE}")
    assert "rebuilt" not in out and "restored" not in out and "in both copies" not in out
    after = {f.name: f.read_bytes() for f in tmp_path.iterdir()}
    assert {n: v for n, v in after.items() if n in before} == before      # nothing written

    assert main(["ledger", "verify", "--full", "--repair", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "; rebuilt from both copies, record by record" in out and f"; restored from {PRIMARY_FILE}" in out
    assert main(["ledger", "verify", "--full", "--state-dir", str(tmp_path)]) == 0
    assert "records verified in both copies" in capsys.readouterr().out
