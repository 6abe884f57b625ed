"""``egm sim touch --port FIFO``: the evdev simulator as a process, read by the real driver."""

from __future__ import annotations

from drivers.touch.evdev_driver import EvdevTouch
from firmware.cli import main
from hal.events import DeviceOnline, Touch, TouchPhase
from tests.drivers.events import take
from tests.drivers.sim_process import ask, egm_sim, line, quit_sim


def test_a_two_finger_touch_through_the_simulator_process(tmp_path):
    fifo = str(tmp_path / "event0")
    with egm_sim("touch", "--port", fifo) as proc:
        assert line(proc) == fifo, proc.stderr.read()
        with EvdevTouch("touch", path=fifo, timeout=0.5) as dev:
            assert dev.next_event(2.0) == DeviceOnline("touch")
            assert ask(proc, "two-finger 10 20 30 40") == "ok"
            got = take(dev, 4, timeout=5.0)
            assert got == [Touch("touch", 10, 20, TouchPhase.DOWN, 0),
                           Touch("touch", 30, 40, TouchPhase.DOWN, 1),
                           Touch("touch", 10, 20, TouchPhase.UP, 0),
                           Touch("touch", 30, 40, TouchPhase.UP, 1)]
            # slot 0 is not touching
            assert ask(proc, "move 1 1").startswith("error: move: slot 0 is not touching")
        quit_sim(proc)


def test_touch_on_a_pty_is_not_built_and_a_non_fifo_port_is_refused(tmp_path, capsys):
    assert main(["sim", "touch", "--pty"]) == 2
    assert "MicroTouch" in capsys.readouterr().err
    plain = tmp_path / "file"
    plain.write_text("")
    assert main(["sim", "touch", "--port", str(plain)]) == 2
    assert "not a FIFO" in capsys.readouterr().err
