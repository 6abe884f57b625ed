"""HostStore on both databases: ingest, derived state, vouchers exactly once, the command counter,
queries, reopening, and clear errors for bad URLs.

Every test that takes ``db_url`` runs twice: on a SQLite file in ``tmp_path`` and on a PostgreSQL
database made for this test session on a PostgreSQL server the session starts itself
(``own_postgres``, tests/host/conftest.py; its tables are dropped after each test). Only the
PostgreSQL runs are skipped, with the reason, when PostgreSQL is not installed.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import create_engine
from sqlalchemy.engine import make_url

from host import store_ingest
from host.store import HostStore, HostStoreError, Recorded, Redemption
from host.store_schema import metadata
from tests.host.conftest import T0, Clock

# --- helpers ----------------------------------------------------------------------------------------

def at(seq: int) -> datetime:
    """A deterministic sent_at per seq."""
    return T0 + timedelta(seconds=seq)


def event(store: HostStore, term: str, seq: int, name: str, **data: Any) -> Recorded:
    return store.record(term, seq, "event", at(seq), {"name": name, "data": data})


def issued(store: HostStore, term: str, seq: int, v: str, *, offline: bool | None = False) -> Recorded:
    """The issuer's ``voucher`` record in state ``issued``; ``offline=None``: one without the flag."""
    flag = {} if offline is None else {"offline_redemption": offline}
    return event(store, term, seq, "voucher", validation=v, state="issued", **flag)


def meters(store: HostStore, term: str, seq: int, credits: int, **tree: int) -> Recorded:
    body = {"meters": {"coin_in": tree.get("coin_in", 0), "nested": {"games_played": seq}},
            "credits": credits, "denomination": 1}
    return store.record(term, seq, "meters", at(seq), body)


def validation(i: int) -> str:
    return f"00{i:016d}"


def open_tilts(store: HostStore, term: str) -> list[str]:
    return next(t["open_tilts"] for t in store.terminals() if t["terminal"] == term)


def voucher(store: HostStore, v: str) -> dict[str, Any]:
    return next(x for x in store.vouchers() if x["validation"] == v)


def snapshot(store: HostStore) -> dict[str, Any]:
    """Everything the store will tell about terminal T1 and the floor."""
    return {"terminals": store.terminals(), "meters": store.meters(), "events": store.events(),
            "rounds": store.rounds(), "vouchers": store.vouchers(),
            "messages": store.messages("T1"), "sequence": store.sequence("T1")}


# --- ingest -----------------------------------------------------------------------------------------

def test_record_stores_the_message_as_received(store: HostStore, clock: Clock) -> None:
    body = {"software": "egm 0.1.0", "last_host_seq": None}
    sent = datetime(2025, 6, 1, 14, 0, 0, 250000, tzinfo=timezone(timedelta(hours=2)))
    assert store.record("T1", 7, "hello", sent, body) == Recorded(stored=True, seq=7)
    [m] = store.messages("T1")
    assert m["seq"] == 7 and m["type"] == "hello" and m["body"] == body
    assert datetime.fromisoformat(m["sent_at"]) == sent                    # the same instant
    assert datetime.fromisoformat(m["sent_at"]).utcoffset() == timedelta(0)
    assert datetime.fromisoformat(m["received_at"]) == clock.now
    # a meter at the top of the 64-bit range survives both databases' JSON
    huge = {"meters": {"coin_in": 2**63 - 1}, "credits": 2**63 - 1}
    store.record("T1", 8, "meters", at(8), huge)
    assert store.meters("T1") == {"T1": huge}
    assert store.terminals()[0]["credits"] == 2**63 - 1


def test_duplicate_changes_nothing(store: HostStore, clock: Clock) -> None:
    event(store, "T1", 1, "ticket_out", cents=500, validation=validation(1))
    meters(store, "T1", 2, credits=10)
    before = snapshot(store)
    clock.tick(60)
    # the same seqs again, with different content: not stored, nothing moves (a conflict: the
    # terminal numbered two reports alike)
    assert event(store, "T1", 1, "ticket_in", cents=999, validation=validation(1)) == \
        Recorded(stored=False, seq=1, conflict=True)
    assert meters(store, "T1", 2, credits=99) == Recorded(stored=False, seq=2, conflict=True)
    assert meters(store, "T1", 2, credits=10) == Recorded(stored=False, seq=2, conflict=False)
    assert store.record("T1", 1, "hello", at(1), {"software": "x", "last_host_seq": 0}).stored is False
    assert snapshot(store) == before
    assert store.terminals()[0]["messages"] == 2
    assert store.terminals()[0]["last_seen"] == T0.isoformat()


