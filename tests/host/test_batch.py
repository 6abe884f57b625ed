"""HostStore.record_batch: a batch stores what the same messages recorded one by one (in the
batch's (terminal, epoch, seq) order) store; one bad message does not block the others."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text

from host import store_ingest
from host.store import HostStore, HostStoreError, Recorded, Report
from host.store_epochs import EPOCH_SPAN
from host.store_schema import metadata, vouchers
from tests.host.conftest import T0

TERMINALS = ("T1", "T2", "T3")


def _v(i: int) -> str:
    return f"00{i:016d}"


def _body(rng: random.Random, seq: int) -> tuple[str, dict[str, Any]]:
    kind = rng.choice(["meters", "round", "event", "event", "event", "redeem", "hello"])
    if kind == "meters":
        return "meters", {"credits": rng.randrange(1000), "meters": {"coin_in": seq}}
    if kind == "round":
        return "round", {"record": {"round_id": f"r{seq}", "game": "baccarat-war"}}
    if kind == "redeem":
        return "voucher_redeem_request", {"validation": _v(rng.randrange(4))}
    if kind == "hello":
        return "hello", {"kem_public": f"key-{seq}"}
    v = _v(rng.randrange(4))
    name, data = rng.choice([
        ("cabinet.tilt_raised", {"tilt": rng.choice(["door", "printer"]), "reason": "x"}),
        ("cabinet.tilt_cleared", {"tilt": rng.choice(["door", "printer"])}),
        ("power_up", {}),
        ("ticket_out", {"validation": v, "cents": 500}),
        ("ticket_in", {"validation": v, "cents": 500}),
        ("voucher", {"validation": v, "state": "issued", "offline_redemption": False}),
        ("voucher", {"validation": v, "state": rng.choice(["void", "redeem_returned", "redeem_abandoned"])}),
        ("host.disabled", {}), ("host.enabled", {}), ("host.command", {"cmd": rng.randrange(1, 4)}),
    ])
    return "event", {"name": name, "data": data}


def stream(seed: int, n: int = 120) -> list[Report]:
    """Random reports of three terminals (two epochs), with resends, conflicts and disorder."""
    rng = random.Random(seed)
    out: list[Report] = []
    for i in range(n):
        term, epoch, seq = rng.choice(TERMINALS), rng.choice(["e1", "e1", "e2"]), rng.randrange(1, 40)
        if out and rng.random() < 0.15:
            out.append(rng.choice(out))                      # a resend, byte for byte
            continue
        type_, body = _body(rng, seq)
        out.append(Report(term, seq, type_, T0 + timedelta(seconds=i), body, epoch))
    return out


def dump(store: HostStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every table, rows sorted (autoincrement ids left out)."""
    out = {}
    with store._engine.connect() as conn:
        for table in metadata.sorted_tables:
            cols = [c for c in table.columns if c.name != "id"]
            rows = conn.execute(select(*cols)).all()
            out[table.name] = sorted(tuple(repr(v) for v in r) for r in rows)
    return out


def _key(r: Report) -> tuple[str, str, int]:
    return r.terminal, r.epoch, r.seq


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_stores_what_one_by_one_stores(open_store: Callable[[], HostStore], db_url: str,
                                             seed: int, tmp_path) -> None:
    reports = stream(seed)
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(reports)), 6))
    batches = [reports[a:b] for a, b in zip([0, *cuts], [*cuts, len(reports)], strict=True)]
    batched = open_store()
    got = [r for b in batches for r in batched.record_batch(b)]
    # the same messages one by one, each batch in the order the batch stores it
    alone = HostStore.open(f"sqlite:///{tmp_path / 'alone.db'}", clock=lambda: T0)
    try:
        expected: list[Recorded] = []
        for b in batches:
            one: dict[int, Recorded] = {}
            for i in sorted(range(len(b)), key=lambda i: _key(b[i])):
                r = b[i]
                one[i] = alone.record(r.terminal, r.seq, r.type, r.sent_at, r.body, epoch=r.epoch)
            expected += [one[i] for i in range(len(b))]
        assert got == expected
        assert sum(r.stored for r in got) > 40 and any(r.conflict for r in got)
        assert any(not r.stored and not r.conflict for r in got)                  # duplicates in there
        if batched.dialect == "sqlite":
            assert dump(batched) == dump(alone)
        else:                                             # the same rows, read through both dialects
            assert {k: len(v) for k, v in dump(batched).items()} == {k: len(v) for k, v in dump(alone).items()}
            assert batched.vouchers() == alone.vouchers() and batched.terminals() == alone.terminals()
            assert batched.events(last=1000) == alone.events(last=1000)
            for t in TERMINALS:
                assert batched.sequence(t) == alone.sequence(t)
                assert batched.pending_commands(t) == alone.pending_commands(t)
    finally:
        alone.close()


