"""The service menu inside the player's app (the cabinet's one window): the audit key turned on
opens it over the table, the technician logs in and works by touch, the deck's buttons stay with
the terminal meanwhile, and the key turned off logs the session out and gives the table back."""

from __future__ import annotations

import pytest

from firmware.ui.app import UiApp
from firmware.ui.demo import demo_config
from hal.events import Button, ButtonPressed, KeySwitch, KeyTurned
from tests.ui.service.conftest import login, settle, texts


@pytest.fixture
def cabinet(rig):
    """The player's app on a terminal with $5 and the demonstration's games."""
    return lambda: rig(app=UiApp, credits_cents=500, cfg=demo_config(), size=(1280, 720))


def key(r, on: bool) -> None:
    r.devices.io_board._emit(KeyTurned("io_board", KeySwitch.AUDIT, on))
    settle(r.app)


def test_the_audit_key_opens_the_service_menu_in_the_players_window_and_closes_it(cabinet):
    r = cabinet()
    app = r.app
    assert app.service_menu is None and "button.deal" in app.frame.regions     # the table
    key(r, True)
    assert r.terminal.status()["state"] == "SERVICE"
    assert app.servicing and app.service_menu is not None
    assert app.service_menu.state.page == "login" and "role.technician" in app.frame.regions
    assert "button.deal" not in app.frame.regions
    login(r, "technician")
    assert app.service_menu.state.role == "technician"
    assert "Logged in as TECHNICIAN" in texts(app, "message")
    # The deck's DEAL is the terminal's while the menu is open (it plays no round in SERVICE).
    r.devices.io_board._emit(ButtonPressed("io_board", Button.DEAL))
    settle(r.app)
    assert r.terminal.status()["rounds_played"] == 0 and app.slip.wagers == {}
    assert app.inbox.drain() == []
    key(r, False)
    settle(r.app)
    assert r.terminal.status()["state"] == "IDLE"
    assert app.service_menu is None and not app.servicing and "button.deal" in app.frame.regions
    # Turning the key off ended the session: the API says no one is logged in, and it logged the logout.
    assert r.api.session_info()["role"] is None
    assert any(e["event"] == "service_action" and e["action"] == "logout" and e["role"] == "technician"
               and e["result"] == "ok" for e in r.ledger.events(50))
    # Back on, the menu starts again at the login.
    key(r, True)
    assert app.service_menu.state.page == "login"


def test_touches_on_the_service_menu_never_reach_the_table(cabinet):
    r = cabinet()
    app = r.app
    key(r, True)
    r.devices.touch.touch_screen(*app.scaler.point(*app.frame.hit("role.auditor").rect.center))
    key(r, False)
    assert app.slip.wagers == {} and app.mode == "table"
