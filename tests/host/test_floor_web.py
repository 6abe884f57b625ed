"""The floor page (host/web/) without a browser: roles enforced on the server, CSRF, logins and
their throttling, hostile input, and every command recorded with who sent it (docs/floor-web.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from sqlalchemy import create_engine

from host import store_operators
from host.store_schema import metadata
from host.web.auth import LoginThrottle
from host.web.serve import session_secret
from tests.host.floor_web_support import HOSTILE, VALIDATION, client, csrf_of, logged_in, make_app


@pytest.fixture(autouse=True)
def quick_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id with its smallest cost: the tests check who may log in, not the hash's strength."""
    monkeypatch.setattr(store_operators, "_hasher", PasswordHasher(time_cost=1, memory_cost=8, parallelism=1))


@pytest.fixture(params=["sqlite", "postgresql"])
def floor(request: pytest.FixtureRequest, tmp_path: Path):
    """The page on SQLite and on PostgreSQL (tests/host/test_store.py's server: skipped, saying why,
    where none answers)."""
    url = tmp_path if request.param == "sqlite" else request.getfixturevalue("pg_url")
    app, store, operators = make_app(url)
    yield app, store, operators
    store.close()
    if request.param == "postgresql":
        engine = create_engine(url)
        metadata.drop_all(engine)
        engine.dispose()


def queued(store) -> list:
    return store.take_commands()


def test_the_session_cookie_is_secure_httponly_samesite_strict(floor) -> None:
    app, _, _ = floor
    r = client(app).get("/login")
    cookie = r.headers["set-cookie"].lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    assert "script-src 'self'" in r.headers["content-security-policy"]


def test_pages_need_a_login(floor) -> None:
    app, _, _ = floor
    c = client(app)
    assert c.get("/floor").headers["location"] == "/login"
    assert c.get("/terminals/T1").status_code == 303
    assert c.get("/floor/grid", headers={"X-Requested-With": "fetch"}).status_code == 401


def test_a_bad_login_is_refused_and_logged(floor) -> None:
    app, _, operators = floor
    c = client(app)
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"name": "maria", "password": "wrong-password", "csrf": token})
    assert r.status_code == 401 and "Wrong name or password" in r.text
    r = c.post("/login", data={"name": "nobody", "password": "whatever-pass", "csrf": token})
    assert r.status_code == 401
    assert c.get("/floor").status_code == 303                 # still not logged in
    log = operators.log()
    assert [(x["operator"], x["action"], x["result"]) for x in log[:2]] == [
        ("nobody", "login", "refused"), ("maria", "login", "refused")]


def test_login_without_the_csrf_token_is_refused(floor) -> None:
    app, _, _ = floor
    c = client(app)
    c.get("/login")
    r = c.post("/login", data={"name": "maria", "password": "manager-pass-1"})
    assert r.status_code == 403
    assert c.get("/floor").status_code == 303


def test_failed_logins_are_throttled(tmp_path: Path) -> None:
    now = [0.0]
    app, store, operators = make_app(tmp_path, LoginThrottle(free=3, base=2.0, cap=60.0, clock=lambda: now[0]))
    try:
        c = client(app)
        token = csrf_of(c.get("/login").text)
        for _ in range(3):
            assert c.post("/login", data={"name": "maria", "password": "bad-password", "csrf": token}).status_code == 401
        r = c.post("/login", data={"name": "maria", "password": "manager-pass-1", "csrf": token})
        assert r.status_code == 429 and "try again in 2 s" in r.text       # even the right password waits
        now[0] += 2.5
        r = c.post("/login", data={"name": "maria", "password": "manager-pass-1", "csrf": token})
        assert r.status_code == 303
        assert operators.log()[1]["result"] == "throttled"
    finally:
        store.close()


def test_an_attendant_cannot_disable(floor) -> None:
    app, store, operators = floor
    c, token = logged_in(app, "ann")
    r = c.post("/terminals/T1/disable", data={"csrf": token})
    assert r.status_code == 403 and "attendant may not" in r.text
    assert queued(store) == []
    assert operators.log()[0]["action"] == "forbidden" and operators.log()[0]["operator"] == "ann"
    for action in ("enable", "set-time"):
        assert c.post(f"/terminals/T1/{action}", data={"csrf": token}).status_code == 403
    assert queued(store) == []
    page = c.get("/terminals/T1").text
    assert 'action="/terminals/T1/disable"' not in page and 'action="/terminals/T1/send-meters"' in page        # the buttons follow the role too
    r = c.post("/terminals/T1/send-meters", data={"csrf": token})
    assert r.status_code == 303
    assert queued(store) == [("T1", "send_meters", {})]
    line = operators.log(terminal="T1")[0]
    assert (line["operator"], line["role"], line["action"], line["result"][:8]) == ("ann", "attendant", "send_meters", "queued #")
    assert c.get("/operator-log").status_code == 403


def test_an_auditor_reads_everything_and_sends_nothing(floor) -> None:
    app, store, _ = floor
    c, token = logged_in(app, "otto")
    for action in ("disable", "enable", "send-meters", "set-time"):
        assert c.post(f"/terminals/T1/{action}", data={"csrf": token}).status_code == 403
    assert queued(store) == []
    for path in ("/floor", "/terminals/T1", "/operator-log", f"/vouchers?validation={VALIDATION}"):
        assert c.get(path).status_code == 200, path
    assert "forbidden" in c.get("/operator-log").text


