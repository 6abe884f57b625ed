"""``egm sim bill-validator --pty``: the simulator as a process, driven from its standard input,
talking to the real driver over the pty it prints (CONTRACTS.md ``egm sim``)."""

from __future__ import annotations

import subprocess
import sys
import time

from drivers.id003.driver import Id003Validator
from drivers.id003.settings import USD_TABLE
from firmware.cli import main
from hal.events import DeviceOnline, NoteEscrowed, NoteStacked


def _wait_for(dev, kind, timeout=5.0):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        event = dev.next_event(0.1)
        if event is None:
            continue
        seen.append(event)
        if isinstance(event, kind):
            return event, seen
    raise AssertionError(f"no {kind.__name__} within {timeout} s; saw {seen}")


def test_a_20_note_through_the_simulator_process_and_the_real_driver():
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "sim", "bill-validator", "--pty"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    try:
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/pts/"), proc.stderr.read()
        with Id003Validator("validator", port=path, timeout=0.5, poll_interval=0.02) as dev:
            assert dev.next_event(2.0) == DeviceOnline("validator")
            dev.enable([d.cents for d in USD_TABLE])
            deadline = time.monotonic() + 5
            while True:                               # a player inserts a $20 note once idle
                proc.stdin.write("note 20\n")
                proc.stdin.flush()
                if proc.stdout.readline().strip() == "ok" or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            escrowed, _ = _wait_for(dev, NoteEscrowed)
            assert escrowed.value_cents == 2000
            dev.stack()
            stacked, _ = _wait_for(dev, NoteStacked)
            assert stacked.value_cents == 2000
        deadline = time.monotonic() + 5                # the note reaches the cash box
        while True:
            proc.stdin.write("cashbox\n")
            proc.stdin.flush()
            count = proc.stdout.readline().strip()
            if count == "1" or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert count == "1"
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "bye"
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


def test_devices_not_built_yet_and_bad_protocols_are_clear_errors(capsys):
    assert main(["sim", "touch", "--pty"]) == 2
    assert "touch simulator is not built yet" in capsys.readouterr().err
    assert main(["sim", "bill-validator", "--pty", "--protocol", "cctalk"]) == 2
    assert "protocols built: id003" in capsys.readouterr().err