def test_one_bad_message_does_not_block_the_batch(store: HostStore, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = _v(9)
    real = store_ingest._EVENT_EFFECTS["ticket_out"]

    def breaks_on_bad(conn: Any, msg: Any, data: dict[str, Any], p: Any) -> None:
        if data.get("validation") == bad:                # the database refuses this one (a check fails)
            conn.execute(vouchers.insert().values(validation=bad, amount_cents=1, state="bogus",
                                                  created_at=T0))
        real(conn, msg, data, p)

    monkeypatch.setitem(store_ingest._EVENT_EFFECTS, "ticket_out", breaks_on_bad)
    reports = [Report("T1", n, "event", T0, {"name": "ticket_out", "data": {"validation": _v(n), "cents": 100}})
               for n in range(1, 6)]
    reports.insert(2, Report("T2", 1, "event", T0, {"name": "ticket_out", "data": {"validation": bad, "cents": 1}}))
    reports.append(Report("T3", -1, "meters", T0, {}))           # bad input: refused before the database
    got = store.record_batch(reports)
    assert [r.stored for r in got] == [True, True, False, True, True, True, False]
    assert got[2].error and "vouchers_state_known" in got[2].error.lower().replace('"', "")
    assert got[6].error and "seq" in got[6].error
    assert {v["validation"] for v in store.vouchers()} == {_v(n) for n in range(1, 6)}
    assert store.sequence("T2")["count"] == 0 and store.sequence("T1")["count"] == 5
    monkeypatch.undo()
    again = store.record_batch(reports[:6])                      # the terminals resend: T2's goes in now
    assert [r.stored for r in again] == [False, False, True, False, False, False]


def test_nul_in_a_body_is_refused_alone_on_postgresql(pg_url: str) -> None:
    """A real message PostgreSQL refuses (a NUL in a text column) among good ones."""
    with HostStore.open(pg_url) as store:
        try:
            got = store.record_batch([
                Report("T1", 1, "meters", T0, {"credits": 1}),
                Report("T1", 2, "event", T0, {"name": "door\x00open", "data": {}}),
                Report("T1", 3, "meters", T0, {"credits": 3}),
            ])
            assert [r.stored for r in got] == [True, False, True]
            assert got[1].error and "NUL" in got[1].error
        finally:
            with store._engine.begin() as conn:
                conn.execute(text("DROP TABLE IF EXISTS " + ", ".join(t.name for t in metadata.sorted_tables)
                                  + " CASCADE"))


def test_record_batch_refuses_a_non_list(store: HostStore) -> None:
    with pytest.raises(HostStoreError, match="list of Report"):
        store.record_batch("T1")  # type: ignore[arg-type]
    assert store.record_batch([]) == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages=st.lists(st.tuples(st.sampled_from(TERMINALS), st.sampled_from(["e1", "e2"]), st.integers(1, 12),
                                   st.integers(0, 2**32)), min_size=1, max_size=40),
       cuts=st.lists(st.integers(1, 39), max_size=5))
def test_any_batching_stores_what_one_by_one_stores(messages: list[tuple[str, str, int, int]],
                                                    cuts: list[int]) -> None:
    """Property (SQLite): whatever the mix and however it is cut into batches."""
    reports = []
    for term, epoch, seq, seed in messages:
        type_, body = _body(random.Random(seed), seq)
        reports.append(Report(term, seq, type_, T0 + timedelta(seconds=seed % 1000), body, epoch))
    edges = sorted({c for c in cuts if c < len(reports)})
    batches = [reports[a:b] for a, b in zip([0, *edges], [*edges, len(reports)], strict=True)]
    with tempfile.TemporaryDirectory() as tmp:
        batched = HostStore.open(f"sqlite:///{tmp}/batched.db", clock=lambda: T0)
        alone = HostStore.open(f"sqlite:///{tmp}/alone.db", clock=lambda: T0)
        try:
            got = [r for b in batches for r in batched.record_batch(b)]
            expected: list[Recorded] = []
            for b in batches:
                one: dict[int, Recorded] = {}
                for i in sorted(range(len(b)), key=lambda i: _key(b[i])):
                    one[i] = alone.record(b[i].terminal, b[i].seq, b[i].type, b[i].sent_at, b[i].body,
                                          epoch=b[i].epoch)
                expected += [one[i] for i in range(len(b))]
            assert got == expected
            assert dump(batched) == dump(alone)
        finally:
            batched.close()
            alone.close()


def test_a_power_up_earlier_in_the_batch_closes_an_older_tilt_after_it(store: HostStore) -> None:
    """Within a batch the newest power-up is followed message by message: epoch "e1" sorts before
    "e2" but was heard of second, so its power-up (higher seq) comes before e2's older tilt."""
    store.record("T1", 1, "meters", T0, {"credits": 0}, epoch="e2")              # e2: place 0
    store.record("T1", 1, "meters", T0, {"credits": 0}, epoch="e1")              # e1: place 1
    got = store.record_batch([
        Report("T1", 3, "event", T0, {"name": "cabinet.tilt_raised", "data": {"tilt": "door"}}, "e2"),
        Report("T1", 5, "event", T0, {"name": "power_up", "data": {}}, "e1"),
    ])
    assert [r.stored for r in got] == [True, True]
    assert store.terminals()[0]["open_tilts"] == []          # the power-up (newer) already closed it


def test_a_batch_finds_known_epochs_and_adds_new_ones(store: HostStore) -> None:
    """The batch's epoch look-up (one query for its terminals) and what it adds: a new epoch of a
    known terminal is stored after the old one's reports, not under the old one's numbers."""
    def meters(terminal: str, seq: int, epoch: str, credits: int) -> Report:
        return Report(terminal, seq, "meters", T0, {"credits": credits, "meters": {"coin_in": credits}}, epoch)

    assert [r.stored for r in store.record_batch([meters("T1", 1, "e1", 1), meters("T2", 1, "e1", 1)])] == [True] * 2
    got = store.record_batch([meters("T1", 1, "e2", 7),       # T1's critical memory cleared: new epoch
                              meters("T1", 2, "e1", 2),       # a late report of the old epoch
                              meters("T2", 1, "e1", 1),       # a resend
                              meters("T3", 1, "e9", 3)])      # a terminal heard of for the first time
    assert [(r.stored, r.conflict) for r in got] == [(True, False), (True, False), (False, False), (True, False)]
    assert store.held("T1", "e1") == 2 and store.held("T1", "e2") == 1 and store.held("T3", "e9") == 1
    assert [r.seq for r in got] == [EPOCH_SPAN + 1, 2, 1, 1]       # stored keys: (epoch place, number)
