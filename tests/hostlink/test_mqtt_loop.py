"""MQTT clients on one :class:`~egmproto.mqtt_loop.SharedLoop` (the load test's simulator process):
the transport tests of ``test_mqtt.py`` and ``test_mosquitto_tls.py`` again with every client on a
shared loop, then many clients at once: PUBACK callbacks, the callbacks' thread and order, a broker
restart, a stop while connecting, no CONNACK."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tests.hostlink.test_mosquitto_tls as mosquitto_tests
import tests.hostlink.test_mqtt as mqtt_tests
from egmproto.mqtt import UP_WILDCARD, BrokerAddress, MqttClient, down_topic, up_topic
from egmproto.mqtt_loop import SharedLoop
from firmware.hostlink.broker import EmbeddedBroker
from tests.hostlink import mqtt_support
from tests.hostlink.mqtt_support import wait_for

# the fixtures those tests use
from tests.hostlink.test_mosquitto_tls import mosquitto  # noqa: F401
from tests.hostlink.test_mosquitto_tls import (
    test_persistent_host_session_survives_host_and_broker_restarts as test_shared_mosquitto_restarts,  # noqa: F401
)
from tests.hostlink.test_mosquitto_tls import (
    test_refuses_clients_without_a_valid_certificate as test_shared_mosquitto_refuses,  # noqa: F401
)
from tests.hostlink.test_mosquitto_tls import (
    test_round_trip_with_certificates as test_shared_mosquitto_round_trip,  # noqa: F401
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    broker,
    foreign_files,
    pki_files,
    tls_broker,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_a_connection_whose_every_subscription_is_refused_is_dropped_and_made_again as test_shared_deaf,
)
from tests.hostlink.test_mqtt import test_an_orderly_stop_logs_no_error as test_shared_orderly_stop  # noqa: F401
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_callback_errors_do_not_break_the_link as test_shared_callback_errors,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_clean_session_gets_nothing_published_while_away as test_shared_clean_session,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_client_refuses_a_broker_from_another_ca as test_shared_foreign_ca,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_on_delivered_fires_for_every_message as test_shared_on_delivered,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_persistent_host_session_gets_what_was_published_while_away as test_shared_persistent_session,
)
from tests.hostlink.test_mqtt import test_plain_round_trip_both_ways as test_shared_round_trip  # noqa: F401
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_publish_returns_false_while_disconnected_and_queues_nothing as test_shared_refuses_while_down,
)
from tests.hostlink.test_mqtt import (  # noqa: F401
    test_reconnects_after_the_broker_comes_back as test_shared_reconnects,
)
from tests.hostlink.test_mqtt import test_tls_round_trip as test_shared_tls_round_trip  # noqa: F401


@pytest.fixture(autouse=True)
def loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[SharedLoop]:
    """One shared loop per test; the reused tests' clients are all made on it."""
    shared = SharedLoop("egm-test-loop")

    def on_loop(*args: Any, **kwargs: Any) -> MqttClient:
        kwargs.setdefault("loop", shared)
        return mqtt_support.client(*args, **kwargs)

    monkeypatch.setattr(mqtt_tests, "client", on_loop)
    monkeypatch.setattr(mosquitto_tests, "client", on_loop)
    yield shared
    shared.close()


def own_threads() -> list[str]:
    """Threads a client of its own would have: its supervisor and paho's network thread."""
    return [t.name for t in threading.enumerate() if t.name.startswith(("egm-mqtt-", "paho-mqtt-client-"))]