def test_concurrent_duplicates_store_once(open_store: Callable[[], HostStore]) -> None:
    stores = [open_store(), open_store()]
    n, workers = 40, 4
    barrier = threading.Barrier(workers)

    def work(i: int) -> list[bool]:
        s = stores[i % 2]
        barrier.wait()
        return [meters(s, "T1", seq, credits=seq).stored for seq in range(n)]

    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(work, range(workers)))
    for seq in range(n):
        assert sum(r[seq] for r in results) == 1, f"seq {seq} stored {sum(r[seq] for r in results)}x"
    [floor] = stores[0].terminals()
    assert floor["messages"] == n and floor["last_seq"] == n - 1 and floor["credits"] == n - 1
    assert stores[0].sequence("T1") == {"count": n, "first": 0, "last": n - 1, "gaps": []}


def test_record_is_all_or_nothing(store: HostStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: Any) -> None:
        raise RuntimeError("derivation failed")

    monkeypatch.setitem(store_ingest._EVENT_EFFECTS, "ticket_out", broken)
    with pytest.raises(RuntimeError, match="derivation failed"):
        event(store, "T1", 1, "ticket_out", cents=500, validation=validation(1))
    assert store.messages("T1") == [] and store.events() == [] and store.terminals() == []
    monkeypatch.undo()
    assert event(store, "T1", 1, "ticket_out", cents=500, validation=validation(1)).stored
    assert voucher(store, validation(1))["state"] == "issued"


def test_record_refuses_misuse(store: HostStore) -> None:
    with pytest.raises(HostStoreError, match="timezone-aware"):
        store.record("T1", 1, "hello", datetime(2025, 1, 1), {})
    with pytest.raises(HostStoreError, match="seq"):
        store.record("T1", -1, "hello", T0, {})
    with pytest.raises(HostStoreError, match="terminal id"):
        store.record("", 1, "hello", T0, {})
    with pytest.raises(HostStoreError, match="JSON object"):
        store.record("T1", 1, "hello", T0, [1, 2])  # type: ignore[arg-type]
    assert store.messages("T1") == []


# --- meters -----------------------------------------------------------------------------------------

def test_latest_meters_is_the_highest_seq(store: HostStore) -> None:
    meters(store, "T1", 5, credits=100, coin_in=500)
    meters(store, "T1", 3, credits=50, coin_in=300)          # older snapshot arriving late
    meters(store, "T2", 1, credits=7)
    latest = store.meters()
    assert latest["T1"]["credits"] == 100 and latest["T1"]["meters"]["coin_in"] == 500
    assert latest["T1"] == {"meters": {"coin_in": 500, "nested": {"games_played": 5}},
                            "credits": 100, "denomination": 1}
    assert set(latest) == {"T1", "T2"}
    assert store.meters("T2") == {"T2": latest["T2"]}
    assert store.meters("nobody") == {}
    history = store.meter_history("T1")
    assert [h["seq"] for h in history] == [5, 3]
    assert history[1]["meters"]["credits"] == 50 and history[0]["sent_at"] == at(5).isoformat()
    assert [h["seq"] for h in store.meter_history("T1", last=1)] == [5]
    meters(store, "T1", 9, credits=0)
    assert store.meters("T1")["T1"]["credits"] == 0
    assert next(t for t in store.terminals() if t["terminal"] == "T1")["credits"] == 0


# --- tilts ------------------------------------------------------------------------------------------

def test_tilts_open_and_close(store: HostStore) -> None:
    event(store, "T1", 1, "cabinet.tilt_raised", tilt="door.main", reason="main door open")
    event(store, "T1", 2, "cabinet.tilt_raised", tilt="printer.paper", reason="paper out")
    assert open_tilts(store, "T1") == ["door.main", "printer.paper"]
    event(store, "T1", 3, "cabinet.tilt_cleared", tilt="door.main")
    assert open_tilts(store, "T1") == ["printer.paper"]
    event(store, "T2", 1, "cabinet.tilt_raised", tilt="door.main", reason="main door open")
    assert open_tilts(store, "T2") == ["door.main"]           # per terminal
    assert open_tilts(store, "T1") == ["printer.paper"]


