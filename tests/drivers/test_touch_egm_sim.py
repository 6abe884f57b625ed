"""``egm sim touch``: the evdev simulator (``--port FIFO``) and the MicroTouch one (``--pty``) as
processes, read by the real drivers."""

from __future__ import annotations

from drivers.touch.evdev_driver import EvdevTouch
from drivers.touch.microtouch_driver import MicroTouch
from firmware.cli import main
from hal.events import DeviceOffline, DeviceOnline, Touch, TouchPhase
from tests.drivers.events import take, wait_for
from tests.drivers.sim_process import ask, egm_sim, line, pty_path, quit_sim


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


def test_a_microtouch_drag_through_the_simulator_process_on_a_pty():
    for args in (("--protocol", "microtouch", "--pty"), ("--pty",)):   # --pty: MicroTouch
        with egm_sim("touch", *args) as proc:
            path = pty_path(proc)
            with MicroTouch("touch", port=path, timeout=0.5) as dev:
                assert dev.next_event(2.0) == DeviceOnline("touch")
                assert ask(proc, "commands") == "FT MS"
                assert ask(proc, "raw 100 200") == "ok"
                assert ask(proc, "garbage") == "ok"
                assert ask(proc, "tear 2") == "ok"
                assert ask(proc, "raw 300 400") == "ok"          # torn: lost on the wire
                assert ask(proc, "raw 500 600") == "ok"
                assert ask(proc, "hold 3") == "ok"
                assert ask(proc, "lift") == "ok"
                assert take(dev, 3, timeout=5.0) == [Touch("touch", 100, 200, TouchPhase.DOWN),
                                                     Touch("touch", 500, 600, TouchPhase.MOVE),
                                                     Touch("touch", 500, 600, TouchPhase.UP)]
                assert ask(proc, "touch 960 540").count(" ") == 1   # the raw point it made
                assert ask(proc, "state").startswith("touching ")
                assert ask(proc, "lift") == "ok"
                assert ask(proc, "lift") == "error: lift: no finger on the sensor to lift"
                assert [e.phase for e in take(dev, 2, timeout=5.0)] == [TouchPhase.DOWN,
                                                                         TouchPhase.UP]
                assert ask(proc, "unplug") == "ok"
                assert "port error" in wait_for(dev, DeviceOffline).reason
                assert ask(proc, "raw 1 1").startswith("error: raw: ")
            quit_sim(proc)


def test_evdev_on_a_pty_and_a_non_fifo_port_are_refused(tmp_path, capsys):
    assert main(["sim", "touch", "--protocol", "evdev", "--pty"]) == 2
    assert "--protocol microtouch" in capsys.readouterr().err
    plain = tmp_path / "file"
    plain.write_text("")
    assert main(["sim", "touch", "--port", str(plain)]) == 2
    assert "not a FIFO" in capsys.readouterr().err
