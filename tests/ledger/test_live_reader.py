"""A reader beside a running terminal (``egm meters|events --state-dir`` while it plays) never sees
critical memory "behind its high-water mark": the writer commits both copies before it advances the
mark, and the reader reads the mark before the copies."""

from __future__ import annotations

import multiprocessing

from firmware.ledger.ledger import Ledger

WRITES = 400


def _write(state_dir: str, started) -> None:
    with Ledger.open(state_dir) as ledger:
        started.set()
        for i in range(WRITES):
            ledger.event("reader_race", i=i)


def test_a_read_only_reader_during_commits_never_reports_lost_records(tmp_path):
    Ledger.open(tmp_path).close()
    ctx = multiprocessing.get_context("spawn")
    started = ctx.Event()
    writer = ctx.Process(target=_write, args=(str(tmp_path), started))
    writer.start()
    try:
        assert started.wait(60)
        reads = 0
        seen: list[int] = []
        while writer.is_alive() or reads == 0:
            with Ledger.open(tmp_path, read_only=True) as reader:      # raises if it saw records lost
                seen.append(len(reader.events(10_000)))
            reads += 1
        writer.join(60)
    finally:
        if writer.is_alive():
            writer.kill()
    assert writer.exitcode == 0
    assert reads >= 5, f"only {reads} reads while the writer ran: the race was not exercised"
    assert seen == sorted(seen)                  # and what it read only ever grew