def test_late_tilt_events_do_not_undo_newer_ones(store: HostStore) -> None:
    # a clear arriving before its (older) raise: the raise stays closed
    event(store, "T1", 5, "cabinet.tilt_cleared", tilt="door.main")
    event(store, "T1", 4, "cabinet.tilt_raised", tilt="door.main", reason="late")
    assert open_tilts(store, "T1") == []
    # a raise, then an older clear arriving late: still open
    event(store, "T1", 20, "cabinet.tilt_raised", tilt="bill.jam", reason="jam")
    event(store, "T1", 15, "cabinet.tilt_cleared", tilt="bill.jam")
    assert open_tilts(store, "T1") == ["bill.jam"]
    # a newer clear closes it
    event(store, "T1", 21, "cabinet.tilt_cleared", tilt="bill.jam")
    assert open_tilts(store, "T1") == []


def test_power_up_closes_open_tilts(store: HostStore) -> None:
    event(store, "T1", 1, "cabinet.tilt_raised", tilt="door.main", reason="open")
    event(store, "T1", 2, "cabinet.tilt_raised", tilt="printer.paper", reason="out")
    event(store, "T2", 1, "cabinet.tilt_raised", tilt="door.main", reason="open")
    event(store, "T1", 10, "power_up")
    assert open_tilts(store, "T1") == [] and open_tilts(store, "T2") == ["door.main"]
    # a raise older than the power-up, arriving after it: the power-up already closed it
    event(store, "T1", 8, "cabinet.tilt_raised", tilt="door.belly", reason="late")
    assert open_tilts(store, "T1") == []
    # what is still wrong is raised again after the power-up
    event(store, "T1", 11, "cabinet.tilt_raised", tilt="door.main", reason="still open")
    assert open_tilts(store, "T1") == ["door.main"]
    # an older power-up arriving late does not close the newer raise
    event(store, "T1", 9, "power_up")
    assert open_tilts(store, "T1") == ["door.main"]


# --- vouchers ---------------------------------------------------------------------------------------

def test_voucher_lifecycle(store: HostStore) -> None:
    v1 = validation(1)
    issued(store, "T1", 1, v1)
    event(store, "T1", 2, "ticket_out", cents=500, validation=v1, cashable=True)
    assert voucher(store, v1) == {"validation": v1, "amount_cents": 500, "issued_by": "T1",
                                  "state": "issued", "held_by": None, "redeemed_by": None}
    assert store.authorize_redemption(v1, "T2") == Redemption(True, 500, "approved")
    assert store.authorize_redemption(v1, "T2") == Redemption(True, 500, "approved")   # retry
    assert store.authorize_redemption(v1, "T3") == Redemption(False, 0, "being redeemed at T2")
    assert voucher(store, v1)["state"] == "authorised" and voucher(store, v1)["held_by"] == "T2"
    assert store.release_redemption(v1, "T3") is False        # not its hold
    assert store.release_redemption(v1, "T2") is True
    assert store.release_redemption(v1, "T2") is False        # nothing held any more
    assert voucher(store, v1)["state"] == "issued" and voucher(store, v1)["held_by"] is None
    assert store.authorize_redemption(v1, "T3") == Redemption(True, 500, "approved")
    event(store, "T3", 1, "ticket_in", cents=500, validation=v1)
    assert voucher(store, v1) == {"validation": v1, "amount_cents": 500, "issued_by": "T1",
                                  "state": "redeemed", "held_by": None, "redeemed_by": "T3"}
    assert store.authorize_redemption(v1, "T2") == Redemption(False, 0, "already redeemed")
    assert store.authorize_redemption(v1, "T3") == Redemption(False, 0, "already redeemed")
    assert store.release_redemption(v1, "T3") is False
    # a second redemption report does not move the voucher
    event(store, "T2", 1, "ticket_in", cents=500, validation=v1)
    assert voucher(store, v1)["redeemed_by"] == "T3"