class Recorder:
    """One client's callbacks in order, with the thread they ran on; flags two running at once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.events: list[Any] = []
        self.threads: set[str] = set()
        self.overlaps = 0
        self._busy = False

    def _record(self, event: Any) -> None:
        if self._busy:
            self.overlaps += 1
        self._busy = True
        self.threads.add(threading.current_thread().name)
        time.sleep(0.0005)                         # widen the window a second callback would overlap in
        self.events.append(event)
        self._busy = False

    def on_message(self, topic: str, payload: bytes) -> None:
        self._record(("message", payload))

    def on_connection(self, up: bool) -> None:
        self._record(("up" if up else "down",))

    def delivered(self, i: int) -> Callable[[], None]:
        return lambda: self._record(("delivered", i))

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e[0] == kind]


def terminals(loop: SharedLoop, address: BrokerAddress, count: int, clients: list[MqttClient],
              **kw: Any) -> list[tuple[MqttClient, Recorder]]:
    out = []
    for i in range(count):
        rec = Recorder(f"T{i}")
        c = MqttClient(rec.name, address, subscriptions=[down_topic(rec.name)], on_message=rec.on_message,
                       on_connection=rec.on_connection, min_backoff=0.05, max_backoff=0.3, loop=loop, **kw)
        clients.append(c)
        c.start()
        out.append((c, rec))
    return out


def test_many_clients_one_thread_every_puback_and_message_in_order(
    loop: SharedLoop, clients: list[MqttClient]
) -> None:
    b = EmbeddedBroker()
    address = BrokerAddress("127.0.0.1", b.start())
    try:
        host_rec = Recorder("host")
        host = MqttClient("egm-host", address, subscriptions=[UP_WILDCARD], on_message=host_rec.on_message,
                          on_connection=host_rec.on_connection, loop=loop)
        clients.append(host)
        host.start()
        terms = terminals(loop, address, 30, clients)
        assert host.wait_connected(10)
        assert all(c.wait_connected(15) for c, _ in terms)
        assert own_threads() == []                 # no supervisor nor paho thread per client
        assert loop.watched == 31
        for c, rec in terms:
            for i in range(5):
                assert c.publish(up_topic(c.client_id), b"%s:%d" % (c.client_id.encode(), i), rec.delivered(i))
            assert host.publish(down_topic(c.client_id), b"a", None)
            assert host.publish(down_topic(c.client_id), b"b", None)
        wait_for(lambda: len(host_rec.of("message")) == 150, what="150 reports at the host")
        wait_for(lambda: all(len(rec.of("delivered")) == 5 and len(rec.of("message")) == 2 for _, rec in terms),
                 what="every PUBACK and command")
        for c, rec in terms:
            assert rec.threads == {loop.name}, rec.threads
            assert rec.overlaps == 0
            assert rec.events[0] == ("up",)        # announced before anything else
            assert rec.of("delivered") == [("delivered", i) for i in range(5)]
            assert rec.of("message") == [("message", b"a"), ("message", b"b")]
            mine = [p for (_, p) in host_rec.of("message") if p.startswith(c.client_id.encode() + b":")]
            assert mine == [b"%s:%d" % (c.client_id.encode(), i) for i in range(5)]
            assert c.stats["delivered"] == 5
    finally:
        b.stop()


def test_a_broker_restart_every_client_reconnects_and_resubscribes(
    loop: SharedLoop, clients: list[MqttClient]
) -> None:
    first = EmbeddedBroker()
    port = first.start()
    address = BrokerAddress("127.0.0.1", port)
    host = MqttClient("egm-host", address, loop=loop, min_backoff=0.05, max_backoff=0.3)
    clients.append(host)
    host.start()
    terms = terminals(loop, address, 20, clients)
    assert all(c.wait_connected(15) for c, _ in terms) and host.wait_connected(10)
    first.stop()
    wait_for(lambda: all(rec.events == [("up",), ("down",)] for _, rec in terms), what="every on_connection(False)")
    assert loop.watched == 0                       # every dead socket left the selector
    second = EmbeddedBroker(port=port)
    second.start()
    try:
        wait_for(lambda: all(c.connected for c, _ in terms) and host.connected, timeout=20, what="every reconnection")
        for c, _ in terms:
            assert host.publish(down_topic(c.client_id), b"again")
        wait_for(lambda: all(rec.events[-1] == ("message", b"again") for _, rec in terms),
                 what="the command on the subscriptions made again")
        for c, rec in terms:
            assert rec.events == [("up",), ("down",), ("up",), ("message", b"again")]
            assert rec.overlaps == 0 and c.stats["connects"] == 2
    finally:
        second.stop()


@pytest.fixture
def silent_broker() -> Iterator[BrokerAddress]:
    """A TCP port that accepts connections (the kernel's backlog) and never answers a CONNECT."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(128)
        yield BrokerAddress("127.0.0.1", s.getsockname()[1])


def test_stop_while_clients_are_connecting(loop: SharedLoop, silent_broker: BrokerAddress,
                                           clients: list[MqttClient]) -> None:
    terms = terminals(loop, silent_broker, 20, clients, connect_timeout=120.0)
    wait_for(lambda: loop.watched >= 5, what="connections waiting for their CONNACK")
    t0 = time.monotonic()
    for c, _ in terms:
        c.stop()
    # nobody waited out its connect timeout (120 s); the bound leaves room for a loaded machine
    assert time.monotonic() - t0 < 30
    assert loop.watched == 0
    assert not any(c.connected for c, _ in terms)
    assert all(rec.events == [] for _, rec in terms)
    time.sleep(0.3)
    assert loop.watched == 0                       # and nothing connects again


def test_no_connack_times_out_and_tries_again(loop: SharedLoop, silent_broker: BrokerAddress,
                                              clients: list[MqttClient]) -> None:
    terms = terminals(loop, silent_broker, 3, clients, connect_timeout=0.3)
    wait_for(lambda: all(c.stats["connect_failures"] >= 2 for c, _ in terms), what="two timed-out attempts each")
    assert not any(c.connected for c, _ in terms)


def test_stop_then_start_again(loop: SharedLoop, clients: list[MqttClient]) -> None:
    b = EmbeddedBroker()
    address = BrokerAddress("127.0.0.1", b.start())
    try:
        (c, rec), = terminals(loop, address, 1, clients)
        assert c.wait_connected(10)
        c.stop()
        assert not c.connected and loop.watched == 0
        c.start()
        wait_for(lambda: len(rec.events) == 2, what="the second connection")
        assert rec.events == [("up",), ("up",)]    # a stop announces nothing
        time.sleep(0.5)
        assert c.connected and c.stats["connects"] == 2 and c.stats["disconnects"] == 1
    finally:
        b.stop()
