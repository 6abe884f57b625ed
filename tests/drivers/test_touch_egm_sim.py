"""``egm sim touch --port FIFO``: the evdev simulator as a process, read by the real driver."""

from __future__ import annotations

import subprocess
import sys
import time

from drivers.touch.evdev_driver import EvdevTouch
from firmware.cli import main
from hal.events import DeviceOnline, Touch, TouchPhase


def test_a_two_finger_touch_through_the_simulator_process(tmp_path):
    fifo = str(tmp_path / "event0")
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "sim", "touch", "--port", fifo],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    try:
        assert proc.stdout.readline().strip() == fifo, proc.stderr.read()
        with EvdevTouch("touch", path=fifo, timeout=0.5) as dev:
            assert dev.next_event(2.0) == DeviceOnline("touch")
            proc.stdin.write("two-finger 10 20 30 40\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "ok"
            got, deadline = [], time.monotonic() + 5
            while len(got) < 4 and time.monotonic() < deadline:
                if (event := dev.next_event(0.1)) is not None:
                    got.append(event)
            assert got == [Touch("touch", 10, 20, TouchPhase.DOWN, 0),
                           Touch("touch", 30, 40, TouchPhase.DOWN, 1),
                           Touch("touch", 10, 20, TouchPhase.UP, 0),
                           Touch("touch", 30, 40, TouchPhase.UP, 1)]
            proc.stdin.write("move 1 1\n")             # slot 0 is not touching
            proc.stdin.flush()
            assert proc.stdout.readline().startswith("error: move: slot 0 is not touching")
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


def test_touch_on_a_pty_is_not_built_and_a_non_fifo_port_is_refused(tmp_path, capsys):
    assert main(["sim", "touch", "--pty"]) == 2
    assert "MicroTouch" in capsys.readouterr().err
    plain = tmp_path / "file"
    plain.write_text("")
    assert main(["sim", "touch", "--port", str(plain)]) == 2
    assert "not a FIFO" in capsys.readouterr().err