def test_a_voucher_its_issuer_may_pay_offline_is_approved_there_only(store: HostStore) -> None:
    # campaign item 2: the issuer may pay it while cut off from the host, so no other terminal
    # may ever be approved for it; nor for a voucher whose issuer's terms have not arrived.
    v5, v6, v7 = validation(5), validation(6), validation(7)
    issued(store, "T1", 1, v5, offline=True)
    event(store, "T1", 2, "ticket_out", cents=500, validation=v5)
    event(store, "T1", 3, "ticket_out", cents=600, validation=v6)          # its issued record is late
    issued(store, "T1", 4, v7, offline=None)                               # an old terminal's record
    event(store, "T1", 5, "ticket_out", cents=700, validation=v7)
    for v in (v5, v6, v7):
        refusal = store.authorize_redemption(v, "T2")
        assert not refusal.approved and refusal.reason.startswith("its issuer T1 may pay it offline")
        assert voucher(store, v)["state"] == "issued"
    assert store.authorize_redemption(v5, "T1") == Redemption(True, 500, "approved")   # the issuer
    issued(store, "T1", 6, v6)                                               # now known: host only
    assert store.authorize_redemption(v6, "T2") == Redemption(True, 600, "approved")
    issued(store, "T1", 7, v5, offline=False)          # a second issued record changes no terms
    assert store.release_redemption(v5, "T1")
    assert not store.authorize_redemption(v5, "T2").approved


def test_voided_unknown_and_unauthorised_vouchers(store: HostStore) -> None:
    v2, v3, v4 = validation(2), validation(3), validation(4)
    event(store, "T1", 1, "ticket_out", cents=250, validation=v2)
    event(store, "T1", 2, "voucher", validation=v2, state="void", reason="printer failed")
    assert voucher(store, v2)["state"] == "voided"
    assert store.authorize_redemption(v2, "T2") == Redemption(False, 0, "voided")
    assert store.authorize_redemption(validation(99), "T2") == Redemption(False, 0, "unknown voucher")
    assert store.authorize_redemption("12345", "T2") == Redemption(False, 0, "invalid validation number")
    # redeemed at a terminal without asking first, and unknown to the host: recorded as redeemed
    event(store, "T2", 1, "ticket_in", cents=700, validation=v3)
    assert voucher(store, v3) == {"validation": v3, "amount_cents": 700, "issued_by": None,
                                  "state": "redeemed", "held_by": None, "redeemed_by": "T2"}
    # its ticket_out arriving late fills in the issuer but does not make it redeemable again
    event(store, "T1", 3, "ticket_out", cents=700, validation=v3)
    assert voucher(store, v3)["issued_by"] == "T1" and voucher(store, v3)["state"] == "redeemed"
    # a void of a voucher that is no longer issued changes nothing
    event(store, "T1", 4, "voucher", validation=v3, state="void")
    assert voucher(store, v3)["state"] == "redeemed"
    # other voucher states reported by the terminal do not touch the host's state
    event(store, "T1", 5, "ticket_out", cents=100, validation=v4)
    event(store, "T1", 6, "voucher", validation=v4, state="printed")
    assert voucher(store, v4)["state"] == "issued"
    assert {x["validation"] for x in store.vouchers("T2")} == {v3}
    assert {x["validation"] for x in store.vouchers("T1")} == {v2, v3, v4}
    assert store.vouchers("T9") == []


