"""The demo-mode page: a technician starts demonstration play, plays rounds and stops it by touch;
the page shows the demo's state from the terminal, and the meters do not move."""

from __future__ import annotations

from tests.ui.service.conftest import actions, login, texts, touch, until


def test_a_technician_runs_demo_mode_from_its_page_and_the_meters_do_not_move(rig):
    r = rig()
    before = r.ledger.meters_report()["meters"]
    login(r, "technician")
    assert "menu.demo" in actions(r.app)
    touch(r, "menu.demo")
    app = r.app
    assert app.menu.state.page == "demo" and "Demo mode is off." in texts(app, "panel.demo")
    assert "button.demo_play" not in actions(app)                     # nothing to play before START
    touch(r, "button.demo_start")
    until(app, lambda: (r.terminal.status()["demo"] or {}).get("demo") and "ON" in texts(app, "panel.demo"),
          "demo mode on")
    touch(r, "button.demo_play10")
    until(app, lambda: (r.terminal.status()["demo"] or {}).get("rounds") == 10
          and "10 rounds played" in texts(app, "panel.demo"), "ten demo rounds")
    touch(r, "button.demo_stop")
    until(app, lambda: "Demo mode is off." in texts(app, "panel.demo"), "demo mode off")
    assert r.ledger.meters_report()["meters"] == before
    logged = [e["action"] for e in r.ledger.events(100) if e["event"] == "service_action"]
    assert {"demo start", "demo play", "demo stop"} <= set(logged)


def test_an_auditor_has_no_demo_page(rig):
    r = rig()
    login(r, "auditor")
    assert "menu.demo" not in actions(r.app)
