"""The load test's check (firmware/commands/_loadtest/check.py) on a host store filled by hand:
each kind of fault it must see, one at a time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from firmware.commands._loadtest.check import check, engine_for
from host.store import HostStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)
METERS = {"meters": {"bills_in": 500}, "credits": 500}
VOUCHER = "001234567890123456"


def _fill(store: HostStore, terminal: str, epoch: str, numbers: range) -> None:
    for n in numbers:
        body: dict = {"name": "door_open", "data": {"door": "main"}, "at": "x"}
        type_ = "event"
        if n == 2:
            type_, body = "round", {"record": {"round_id": f"r-{terminal}", "game": "baccarat-war"}, "at": "x"}
        if n == 3:
            type_, body = "meters", {**METERS, "credit_count": 500, "denomination": 1, "reason": "x", "at": "x"}
        store.record(terminal, n, type_, T0 + timedelta(seconds=n), body, epoch=epoch)


def _summary(terminal: str, last: int, epoch: str = "e1") -> dict:
    return {"terminal": terminal, "epoch": epoch, "last_report": last, "meters": METERS, "commands": []}


@pytest.fixture
def store(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'host.db'}"
    s = HostStore.open(url, clock=lambda: T0 + timedelta(seconds=30))
    yield s, engine_for(url)
    s.close()


def verdict(store, summaries, queued=None) -> dict:
    _, engine = store
    return check(engine, summaries, queued or {}, (T0, T0 + timedelta(seconds=60)))


def test_a_complete_floor_passes(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", range(1, 6))
    _fill(s, "B", "e1", range(1, 5))
    v = verdict(store, [_summary("A", 5), _summary("B", 4)])
    assert (v["lost"], v["duplicates"], v["unexpected"], v["meters_mismatch"], v["problems"]) == (0, 0, 0, 0, [])
    assert v["sent"] == v["stored"] == 9
    assert v["p50_ms"] is not None


def test_a_report_not_stored_is_lost(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", [1, 2, 3, 5])
    v = verdict(store, [_summary("A", 5)])
    assert v["lost"] == 1 and v["problems"]


def test_reports_of_another_epoch_do_not_count(store) -> None:
    s, _ = store
    _fill(s, "A", "e0", range(1, 6))                     # an earlier life of the critical memory
    _fill(s, "A", "e1", range(1, 3))
    assert verdict(store, [_summary("A", 5)])["lost"] == 3


def test_a_report_no_terminal_recorded_is_unexpected(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", range(1, 7))
    v = verdict(store, [_summary("A", 5)])
    assert v["unexpected"] == 1 and v["lost"] == 0 and v["problems"]


def test_a_round_stored_twice_and_a_voucher_paid_twice_are_duplicates(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", range(1, 4))
    s.record("A", 4, "round", T0, {"record": {"round_id": "r-A", "game": "baccarat-war"}, "at": "x"}, epoch="e1")
    for terminal in ("A", "B"):
        n = 5 if terminal == "A" else 1
        s.record(terminal, n, "event", T0, {"name": "ticket_in", "data": {"validation": VOUCHER, "cents": 100},
                                             "at": "x"}, epoch="e1")
    v = verdict(store, [_summary("A", 5), {**_summary("B", 1), "meters": None}])
    assert v["duplicates"] == 2 and v["lost"] == 0 and v["problems"]


def test_host_meters_that_are_not_the_last_snapshot_are_a_mismatch(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", range(1, 4))
    v = verdict(store, [{**_summary("A", 3), "meters": {"meters": {"bills_in": 600}, "credits": 600}}])
    assert v["meters_mismatch"] == 1 and v["problems"]


def test_a_command_not_applied_exactly_once_is_wrong(store) -> None:
    s, _ = store
    _fill(s, "A", "e1", range(1, 4))
    s.add_command("A", "disable", {"reason": "x"})
    s.record("A", 4, "event", T0, {"name": "host.command", "data": {"cmd": 1, "type": "disable", "seq": 1},
                                   "at": "x"}, epoch="e1")
    once = [{"cmd": 1, "type": "disable"}]
    assert verdict(store, [{**_summary("A", 4), "commands": once}], {"A": ["disable"]})["commands"]["wrong"] == 0
    twice = verdict(store, [{**_summary("A", 4), "commands": once * 2}], {"A": ["disable"]})
    assert twice["commands"]["wrong"] == 1 and twice["problems"]


def _clean_verdict() -> dict:
    """What check.py finds when the host's database holds everything once."""
    return {"sent": 5, "stored": 5, "lost": 0, "duplicates": 0, "unexpected": 0, "reports_per_second": 1.0,
            "p50_ms": 1.0, "p90_ms": 1.0, "p99_ms": 1.0, "max_ms": 1.0, "latency_from": "x", "kinds": {},
            "events": {}, "vouchers": {"redeemed": 0, "paid_twice": 0}, "meters_mismatch": 0,
            "commands": {"queued": 0, "terminals": 0, "wrong": 0}, "problems": [], "timeline": []}


def test_a_report_left_unacknowledged_or_a_refused_host_message_fails_the_run(tmp_path: Path) -> None:
    from firmware.commands._loadtest.run import Run, Settings, _document

    verdict = _clean_verdict()
    run = Run(Settings(terminals=1, rate=1, duration=1, processes=1), tmp_path)
    run.results["sim-0"] = {"errors": 0, "loop_ms_p99": 1.0}

    def terminal(outstanding: int, rejected: int) -> dict:
        return {**_summary("A", 5), "made": 5, "actions": {}, "outstanding": outstanding,
                "link": {"sent": 5, "resent": 0, "rejected": rejected}}

    assert _document(run, verdict, [terminal(0, 0)], {}, 0, 1.0)["ok"] is True
    assert _document(run, verdict, [terminal(2, 0)], {}, 0, 1.0)["ok"] is False
    assert _document(run, verdict, [terminal(0, 3)], {}, 0, 1.0)["ok"] is False


def test_a_load_not_offered_fails_the_run(tmp_path: Path) -> None:
    """Terminals that made fewer than 95% of terminals x rate x duration reports (a machine too small
    for the load generator and the floor together) fail the run, however well the host did."""
    from firmware.commands._loadtest.run import Run, Settings, _document

    verdict = _clean_verdict()
    run = Run(Settings(terminals=2, rate=0.5, duration=100, processes=1), tmp_path)
    run.results["sim-0"] = {"errors": 0, "loop_ms_p99": 1.0}

    def terminals(made: int) -> list[dict]:
        return [{**_summary(t, made), "made": made, "actions": {}, "outstanding": 0,
                 "link": {"sent": made, "resent": 0, "rejected": 0}} for t in ("A", "B")]

    assert _document(run, verdict, terminals(50), {}, 0, 100.0)["ok"] is True      # 100 of 100 asked
    short = _document(run, verdict, terminals(47), {}, 0, 100.0)                    # 94%
    assert short["ok"] is False
    assert any("could not generate the load" in p for p in short["problems"])