def test_authorize_race_is_exactly_once(open_store: Callable[[], HostStore]) -> None:
    """2 HostStore objects x 2 threads each, all asking for the same vouchers at the same moment,
    over several rounds (the winner gives the vouchers back between rounds)."""
    stores = [open_store(), open_store()]
    n_vouchers, rounds_, tries = 25, 4, 2
    vs = [validation(100 + i) for i in range(n_vouchers)]
    for i, v in enumerate(vs):
        issued(stores[0], "ISSUER", 2 * i + 1, v)
        event(stores[0], "ISSUER", 2 * i + 2, "ticket_out", cents=100 + i, validation=v)
    workers = [(stores[0], "T1"), (stores[0], "T2"), (stores[1], "T3"), (stores[1], "T4")]

    for _round in range(rounds_):
        barrier = threading.Barrier(len(workers))

        def race(worker: tuple[HostStore, str],
                 barrier: threading.Barrier = barrier) -> list[tuple[str, str, Redemption]]:
            s, term = worker
            barrier.wait()
            return [(v, term, s.authorize_redemption(v, term)) for _ in range(tries) for v in vs]

        with ThreadPoolExecutor(len(workers)) as pool:
            answers = [a for batch in pool.map(race, workers) for a in batch]
        approved: dict[str, set[str]] = defaultdict(set)
        for v, term, r in answers:
            if r.approved:
                approved[v].add(term)
                assert r.amount_cents == 100 + vs.index(v)
        for v in vs:
            assert len(approved[v]) == 1, f"{v} approved for {sorted(approved[v])}"
            [winner] = approved[v]
            for vv, term, r in answers:
                if vv == v and term != winner:
                    assert r == Redemption(False, 0, f"being redeemed at {winner}")
            assert voucher(stores[1], v)["held_by"] == winner
            assert stores[0].release_redemption(v, winner) is True


# --- host enable / disable --------------------------------------------------------------------------

def test_disabled_follows_the_newest_host_event(store: HostStore) -> None:
    store.record("T1", 1, "hello", at(1), {"software": "x", "last_host_seq": None})
    assert store.terminals()[0]["disabled"] is False
    event(store, "T1", 5, "host.disabled", reason="audit")
    assert store.terminals()[0]["disabled"] is True
    event(store, "T1", 4, "host.enabled")                    # older, late
    assert store.terminals()[0]["disabled"] is True
    event(store, "T1", 6, "host.enabled")
    assert store.terminals()[0]["disabled"] is False


# --- sequence, messages, events, rounds ---------------------------------------------------------------

def test_sequence_gaps(store: HostStore) -> None:
    assert store.sequence("T1") == {"count": 0, "first": None, "last": None, "gaps": []}
    for seq in (9, 1, 2, 6, 5):
        store.record("T1", seq, "hello", at(seq), {"software": "x", "last_host_seq": None})
    assert store.sequence("T1") == {"count": 5, "first": 1, "last": 9, "gaps": [[3, 4], [7, 8]]}
    store.record("T1", 3, "hello", at(3), {"software": "x", "last_host_seq": None})
    assert store.sequence("T1")["gaps"] == [[4, 4], [7, 8]]
    store.record("T2", 0, "hello", at(0), {"software": "x", "last_host_seq": None})
    assert store.sequence("T2") == {"count": 1, "first": 0, "last": 0, "gaps": []}


def test_messages_paging(store: HostStore) -> None:
    for seq in (3, 1, 2, 5):
        meters(store, "T1", seq, credits=seq)
    assert [m["seq"] for m in store.messages("T1")] == [1, 2, 3, 5]
    assert [m["seq"] for m in store.messages("T1", after=2)] == [3, 5]
    assert [m["seq"] for m in store.messages("T1", after=1, limit=2)] == [2, 3]
    assert store.messages("T1", after=5) == [] and store.messages("T2") == []
    with pytest.raises(HostStoreError, match="limit"):
        store.messages("T1", limit=-1)


def test_events_and_rounds_newest_first(store: HostStore) -> None:
    event(store, "T1", 1, "door_open", door="main")
    event(store, "T2", 2, "bill_in", cents=2000)
    event(store, "T1", 3, "door_closed", door="main")
    rec = {"round_id": "4f1c", "game": "baccarat-war", "wagers": [{"spot": 1, "cents": 10}]}
    store.record("T1", 4, "round", at(4), {"record": rec})
    store.record("T2", 5, "round", at(5), {"record": {"round_id": "77aa", "game": "three-card-poker"}})
    assert store.events("T1") == [
        {"terminal": "T1", "seq": 3, "name": "door_closed", "time": at(3).isoformat(),
         "data": {"door": "main"}},
        {"terminal": "T1", "seq": 1, "name": "door_open", "time": at(1).isoformat(),
         "data": {"door": "main"}},
    ]
    assert [(e["terminal"], e["seq"]) for e in store.events()] == [("T1", 3), ("T2", 2), ("T1", 1)]
    assert [e["seq"] for e in store.events(last=1)] == [3]
    assert store.rounds("T1") == [{"terminal": "T1", "seq": 4, "record": rec}]
    assert [(r["terminal"], r["seq"]) for r in store.rounds()] == [("T2", 5), ("T1", 4)]
    assert store.rounds(last=0) == []


