"""``egm host``: bad input is one clear line and a non-zero exit; commands are queued for ``serve``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from host.store import HostStore

EGM = [sys.executable, "-m", "firmware.cli", "host"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*EGM, *args], capture_output=True, text=True, timeout=60)


def test_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    cases = [
        (["meters", "--state-dir", str(tmp_path / "none"), "--json"], "no host store"),
        (["meters", "--state-dir", str(tmp_path), "--db", "bogus://x", "--json"], "unsupported host database URL"),
        (["disable", "--state-dir", str(tmp_path), "bad id!"], "invalid terminal id"),
        (["set-time", "--state-dir", str(tmp_path), "T1", "--iso", "yesterday"], "not an ISO 8601 time"),
        (["serve", "--state-dir", str(tmp_path / "h"), "--listen", "1"], "no casino CA"),
    ]
    (tmp_path / "junk.db").write_text("not a database")
    cases.append((["floor", "--state-dir", str(tmp_path), "--db", str(tmp_path / "junk.db")], "cannot open host database"))
    for args, message in cases:
        proc = run(*args)
        assert proc.returncode != 0, args
        assert message in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_commands_are_queued_for_the_running_host(tmp_path: Path) -> None:
    HostStore.open(str(tmp_path / "host.db")).close()          # the host's store exists
    proc = run("disable", "--state-dir", str(tmp_path), "EGM-0001", "--reason", "audit", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["type"] == "disable"
    with HostStore.open(str(tmp_path / "host.db")) as store:
        assert store.take_commands() == [("EGM-0001", "disable", {"reason": "audit"})]
        assert store.take_commands() == []
