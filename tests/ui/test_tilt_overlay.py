"""A lockup names what holds the cabinet: each open tilt in words an attendant reads (GLI-11: the
error condition is displayed), over a table that answers nothing; a halt shows its reason."""

from __future__ import annotations

import pygame
import pytest

from firmware.ui.betting import BetSlip
from firmware.ui.builders import overlay_detail_for, table_view, tilt_text
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_config, status_doc
from firmware.ui.games import game_ui
from tests.ui.conftest import SIZES


@pytest.mark.parametrize("tilt, words", [
    ("door:main", "MAIN DOOR OPEN"),
    ("door:cash_box", "CASH BOX DOOR OPEN"),
    ("device_fault:bill_validator.jam", "BILL VALIDATOR: JAM"),
    ("device_fault:bill_validator.stacker_full", "BILL VALIDATOR: STACKER FULL"),
    ("device_fault:shoe.deal", "CARD SHOE: COULD NOT DEAL"),
    ("device_disconnected:printer", "PRINTER NOT CONNECTED"),
    ("critical_memory:ledger", "MEMORY ERROR"),
    ("rng:drbg", "RANDOM NUMBER GENERATOR FAILURE"),
    ("self_test:software", "SELF-TEST FAILED: software"),
    ("device_fault:widget.sparks", "WIDGET: SPARKS"),           # a device or fault without a name
    ("mystery:thing", "FAULT mystery:thing"),
])
def test_each_condition_is_named(tilt, words):
    assert tilt_text(tilt) == words


@pytest.mark.parametrize("size", SIZES)
def test_the_tilt_overlay_lists_the_open_conditions(size):
    gui = game_ui(GameContext.from_config(demo_config(), "baccarat-war"))
    status = status_doc("baccarat-war", 2000, state="TILT", tilts=[
        {"tilt": "door:main", "reason": "main door open"},
        {"tilt": "device_fault:bill_validator.jam", "reason": "bill_validator: jam"}])
    view = table_view(gui, status, BetSlip(gui.ctx.limits, gui.ctx.chips))
    assert view.chrome.overlay == "OUT OF SERVICE - please call an attendant"
    assert view.chrome.overlay_detail == ("MAIN DOOR OPEN", "BILL VALIDATOR: JAM")
    frame = gui.screen().render(pygame.Surface(size), view)
    detail = frame.regions["overlay.detail"]
    assert frame.regions["overlay"].contains(detail.x, detail.y)
    shown = " ".join(frame.texts_in("overlay.detail"))
    assert "MAIN DOOR OPEN" in shown and "BILL VALIDATOR: JAM" in shown
    assert frame.hits == []                                        # a lockup: nothing answers
    assert min(t.size for t in frame.texts) >= 18


def test_no_detail_outside_a_tilt_and_a_halt_shows_its_reason():
    assert overlay_detail_for(status_doc("baccarat-war", 0)) == ()
    assert overlay_detail_for(status_doc("baccarat-war", 0, state="HANDPAY", tilts=[{"tilt": "door:main"}])) == ()
    halted = status_doc("baccarat-war", 0, state="HALTED", halted="critical memory write failed: disk I/O error")
    assert overlay_detail_for(halted) == ("critical memory write failed: disk I/O error",)


def test_a_device_not_connected_is_shown_with_the_port_it_is_looked_for_on():
    assert tilt_text("device_disconnected:bill_validator", "/dev/ttyUSB0") == "BILL VALIDATOR NOT CONNECTED (/dev/ttyUSB0)"
    status = status_doc("baccarat-war", 0, state="TILT", tilts=[
        {"tilt": "device_disconnected:bill_validator", "reason": "bill_validator not connected (/dev/ttyUSB0): ...",
         "port": "/dev/ttyUSB0"},
        {"tilt": "device_disconnected:printer", "reason": "printer not connected"}])
    assert overlay_detail_for(status) == ("BILL VALIDATOR NOT CONNECTED (/dev/ttyUSB0)", "PRINTER NOT CONNECTED")