# --- the floor, rejections, commands -------------------------------------------------------------------

def test_terminals_floor_view(store: HostStore, clock: Clock) -> None:
    meters(store, "T1", 1, credits=300)
    clock.tick(5)
    event(store, "T1", 2, "cabinet.tilt_raised", tilt="door.main", reason="open")
    clock.tick(5)
    store.record("T2", 10, "hello", at(10), {"software": "x", "last_host_seq": None})
    event(store, "T2", 11, "host.disabled")
    clock.tick(5)
    event(store, "T1", 0, "power_down")                      # an old message arriving last
    assert store.terminals() == [
        {"terminal": "T1", "last_seq": 2, "last_seen": (T0 + timedelta(seconds=15)).isoformat(),
         "messages": 3, "credits": 300, "open_tilts": ["door.main"], "disabled": False},
        {"terminal": "T2", "last_seq": 11, "last_seen": (T0 + timedelta(seconds=10)).isoformat(),
         "messages": 2, "credits": None, "open_tilts": [], "disabled": True},
    ]


def test_rejection_log(store: HostStore, clock: Clock) -> None:
    store.log_rejection(None, "decrypt_failed", "HPKE open failed", 1234)
    clock.tick()
    store.log_rejection("T1", "replay", "seq 3 <= last 5", 410)
    got = store.rejections()
    assert [(r["terminal"], r["reason"], r["detail"], r["size"]) for r in got] == [
        ("T1", "replay", "seq 3 <= last 5", 410), (None, "decrypt_failed", "HPKE open failed", 1234)]
    assert got[0]["at"] == clock.now.isoformat()
    assert len(store.rejections(last=1)) == 1
    assert store.messages("T1") == [] and store.terminals() == []   # rejections are not messages


def test_command_seq_and_commands(store: HostStore) -> None:
    assert [store.next_command_seq() for _ in range(3)] == [1, 2, 3]
    seq = store.next_command_seq()
    store.record_command("T1", seq, "disable", {"reason": "audit"})
    store.record_command("T1", seq, "disable", {"reason": "audit"})      # the same again: no-op
    with pytest.raises(HostStoreError, match="already recorded"):
        store.record_command("T2", seq, "enable", {})
    assert [(c["seq"], c["terminal"], c["type"], c["body"]) for c in store.commands()] == [
        (4, "T1", "disable", {"reason": "audit"})]


def test_latest_message_of_a_type(store: HostStore) -> None:
    store.record("T1", 4, "hello", at(4), {"software": "b", "last_host_seq": 9})
    store.record("T1", 2, "hello", at(2), {"software": "a", "last_host_seq": None})   # late, older
    meters(store, "T1", 5, credits=1)
    assert store.latest("T1", "hello") == {"software": "b", "last_host_seq": 9}
    assert store.latest("T1", "round") is None and store.latest("T2", "hello") is None


def test_command_queue_hands_each_command_out_once(open_store: Callable[[], HostStore]) -> None:
    a, b = open_store(), open_store()
    assert a.take_commands() == []
    ids = [a.queue_command("T1", "disable", {"reason": "audit"}),
           b.queue_command("T2", "send_meters", {}),
           a.queue_command("T1", "enable", {})]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert b.take_commands(limit=2) == [("T1", "disable", {"reason": "audit"}),
                                        ("T2", "send_meters", {})]
    assert a.take_commands() == [("T1", "enable", {})]
    assert a.take_commands() == [] and b.take_commands() == []
    # many commands, two stores x two threads taking at once: each exactly once, in order per taker
    queued = [("T1", "send_meters", {"n": i}) for i in range(60)]
    for term, type_, body in queued:
        a.queue_command(term, type_, body)
    barrier = threading.Barrier(4)

    def drain(i: int) -> list[tuple[str, str, dict[str, Any]]]:
        s = (a, b)[i % 2]
        barrier.wait()
        got: list[tuple[str, str, dict[str, Any]]] = []
        while batch := s.take_commands(limit=5):
            got += batch
        return got

    with ThreadPoolExecutor(4) as pool:
        batches = list(pool.map(drain, range(4)))
    for got in batches:
        assert [body["n"] for _, _, body in got] == sorted(body["n"] for _, _, body in got)
    assert sorted((x for got in batches for x in got), key=lambda c: c[2]["n"]) == queued