def test_a_floor_manager_disables_through_the_command_queue(floor) -> None:
    app, store, operators = floor
    c, token = logged_in(app, "maria")
    assert c.post("/terminals/T1/disable", data={"csrf": "forged", "reason": "x"}).status_code == 403
    assert queued(store) == []
    r = c.post("/terminals/T1/disable", data={"csrf": token, "reason": "cash box  check"})
    assert r.status_code == 303 and r.headers["location"] == "/terminals/T1"
    assert queued(store) == [("T1", "disable", {"reason": "cash box check"})]
    page = c.get("/terminals/T1").text
    assert "Disable queued for T1" in page
    line = operators.log(terminal="T1")[0]
    assert (line["operator"], line["action"], line["detail"]) == ("maria", "disable", "reason=cash box check")
    assert c.post("/terminals/T1/set-time", data={"csrf": token, "iso": "yesterday"}).status_code == 400
    assert c.post("/terminals/T1/set-time", data={"csrf": token, "iso": "2026-01-02T03:04:05"}).status_code == 400
    assert queued(store) == []
    assert c.post("/terminals/T1/set-time", data={"csrf": token, "iso": "2026-01-02T03:04:05+00:00"}).status_code == 303
    assert queued(store) == [("T1", "set_time", {"iso": "2026-01-02T03:04:05+00:00"})]


def test_hostile_terminal_ids_are_escaped_and_unknown_ones_are_404(floor) -> None:
    app, store, _ = floor
    c, token = logged_in(app, "maria")
    grid = c.get("/floor/grid", headers={"X-Requested-With": "fetch"}).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in grid and HOSTILE not in grid
    assert 'href="/terminals/%3Cscript%3Ealert%281%29%3C%2Fscript%3E"' in grid                                # its link is URL-encoded
    r = c.get("/terminals/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E")
    assert r.status_code == 404 and "<img" not in r.text and "&lt;img src=x" in r.text
    assert c.get("/terminals/T9").status_code == 404
    assert c.post("/terminals/T9/disable", data={"csrf": token}).status_code == 404
    assert c.post("/terminals/%3Cb%3E/disable", data={"csrf": token}).status_code == 400
    assert queued(store) == []


def test_the_floor_and_a_terminal_page_show_what_the_host_stored(floor) -> None:
    app, _, _ = floor
    c, _ = logged_in(app, "ann")
    grid = c.get("/floor/grid", headers={"X-Requested-With": "fetch"}).text
    assert 'data-terminal="T1" data-state="tilt"' in grid and "$11.00" in grid
    assert 'data-terminal="T2" data-state="idle"' in grid
    page = c.get("/terminals/T1").text
    assert "door:main" in page and "main door open" in page and "R-77" in page and VALIDATION in page
    svg = c.get("/terminals/T1/meters.svg")
    assert svg.headers["content-type"] == "image/svg+xml" and b"<svg" in svg.content
    recall = c.get("/terminals/T1/rounds/2")
    assert recall.status_code == 200 and "baccarat-war" in recall.text and "Qs" in recall.text
    assert c.get("/terminals/T1/rounds/1").status_code == 404    # seq 1 is a meters report


def test_voucher_lookup(floor) -> None:
    app, _, operators = floor
    c, _ = logged_in(app, "ann")
    r = c.get("/vouchers", params={"validation": "0012-3456-7890-1234-56"})
    assert r.status_code == 200 and "$5.00" in r.text and "ISSUED" in r.text
    assert c.get("/vouchers", params={"validation": "12<b>"}).status_code == 400
    assert c.get("/vouchers", params={"validation": "9" * 18}).status_code == 404
    assert [x["result"] for x in operators.log()[:2]] == ["unknown", "found"]


def test_a_disabled_operator_is_logged_out_at_the_next_click(floor) -> None:
    app, _, operators = floor
    c, _ = logged_in(app, "maria")
    assert c.get("/floor").status_code == 200
    operators.set_disabled("maria", True)
    assert c.get("/floor").status_code == 303
    r = c.post("/login", data={"name": "maria", "password": "manager-pass-1", "csrf": csrf_of(c.get("/login").text)})
    assert r.status_code == 401


def test_the_session_secret_is_private(tmp_path: Path) -> None:
    secret = session_secret(tmp_path)
    path = tmp_path / "web-session.key"
    assert len(secret) >= 32 and oct(path.stat().st_mode & 0o777) == "0o600"
    assert session_secret(tmp_path) == secret
    os.chmod(path, 0o644)
    with pytest.raises(Exception, match="may be read by others"):
        session_secret(tmp_path)


def test_states_from_the_store() -> None:
    from datetime import UTC, datetime, timedelta

    from host.web.floor_state import Thresholds, classify, money

    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    limits = Thresholds(offline_after_s=600, playing_within_s=30)

    def ago(s: float) -> str:
        return (now - timedelta(seconds=s)).isoformat()

    def state(last_seen: float, round_s: float | None = None, **row) -> str:
        base = {"last_seen": ago(last_seen), "disabled": False, "open_tilts": [], **row}
        return classify(base, None if round_s is None else ago(round_s), now, limits)["state"]

    assert state(5, 10) == "playing"
    assert state(5, 31) == "idle" and state(5) == "idle"
    assert state(5, 10, open_tilts=["door:main"]) == "tilt"
    assert state(5, 10, open_tilts=["door:main"], disabled=True) == "disabled"
    assert state(601, 10, disabled=True) == "offline"
    assert money(123456) == "$1,234.56" and money(-5) == "-$0.05" and money(None) == "-"
