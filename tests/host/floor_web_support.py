"""A floor page on a temporary host store, its operators, and a logged-in browser-less client
(FastAPI's TestClient over https://testserver, so the Secure cookie is sent)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from host.store import HostStore
from host.store_operators import Operators
from host.web.app import create_app
from host.web.auth import LoginThrottle

PASSWORDS = {"ann": "attendant-pass-1", "maria": "manager-pass-1", "otto": "auditor-pass-1"}
ROLES = {"ann": "attendant", "maria": "floor-manager", "otto": "auditor"}
VALIDATION = "001234567890123456"
HOSTILE = "<script>alert(1)</script>"


def populate(store: HostStore) -> None:
    """T1: meters, a round, a door tilt and a voucher; T2: just a hello; a terminal id with markup."""
    now = datetime.now(UTC)
    seq = iter(range(1, 100))

    def record(term: str, type_: str, body: dict[str, Any]) -> None:
        store.record(term, next(seq), type_, now - timedelta(seconds=1), body)

    record("T1", "meters", {"meters": {"coin_in": 1500, "coin_out": 900, "bills_in": 2000, "ticket_out": 0},
                            "credits": 1100, "denomination": 1})
    record("T1", "round", {"record": {"round_id": "R-77", "game": "baccarat-war", "cards": ["Qs", "2d"]}})
    record("T1", "event", {"name": "cabinet.tilt_raised", "data": {"tilt": "door:main", "reason": "main door open"}})
    record("T1", "event", {"name": "ticket_out", "data": {"cents": 500, "validation": VALIDATION}})
    store.record("T2", 1, "hello", now, {"software": "x"})
    store.record(HOSTILE, 1, "hello", now, {"software": "x"})


def make_app(url: str | Path, throttle: LoginThrottle | None = None):
    """The floor page on the database at ``url`` (a directory: SQLite in it)."""
    store = HostStore.open(str(url / "host.db") if isinstance(url, Path) else url)
    operators = Operators(store)
    for name, role in ROLES.items():
        operators.add(name, role, PASSWORDS[name])
    populate(store)
    return create_app(store, secret_key="k" * 40, throttle=throttle), store, operators


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "the page has a form with a CSRF token"
    return found.group(1)


def client(app) -> TestClient:
    return TestClient(app, base_url="https://testserver", follow_redirects=False)


def logged_in(app, name: str) -> tuple[TestClient, str]:
    """A client logged in as ``name`` and its session's CSRF token."""
    c = client(app)
    token = csrf_of(c.get("/login").text)
    r = c.post("/login", data={"name": name, "password": PASSWORDS[name], "csrf": token})
    assert r.status_code == 303 and r.headers["location"] == "/floor", r.text
    return c, csrf_of(c.get("/floor").text)