def test_command_seq_is_unique_under_concurrency(open_store: Callable[[], HostStore]) -> None:
    stores = [open_store(), open_store()]
    barrier = threading.Barrier(4)

    def take(i: int) -> list[int]:
        barrier.wait()
        return [stores[i % 2].next_command_seq() for _ in range(50)]

    with ThreadPoolExecutor(4) as pool:
        got = [n for batch in pool.map(take, range(4)) for n in batch]
    assert sorted(got) == list(range(1, 201))


# --- persistence and errors ---------------------------------------------------------------------------

def test_reopening_keeps_everything(db_url: str, clock: Clock) -> None:
    first = HostStore.open(db_url, clock=clock)
    meters(first, "T1", 1, credits=40)
    event(first, "T1", 2, "cabinet.tilt_raised", tilt="door.main", reason="open")
    event(first, "T1", 3, "ticket_out", cents=900, validation=validation(7))
    first.record("T1", 5, "round", at(5), {"record": {"round_id": "r1", "game": "baccarat-war"}})
    issued(first, "T1", 6, validation(7))
    assert first.authorize_redemption(validation(7), "T2").approved
    first.log_rejection("T9", "bad_signature", "does not verify", 99)
    assert first.next_command_seq() == 1
    before = snapshot(first)
    before_rejections = first.rejections()
    first.close()
    with pytest.raises(HostStoreError, match="closed"):
        first.meters()

    again = HostStore.open(db_url, clock=clock)
    try:
        assert snapshot(again) == before
        assert again.rejections() == before_rejections
        assert again.sequence("T1")["gaps"] == [[4, 4]]
        assert again.next_command_seq() == 2
        assert meters(again, "T1", 1, credits=0).stored is False     # still a duplicate
        assert again.authorize_redemption(validation(7), "T3") == \
            Redemption(False, 0, "being redeemed at T2")
    finally:
        again.close()


def test_bad_urls_are_clear_errors(tmp_path) -> None:
    with pytest.raises(HostStoreError, match="unsupported host database URL"):
        HostStore.open("mysql://user@localhost/host")
    with pytest.raises(HostStoreError, match="invalid host database URL"):
        HostStore.open("not a database url")
    with pytest.raises(HostStoreError, match="invalid host database URL"):
        HostStore.open("")
    with pytest.raises(HostStoreError, match="in-memory SQLite"):
        HostStore.open("sqlite://")
    with pytest.raises(HostStoreError, match="names no database"):
        HostStore.open("postgresql://postgres@127.0.0.1")
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"this is not an SQLite database, just bytes " * 100)
    with pytest.raises(HostStoreError, match=r"cannot open host database .*corrupt\.db.*not a database"):
        HostStore.open(str(corrupt))
    with pytest.raises(HostStoreError, match="cannot open host database"):
        HostStore.open(f"sqlite:///{tmp_path / 'no' / 'such' / 'dir' / 'host.db'}")
    # nothing listens on port 1: a connection error, with the password masked
    with pytest.raises(HostStoreError, match=r"cannot open host database postgresql\+psycopg://"
                                             r"postgres:\*\*\*@127\.0\.0\.1:1/host") as err:
        HostStore.open("postgresql://postgres:secret@127.0.0.1:1/host")
    assert "secret" not in str(err.value)


def test_a_bare_db_path_is_sqlite(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = HostStore.open("relative.db")
    try:
        assert s.dialect == "sqlite"
        meters(s, "T1", 1, credits=1)
    finally:
        s.close()
    assert (tmp_path / "relative.db").is_file()
    with HostStore.open(str(tmp_path / "relative.db")) as s2:
        assert s2.meters()["T1"]["credits"] == 1


def test_postgresql_url_runs_on_psycopg(pg_url: str) -> None:
    plain = make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with HostStore.open(plain) as s:
        assert s.dialect == "postgresql"
        assert s._engine.url.drivername == "postgresql+psycopg"
        assert s.sequence("nobody")["count"] == 0
    engine = create_engine(pg_url)
    try:
        metadata.drop_all(engine)
    finally:
        engine.dispose()
