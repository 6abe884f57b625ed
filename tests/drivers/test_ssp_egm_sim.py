"""``egm sim bill-validator --protocol ssp --pty``: the SSP simulator as a process (eSSP when
``EGM_SIM_SSP_FIXED_KEY`` is set), driven from its standard input, talking to the real driver."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from drivers.ssp.driver import SspValidator
from firmware.cli import main
from hal.events import NoteEscrowed, NoteStacked

TEST_FIXED_KEY = "0F1E2D3C4B5A6978"          # a test key only


def _wait_for(dev, kind, timeout=5.0):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        event = dev.next_event(0.1)
        if event is not None:
            seen.append(event)
            if isinstance(event, kind):
                return event
    raise AssertionError(f"no {kind.__name__} within {timeout} s; saw {seen}")


def test_a_20_note_through_the_essp_simulator_process_and_the_real_driver():
    env = dict(os.environ, EGM_SIM_SSP_FIXED_KEY=TEST_FIXED_KEY)
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "sim", "bill-validator",
                             "--pty", "--protocol", "ssp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1,
                            env=env)
    try:
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/pts/"), proc.stderr.read()
        with SspValidator("validator", port=path, timeout=0.5, poll_interval=0.02,
                          encryption=True, fixed_key=TEST_FIXED_KEY) as dev:
            dev.enable([2000])
            proc.stdin.write("encrypted\nnote 20\n")
            proc.stdin.flush()
            assert [proc.stdout.readline().strip() for _ in range(2)] == ["yes", "ok"]
            assert _wait_for(dev, NoteEscrowed).value_cents == 2000
            dev.stack()
            assert _wait_for(dev, NoteStacked).value_cents == 2000
        proc.stdin.write("cashbox\nquit\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "1"
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


def test_a_bad_fixed_key_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.setenv("EGM_SIM_SSP_FIXED_KEY", "12")
    assert main(["sim", "bill-validator", "--pty", "--protocol", "ssp"]) == 2
    assert "16 hex digits" in capsys.readouterr().err
