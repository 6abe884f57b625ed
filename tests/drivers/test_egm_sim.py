"""``egm sim bill-validator --pty``: the simulator as a process, driven from its standard input,
talking to the real driver over the pty it prints (CONTRACTS.md ``egm sim``)."""

from __future__ import annotations

from drivers.id003.driver import Id003Validator
from drivers.id003.settings import USD_TABLE
from firmware.cli import main
from hal.events import DeviceOnline, NoteEscrowed, NoteStacked
from tests.drivers.events import wait_for
from tests.drivers.sim_process import ask_until, egm_sim, pty_path, quit_sim


def test_a_20_note_through_the_simulator_process_and_the_real_driver():
    with egm_sim("bill-validator", "--pty") as proc:
        path = pty_path(proc)
        with Id003Validator("validator", port=path, timeout=0.5, poll_interval=0.02) as dev:
            assert dev.next_event(2.0) == DeviceOnline("validator")
            dev.enable([d.cents for d in USD_TABLE])
            ask_until(proc, "note 20", "ok")          # a player inserts a $20 note once idle
            escrowed = wait_for(dev, NoteEscrowed)
            assert escrowed.value_cents == 2000
            dev.stack()
            stacked = wait_for(dev, NoteStacked)
            assert stacked.value_cents == 2000
        count = ask_until(proc, "cashbox", "1")        # the note reaches the cash box
        assert count == "1"
        quit_sim(proc)


def test_bad_protocols_are_clear_errors(capsys):
    assert main(["sim", "touch", "--pty", "--protocol", "elo"]) == 2
    assert "touch protocols built: evdev, microtouch" in capsys.readouterr().err
    assert main(["sim", "bill-validator", "--pty", "--protocol", "cctalk"]) == 2
    assert "protocols built: id003" in capsys.readouterr().err
