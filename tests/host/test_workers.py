"""Several host workers on one PostgreSQL database (issue 27): what one worker stores, seals and
numbers must hold for all of them. Every test here has its own database on ``own_postgres``."""

from __future__ import annotations

import multiprocessing
import random
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from egmproto.identity import HostIdentity
from egmproto.pki import ensure_development_pki
from host.local.postgres import LocalPostgres
from host.server import HostServer
from host.store import HostStore, Report
from tests.host.conftest import T0
from tests.hostlink.conftest import Bus, Floor


@pytest.fixture
def fresh_db(own_postgres: LocalPostgres) -> Iterator[str]:
    name = f"egm_workers_{uuid.uuid4().hex[:10]}"
    yield own_postgres.create_database(name)
    own_postgres.drop_database(name)


class Workers(Floor):
    """A floor with N host workers on one database; each message up goes to the worker that
    :attr:`pick` names (a shared subscription), and a worker's messages down can be held back."""

    def __init__(self, tmp: Path, url: str, n: int = 2) -> None:
        self.tmp, self.bus = tmp, Bus()
        self.paths = ensure_development_pki(tmp, "T1")
        self.pki, self.now = tmp / "pki", [1000.0]
        self.stores = [HostStore.open(url) for _ in range(n)]
        self.store = self.stores[0]
        self.hosts = [HostServer(s, HostIdentity(self.pki), self.bus.factory) for s in self.stores]
        self.pick: Callable[[int], int] = lambda i: i % n
        self.received = 0
        self.held: list[list[tuple[str, bytes]]] = [[] for _ in range(n)]
        self.hold = [False] * n
        for w, host in enumerate(self.hosts):
            client = host.client
            client.subscriptions = [] if w else client.subscriptions
            client.publish = self._publisher(w, client.publish)
            client.start()
        self.hosts[0].client.on_message = self._dispatch
        self.links, self.ledgers = {}, {}

    def _dispatch(self, topic: str, payload: bytes) -> None:
        w = self.pick(self.received)
        self.received += 1
        self.hosts[w].handle(topic, payload)

    def _publisher(self, w: int, publish: Callable[..., bool]) -> Callable[..., bool]:
        def held_or_sent(topic: str, payload: bytes, on_delivered: Any = None) -> bool:
            if self.hold[w]:
                self.held[w].append((topic, payload))
                return True
            return publish(topic, payload, on_delivered)
        return held_or_sent

    def release(self, w: int) -> None:
        self.hold[w] = False
        self.bus.queue.extend(self.held[w])
        self.held[w].clear()

    def close(self) -> None:
        super().close()                       # the terminals, and the first worker's store
        for s in self.stores[1:]:
            s.close()


@pytest.fixture
def workers(tmp_path: Path, fresh_db: str) -> Iterator[Workers]:
    w = Workers(tmp_path, fresh_db)
    yield w
    w.close()


def _reboot(floor: Workers, terminal: str) -> None:
    link = floor.links.pop(terminal)
    link.client.stop()
    link.outbox.close()
    floor.ledgers.pop(terminal).close()
    floor.terminal(terminal)


def test_a_reboot_hello_stored_by_one_worker_rekeys_the_others(workers: Workers) -> None:
    workers.pick = lambda i: 0                       # hello and reports to A
    link = workers.terminal("T1")
    workers.settle()
    old_key = link.kem_public
    assert len(link.outbox) == 0
    since = workers.received
    workers.pick = lambda i: 1 if i == since else 0  # the new boot's hello to B, then reports to A
    _reboot(workers, "T1")
    link = workers.links["T1"]
    assert link.kem_public != old_key
    workers.settle()
    for cents in (100, 200, 500):
        workers.ledgers["T1"].bill_in(cents)
    workers.settle()
    assert workers.received - since > 3
    assert link.stats["rejected"] == 0, "a worker sealed to the terminal's old key"
    assert len(link.outbox) == 0 and link.session_open
    assert workers.stores[0].terminal_key("T1") == link.kem_public


def test_acks_overtaken_by_another_workers_are_refused_then_sent_again(workers: Workers) -> None:
    link = workers.terminal("T1", ack_timeout_s=1.0)
    workers.settle()
    assert len(link.outbox) == 0
    workers.hold[0] = True                            # A's answers are slow to reach the broker
    for cents in range(1, 11):
        workers.ledgers["T1"].bill_in(cents * 100)
    link.poll()
    workers.bus.pump()                                # A and B store half each; B's acks go out first
    workers.release(0)
    workers.bus.pump()
    link.poll()
    refused = link.stats["rejected"]
    assert refused >= 4, "no ack was overtaken: the test shows nothing"
    assert len(link.outbox) >= 4
    workers.pick = lambda i: 0                         # every resend to A, whose numbers were behind B's
    for _ in range(6):
        workers.now[0] += 60                           # the terminal's ack timeout: it sends again
        workers.settle()
        if len(link.outbox) == 0:
            break
    assert len(link.outbox) == 0, f"{len(link.outbox)} reports never acknowledged"
    seq = workers.store.sequence("T1")
    assert seq["gaps"] == [] and seq["count"] == link.outbox.last_number
    assert any(r["reason"] == "replay" for r in workers.store.rejections(1000))   # the resends


