"""A reader beside a running terminal (``egm meters|events --state-dir`` while it plays) never sees
critical memory "behind its high-water mark": the writer commits both copies before it advances the
mark, and the reader reads the mark before the copies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from firmware.ledger.ledger import Ledger

ROOT = Path(__file__).resolve().parents[2]
WRITER = """
import sys
from firmware.ledger.ledger import Ledger
with Ledger.open(sys.argv[1]) as ledger:
    print("open", flush=True)
    for i in range(400):
        ledger.event("reader_race", i=i)
"""


def test_a_read_only_reader_during_commits_never_reports_lost_records(tmp_path):
    Ledger.open(tmp_path).close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "open\n"
        reads = 0
        seen: list[int] = []
        while writer.poll() is None or reads == 0:
            with Ledger.open(tmp_path, read_only=True) as reader:      # raises if it saw records lost
                seen.append(len(reader.events(10_000)))
            reads += 1
        assert writer.wait(60) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.communicate()
    assert reads >= 5, f"only {reads} reads while the writer ran: the race was not exercised"
    assert seen == sorted(seen)                  # and what it read only ever grew
