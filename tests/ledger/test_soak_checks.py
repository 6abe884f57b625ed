"""The soak's incremental checks (tests/ledger/soak.py) pass on a sound log and fail on a broken one:
each broken case is made with authentic records (or a changed byte), the way a defect would make it."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

import pytest

from firmware.ledger.ledger import Ledger
from firmware.ledger.store import PRIMARY_FILE
from host.store import HostStore
from tests.ledger.soak import CriticalMemory, HostView, SoakFailure

TERMINAL = "EGM-0001"
VOUCHER = "001234567890123456"


def _deal(ledger: Ledger, round_id: str) -> None:
    ledger._commit("round.deal", round_id, {
        "round_id": round_id, "game": "baccarat-war", "denom_cents": 1, "credits_before": ledger.credits_cents,
        "entry": {"trigger": "deal", "data": {"wagers": {"1": {"bac": 10}}}}})


def test_a_sound_log_passes_and_is_read_only_once(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        ledger.ticket_out(500, VOUCHER)
        ledger.meters_snapshot("event")
    memory = CriticalMemory(tmp_path)
    assert memory.read() == 4                           # ledger_created, bill, ticket_out, meters
    assert memory.read() == 0
    assert memory.meters["credits"] == 1500 and memory.printed == {VOUCHER: 500}
    assert memory.last_number == 4 and [r.kind for r in memory.reports.values()][-1] == "meters"


def test_a_changed_record_is_not_authentic(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
    conn = sqlite3.connect(tmp_path / PRIMARY_FILE)
    conn.execute("""UPDATE log SET body = replace(body, '2000', '9000') WHERE kind = 'bill'""")
    conn.commit()
    conn.close()
    with pytest.raises(SoakFailure, match="record 2 .bill. is not authentic"):
        CriticalMemory(tmp_path).read()


def test_a_voucher_credited_twice_is_found(tmp_path):
    memory = CriticalMemory(tmp_path)
    with Ledger.open(tmp_path) as ledger:
        ledger.ticket_in(500, VOUCHER)
        memory.read()
        ledger.ticket_in(500, VOUCHER)
    with pytest.raises(SoakFailure, match=f"voucher {VOUCHER} credited 2 times"):
        memory.read()


def test_a_round_dealt_while_another_is_open_is_a_lost_round(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        _deal(ledger, "round-a")
        ledger.open_round = None                        # what a defect forgetting the open round does
        _deal(ledger, "round-b")
    with pytest.raises(SoakFailure, match="round round-a was lost: round round-b dealt"):
        CriticalMemory(tmp_path).read()


def test_a_meters_snapshot_that_is_not_the_log_is_found(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        report = ledger.meters_report()
        report["meters"]["bills_in"] = 1000
        ledger._commit("meters", None, {"reason": "event", **report})
    with pytest.raises(SoakFailure, match="meters snapshot 3 differs from the log"):
        CriticalMemory(tmp_path).read()


@pytest.mark.parametrize("bills_in", [2000, 1000])
def test_the_hosts_meters_must_be_the_terminals(tmp_path, bills_in):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        report = ledger.meters_snapshot("event")        # reports 1 ledger_created, 2 bill, 3 meters
    memory = CriticalMemory(tmp_path)
    memory.read()
    db = tmp_path / "host.db"
    now = datetime.now(UTC)
    with HostStore.open(str(db)) as store:
        store.record(TERMINAL, 1, "event", now, {"name": "ledger_created", "data": {}})
        store.record(TERMINAL, 2, "event", now, {"name": "bill_in", "data": {}})
        store.record(TERMINAL, 3, "meters", now, {**report, "meters": {**report["meters"], "bills_in": bills_in}})
    host = HostView(db, TERMINAL)
    try:
        if bills_in == 2000:
            host.read(memory)
            assert host.stored == 3 and memory.reports == {}
        else:
            with pytest.raises(SoakFailure, match="the host's meters .report 3. differ"):
                host.read(memory)
    finally:
        host.close()


@pytest.mark.parametrize("details, allowed", [
    (["ledger-mirror.db: 1 log record(s) behind (record 9); restored from ledger.db",
      "ledger-mirror.db: meters did not match the log, rewritten from it"], True),
    (["ledger-mirror.db: meters did not match the log, rewritten from it"], False),
    (["ledger.db: 1 log record(s) bad or missing (record 9); restored from ledger-mirror.db"], False),
])
def test_only_the_mirrors_tail_may_be_repaired_after_a_kill(tmp_path, details, allowed):
    with Ledger.open(tmp_path) as ledger:
        ledger.event("critical_memory_repaired", details=details)
    memory = CriticalMemory(tmp_path)
    if allowed:
        memory.read()
        assert memory.repairs == details
    else:
        with pytest.raises(SoakFailure, match="start-up repaired more than the mirror's tail"):
            memory.read()
