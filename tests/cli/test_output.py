"""Output for people and for machines: tables by default, one JSON document with ``--json``
(CONTRACTS.md's shapes), never a Python dict or a line of JSON in a person's output."""

from __future__ import annotations

import json

import pytest

import firmware.cabinet.control
from firmware.cabinet.service import permission_table
from firmware.cli import main
from firmware.ledger.ledger import Ledger


@pytest.fixture
def state(tmp_path):
    with Ledger.open(tmp_path, denomination=1) as ledger:
        ledger.event("power_up")
        ledger.event("door_open", door="main")
    return tmp_path


def run(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def assert_for_people(out: str) -> None:
    """A table, and no raw data: no Python dict or list, no JSON."""
    assert "┃" in out or "│" in out, out
    for raw in ("{'", "['", '{"', '["', "True", "None"):
        assert raw not in out, (raw, out)


def test_events_are_a_table_with_each_events_details(capsys, state):
    out = run(capsys, "events", "--state-dir", str(state))
    assert_for_people(out)
    door = next(line for line in out.splitlines() if "door_open" in line)
    assert "door=main" in door
    assert out.index("door_open") < out.index("power_up")            # newest first


def test_events_json_is_one_document_in_the_contracts_shape(capsys, state):
    doc = json.loads(run(capsys, "events", "--state-dir", str(state), "--json"))
    assert [e["event"] for e in doc[:2]] == ["door_open", "power_up"]
    assert doc[0]["door"] == "main" and {"seq", "time", "event"} <= set(doc[0])


def test_meters_and_recall_are_tables_and_json_keeps_the_contract(capsys, state):
    out = run(capsys, "meters", "--state-dir", str(state))
    assert_for_people(out)
    assert "games_played" in out and "credits" in out
    doc = json.loads(run(capsys, "meters", "--state-dir", str(state), "--json"))
    assert {"meters", "credits"} <= set(doc) and doc["meters"]["games_played"] == 0
    assert json.loads(run(capsys, "recall", "--state-dir", str(state), "--json")) == []


def _answer(monkeypatch, answer):
    monkeypatch.setattr(firmware.cabinet.control, "request", lambda *a, **kw: answer)


def test_simctl_service_help_is_a_table_of_the_functions(capsys, monkeypatch, tmp_path):
    table = permission_table()
    _answer(monkeypatch, {"role": None, "session": ["login ROLE PIN", "logout", "session"], "yours": [],
                          "actions": table})
    out = run(capsys, "simctl", "--state-dir", str(tmp_path), "service", "help")
    assert_for_people(out)
    for action in table:
        assert action["action"] in out
    assert "login ROLE PIN, logout, session" in out
    doc = json.loads(run(capsys, "simctl", "--state-dir", str(tmp_path), "--json", "service", "help"))
    assert doc["actions"] == table


def test_simctl_service_meters_is_a_table_of_the_meters(capsys, monkeypatch, state):
    with Ledger.open(state, read_only=True) as ledger:
        report = ledger.meters_report()
    _answer(monkeypatch, report)
    out = run(capsys, "simctl", "--state-dir", str(state), "service", "meters")
    assert_for_people(out)
    assert any(line.split("│")[1].strip() == "games_played" for line in out.splitlines() if line.count("│") >= 3)
    assert json.loads(run(capsys, "simctl", "--state-dir", str(state), "--json", "service", "meters")) == report
