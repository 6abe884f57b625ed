"""One default ``--state-dir``: ``egm run`` keeps critical memory where ``meters``, ``recall``,
``events``, ``ledger`` and ``simctl`` look for it when none is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from firmware.commands._common import default_state_dir
from tests.cli.processes import reaped


def egm(*argv: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware.cli", *argv], capture_output=True, text=True,
                          env=env, timeout=timeout)


def test_the_default_is_the_platform_data_dir_and_the_terminal_id(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_state_dir() == tmp_path / "egm" / "EGM-0001"
    assert default_state_dir("EGM-0042") == tmp_path / "egm" / "EGM-0042"


def test_every_reading_command_finds_the_terminal_run_without_state_dir(tmp_path):
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    state = tmp_path / "egm" / "EGM-0001"
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    with reaped(proc):
        deadline = time.monotonic() + 60
        while not (state / "control.sock").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.05)
        status = egm("simctl", "--json", "status", env=env)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["state"] in ("IDLE", "STARTING", "POWER_UP")
        stop = egm("simctl", "stop", env=env)
        assert stop.returncode == 0, stop.stderr
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    events = egm("events", "--last", "1", "--json", env=env)
    assert events.returncode == 0, events.stderr
    assert json.loads(events.stdout)[0]["event"] == "power_down"
    meters = egm("meters", "--json", env=env)
    assert meters.returncode == 0 and "games_played" in json.loads(meters.stdout)["meters"], meters.stderr
    recall = egm("recall", "--json", env=env)
    assert recall.returncode == 0 and json.loads(recall.stdout) == [], recall.stderr
    verify = egm("ledger", "verify", "--json", env=env)
    assert verify.returncode == 0 and json.loads(verify.stdout)["ok"], verify.stderr