def test_two_workers_adopt_each_queued_command_once(fresh_db: str) -> None:
    stores = [HostStore.open(fresh_db) for _ in range(2)]
    try:
        n = 300
        for i in range(n):
            stores[0].queue_command(f"T{i % 7}", "disable", {"reason": f"r{i}"})
        barrier = threading.Barrier(4)

        def adopt(s: HostStore) -> None:
            barrier.wait()
            while s.adopt_queued_commands(limit=5):
                pass

        threads = [threading.Thread(target=adopt, args=(stores[i % 2],)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        reasons = Counter(p["body"]["reason"] for p in stores[0].pending_commands())
        assert len(reasons) == n and set(reasons.values()) == {1}, "a queued command was adopted twice"
    finally:
        for s in stores:
            s.close()


# --- worker processes ---------------------------------------------------------------------------------

VOUCHERS = 40


def _stream(seed: int) -> list[Report]:
    """Four terminals' reports: each voucher issued by T0 (redeemable elsewhere only through the
    host) and asked for by T1 and T2 alike, and T3's meters."""
    reports = []
    for v in range(VOUCHERS):
        val = f"77{v:016d}"
        reports.append(Report("T0", 2 * v + 1, "event", T0, {"name": "voucher", "data": {
            "validation": val, "state": "issued", "offline_redemption": False}}))
        reports.append(Report("T0", 2 * v + 2, "event", T0, {"name": "ticket_out", "data": {
            "validation": val, "cents": 500}}))
    for t in ("T1", "T2"):
        for v in range(VOUCHERS):
            reports.append(Report(t, v + 1, "voucher_redeem_request", T0 + timedelta(seconds=v),
                                  {"validation": f"77{v:016d}"}))
    for n in range(1, 61):
        reports.append(Report("T3", n, "meters", T0, {"credits": n}))
    return reports


def _worker(url: str, seed: int, barrier: Any, out: Any) -> None:
    rng = random.Random(seed)
    reports = _stream(seed)
    issuing = [r for r in reports if r.terminal == "T0"]
    # as a shared subscription spreads them: T1's requests here, T2's there (the two race for
    # every voucher), a random half of both in the third worker (resends), T3's meters everywhere
    mine = {0: lambda r: r.terminal == "T1", 1: lambda r: r.terminal == "T2"}.get(
        seed % 3, lambda r: rng.random() < 0.5)
    rest = [r for r in reports if r.terminal == "T3" or (r.terminal in ("T1", "T2") and mine(r))]
    rng.shuffle(rest)
    store = HostStore.open(url)
    try:
        store.record_batch(issuing)
        barrier.wait()
        stored, approved = [], []
        while rest:
            k = rng.randrange(1, 30)
            batch, rest = rest[:k], rest[k:]
            for r, rec in zip(batch, store.record_batch(batch), strict=True):
                assert rec.error is None, rec.error
                if rec.stored:
                    stored.append((r.terminal, r.seq))
                if rec.redemption is not None and rec.redemption.approved:
                    approved.append(r.body["validation"])
        out.put((stored, approved))
    finally:
        store.close()


@pytest.mark.parametrize("processes", [3])
def test_worker_processes_store_each_report_once_and_approve_each_voucher_once(fresh_db: str,
                                                                                processes: int) -> None:
    HostStore.open(fresh_db).close()                      # the tables, before the race
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(fresh_db, seed, barrier, out)) for seed in range(processes)]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    stored = Counter(k for s, _a in results for k in s)
    approved = Counter(v for _s, a in results for v in a)
    expected = {(r.terminal, r.seq) for r in _stream(0) if r.terminal != "T0"}
    assert set(stored) == expected and set(stored.values()) == {1}, "a report stored twice or never"
    assert len(approved) == VOUCHERS and set(approved.values()) == {1}, "a voucher approved twice"
    with HostStore.open(fresh_db) as s:
        held = Counter(v["held_by"] for v in s.vouchers())
        assert sum(held.values()) == VOUCHERS and set(held) <= {"T1", "T2"}
        for t in ("T1", "T2", "T3"):
            assert s.sequence(t)["gaps"] == []
