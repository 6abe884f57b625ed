"""An in-memory MQTT bus, and a floor (a PKI, a host, terminals) built on it, for the host-link tests.

The bus behaves like a broker for what the link relies on: topic matching, QoS 1 delivery in
order per publisher, and messages lost while the receiver is away (a non-persistent session), with
switches to drop messages on purpose. Delivery happens in :meth:`Bus.pump`, never inside
``publish``, as with a real broker (no re-entrant callbacks).
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from paho.mqtt.client import topic_matches_sub

from egmproto.identity import HostIdentity, TerminalIdentity
from egmproto.pki import ensure_development_pki, issue
from firmware.cashless.vouchers import VoucherBook
from firmware.hostlink.link import HostLink
from firmware.ledger.ledger import Ledger
from host.server import HostServer
from host.store import HostStore


class FakeClient:
    def __init__(self, bus: Bus, client_id: str, *, subscriptions=(), on_message=None, on_connection=None,
                 persistent_session: bool = False, **_: Any) -> None:
        self.bus, self.client_id = bus, client_id
        self.subscriptions = list(subscriptions)
        self.on_message, self.on_connection = on_message, on_connection
        self.connected = False
        self.stats: collections.Counter[str] = collections.Counter()

    def start(self) -> None:
        self.bus.clients.append(self)
        self.connected = self.bus.up
        if self.connected and self.on_connection:
            self.on_connection(True)

    def stop(self) -> None:
        self.connected = False
        if self in self.bus.clients:
            self.bus.clients.remove(self)

    def publish(self, topic: str, payload: bytes, on_delivered: Callable[[], None] | None = None) -> bool:
        if not self.connected:
            return False
        self.stats["published"] += 1
        self.bus.queue.append((topic, bytes(payload)))
        return True


class Bus:
    def __init__(self) -> None:
        self.clients: list[FakeClient] = []
        self.queue: collections.deque[tuple[str, bytes]] = collections.deque()
        self.up = True
        self.drop: Callable[[str, bytes], bool] = lambda topic, payload: False
        self.seen: list[tuple[str, bytes]] = []

    def factory(self, client_id: str, **kw: Any) -> FakeClient:
        return FakeClient(self, client_id, **kw)

    def pump(self) -> int:
        n = 0
        while self.queue:
            topic, payload = self.queue.popleft()
            self.seen.append((topic, payload))
            if self.drop(topic, payload):
                continue
            for client in list(self.clients):                # a client cut off hears nothing
                if client.connected and any(topic_matches_sub(s, topic) for s in client.subscriptions):
                    client.on_message(topic, payload)
                    n += 1
        return n

    def set_up(self, up: bool) -> None:
        self.up = up
        for client in self.clients:
            client.connected = up
            if client.on_connection:
                client.on_connection(up)


def switchable() -> SimpleNamespace:
    """A stand-in terminal for a link: its cabinet is switched by the host's ``disable`` and
    ``enable`` (``cabinet.disabled``)."""
    cabinet = SimpleNamespace(disabled=False)
    cabinet.disable = lambda: setattr(cabinet, "disabled", True)
    cabinet.enable = lambda: setattr(cabinet, "disabled", False)
    return SimpleNamespace(cabinet=cabinet, wake=lambda: None)


class Floor:
    """A PKI, one host and any number of terminals (each its own critical memory) on one bus."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.bus = Bus()
        self.paths = ensure_development_pki(tmp, "T1")
        self.pki = tmp / "pki"
        self.now = [1000.0]
        self.store = HostStore.open(str(tmp / "host.db"))
        self.host = HostServer(self.store, HostIdentity(self.pki), self.bus.factory)
        self.host.client.on_message = self.host.handle     # synchronously: no ingest worker here
        self.host.client.start()
        self.links: dict[str, HostLink] = {}
        self.ledgers: dict[str, Ledger] = {}

    def clock(self) -> float:
        return self.now[0]

    def terminal(self, terminal_id: str = "T1", **kw: Any) -> HostLink:
        if not (self.pki / "issued" / f"{terminal_id}.cert.pem").exists():
            issue(self.pki, "terminal", terminal_id)
        ledger = Ledger.open(self.tmp / terminal_id)
        identity = TerminalIdentity.load(self.pki, terminal_id)
        link = HostLink(ledger, identity, self.bus.factory, clock=self.clock, **kw)
        link.start()
        self.links[terminal_id], self.ledgers[terminal_id] = link, ledger
        return link

    def cash_out(self, terminal_id: str, cents: int, *, offline: bool = False) -> str:
        """Notes in and a voucher out at ``terminal_id``, as its voucher book does it (issued, then
        printed; ``offline``: issued with offline redemption allowed); the validation number."""
        ledger = self.ledgers[terminal_id]
        ledger.bill_in(cents)
        book = VoucherBook(ledger, terminal_id=terminal_id, offline_redemption=offline)
        validation = book.issue(cents).validation
        book.printed(validation)
        return validation

    def link_down(self, terminal_id: str, down: bool = True) -> None:
        """Cut (or restore) one terminal's connection: it publishes nothing and hears nothing."""
        link = self.links[terminal_id]
        link.client.connected = not down
        link._on_connection(not down)

    def settle(self, rounds: int = 50) -> None:
        """Poll every terminal and deliver every message until nothing moves."""
        for _ in range(rounds):
            for link in self.links.values():
                link.poll()
            if not self.bus.pump() and not self.bus.queue:
                for link in self.links.values():
                    link.poll()
                if not self.bus.queue:
                    return

    def close(self) -> None:
        for link in self.links.values():
            link.client.stop()
            link.outbox.close()
        for ledger in self.ledgers.values():
            ledger.close()
        self.store.close()


@pytest.fixture
def clients():
    """Started MQTT clients to stop at the end of the test, whatever happened."""
    started: list = []
    yield started
    for c in started:
        c.stop()


@pytest.fixture
def floor(tmp_path: Path):
    f = Floor(tmp_path)
    yield f
    f.close()


def utc(seconds_ago: float = 0) -> datetime:
    from datetime import timedelta

    return datetime.now(UTC) - timedelta(seconds=seconds_ago)


partial = functools.partial
