"""The simulator panel beside the game (``egm run --sim`` with a display): its buttons are the
simulated devices' controls, sent through the terminal's ``sim`` command to the simulators, and
the production drivers report what happened (a note credited, a door tilt, the audit key opening
the service menu, paper out)."""

from __future__ import annotations

import time

import pygame
import pytest

from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.config.schema import DEVICE_FIELDS
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.ui.actions import UiAction
from firmware.ui.app import UiApp
from firmware.ui.demo import demo_config
from firmware.ui.simpanel import PanelledApp, SimPanel
from hal.registry import parse_spec
from sim_hardware.rig import SimRig

FRAME = 1 / 30


@pytest.fixture
def desk(tmp_path):
    cfg = Config.model_validate({
        "games": demo_config().games.model_dump(),
        "devices": {"bill_validator": "sim:id003", "printer": "sim:tcl", "io_board": "sim:io", "touch": "none",
                    "shoe": "none"},
        "host": {"enabled": False}})
    specs = {slot: parse_spec(cls, getattr(cfg.devices, slot)) for slot, cls in DEVICE_FIELDS.items()
             if getattr(cfg.devices, slot) != "none"}
    rig = SimRig(specs, cfg.devices.settings)
    ledger = Ledger.open(tmp_path / "state")
    terminal = Terminal(cfg, ledger, RngService.seeded(3), Devices(**{s: rig.device(s) for s in specs}),
                        VoucherBook(ledger, terminal_id=cfg.terminal.id))
    terminal.register(sim=lambda words: rig.control(words))
    terminal.power_up()
    app = PanelledApp(UiApp(terminal, size=(1280, 720)), SimPanel(terminal, rig))
    app.step(FRAME)
    yield app
    rig.close()
    ledger.close()


def until(app, predicate, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"waited for {what}: {app.app.terminal.status()}"
        app.step(FRAME)
        time.sleep(0.005)


def press(app, name):
    """A click on the panel's button ``name`` (window pixels: right of the game)."""
    panel = app.panel
    x, y = panel.scaler.point(*panel.frame.hit(name).rect.center)
    app.step(FRAME, [pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=(x + app.game_size[0], y))])


def texts(app, region):
    return " | ".join(app.panel.frame.texts_in(region))


def test_the_panel_sits_beside_the_game_in_one_window(desk):
    app = desk
    assert app.surface.get_size() == (1280 + 320, 720)
    assert app.app.surface.get_size() == (1280, 720) and "button.deal" in app.app.frame.regions
    names = {h.name for h in app.panel.frame.hits}
    assert {"sim.note.20", "sim.note.100", "sim.bad_note", "sim.door.main", "sim.key.audit", "sim.paper",
            "sim.button.deal"} <= names
    assert "sim.ticket" not in names                     # no ticket printed yet: nothing to insert
    assert "sim.misread" not in names                    # no shoe fitted: no shoe controls


def test_panel_controls_reach_the_devices_through_their_drivers(desk):
    app = desk
    terminal = app.app.terminal
    until(app, lambda: terminal.status()["accepting_notes"], "the validator to take notes")
    for _ in range(20):                   # the validator takes a note only when it is ready for one
        press(app, "sim.note.20")
        until(app, lambda: not app.panel.pending, "the answer")
        if "Done: note 20" in texts(app, "sim.message"):
            break
        assert "No effect: note 20" in texts(app, "sim.message")
        time.sleep(0.05)
    until(app, lambda: terminal.status()["credits_cents"] == 2000, "the $20 note credited")
    assert "$20.00" in " ".join(app.app.frame.texts_in("meter.credit"))

    press(app, "sim.door.main")
    until(app, lambda: terminal.status()["state"] == "TILT", "the main door tilt")
    app.step(FRAME)
    assert app.panel.frame.hit("sim.door.main").action.arg == ("door", "close", "main")   # it now closes it
    assert "Close" in texts(app, "sim.door.main")
    press(app, "sim.door.main")
    until(app, lambda: terminal.status()["state"] == "IDLE", "the door closed")

    press(app, "sim.key.audit")
    until(app, lambda: app.app.service_menu is not None, "the service menu")
    assert "role.technician" in app.app.frame.regions
    press(app, "sim.key.audit")
    until(app, lambda: app.app.service_menu is None and terminal.status()["state"] == "IDLE", "the table back")

    press(app, "sim.paper")
    until(app, lambda: app.panel.frame.hit("sim.paper").action.arg == ("paper", "load"), "paper out shown")
    assert "Load" in texts(app, "sim.paper")


def test_a_refused_control_is_shown_and_changes_nothing(desk):
    app = desk
    terminal = app.app.terminal
    before = terminal.status()["credits_cents"]
    app.panel.press(UiAction("sim", ("note", "abc")))
    until(app, lambda: "Refused: note abc" in texts(app, "sim.message"), "the refusal")
    assert "a note is a whole number of dollars" in app.panel.message
    assert terminal.status()["credits_cents"] == before
