"""The MQTT transport against the embedded broker: topics, addresses, backoff, round trips (plain
and TLS), refusals, the ACL, reconnection, the host's persistent session."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from egmproto import pki
from egmproto.mqtt import (
    UP_WILDCARD,
    Backoff,
    BrokerAddress,
    MqttClient,
    TlsFiles,
    TransportError,
    down_topic,
    terminal_of,
    up_topic,
)
from firmware.hostlink.broker import EmbeddedBroker, EmbeddedBrokerError
from tests.hostlink.mqtt_support import (
    Inbox,
    client,
    delivered,
    free_port,
    start,
    wait_for,
)

# --------------------------------------------------------------------------------------------------
# fixtures




@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    b = EmbeddedBroker()
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def pki_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    files = pki.ensure_development_pki(tmp_path_factory.mktemp("pki"), "T1")
    t2 = pki.issue(files["dir"], "terminal", "T2")
    files["t2_cert"], files["t2_key"] = t2.cert, t2.key
    return files


@pytest.fixture(scope="module")
def foreign_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return pki.ensure_development_pki(tmp_path_factory.mktemp("foreign"), "T1")


@pytest.fixture(scope="module")
def tls_broker(pki_files: dict[str, Path]) -> Iterator[EmbeddedBroker]:
    f = pki_files
    b = EmbeddedBroker(tls=(f["host_cert"], f["host_key"], f["ca_cert"]), crl=f["crl"])
    b.start()
    yield b
    b.stop()


def tls_address(broker: EmbeddedBroker, ca: Path, cert: Path | None, key: Path | None) -> BrokerAddress:
    return BrokerAddress.parse(broker.url, TlsFiles(ca, cert, key))


# --------------------------------------------------------------------------------------------------
# topics, addresses, backoff


def test_topics() -> None:
    assert up_topic("EGM-0001") == "egm/v1/EGM-0001/up"
    assert down_topic("T1") == "egm/v1/T1/down"
    assert terminal_of("egm/v1/T1/up") == "T1"
    assert terminal_of("egm/v1/a.b_c-9/down") == "a.b_c-9"
    for foreign in ("egm/v1/+/up", "egm/v2/T1/up", "egm/v1/T1/sideways", "egm/v1//up", "x", "egm/v1/T1/up/x"):
        assert terminal_of(foreign) is None
    for bad in ("", "a/b", "+", "#", "x" * 33):
        with pytest.raises(TransportError):
            up_topic(bad)


def test_broker_address_parse(tmp_path: Path) -> None:
    tls = TlsFiles(tmp_path / "ca.pem")
    assert BrokerAddress.parse("mqtt://localhost") == BrokerAddress("localhost", 1883)
    assert BrokerAddress.parse("mqtt://10.0.0.5:2883") == BrokerAddress("10.0.0.5", 2883)
    assert BrokerAddress.parse("mqtts://broker.casino:8884", tls) == BrokerAddress("broker.casino", 8884, tls)
    assert BrokerAddress.parse("MQTTS://[::1]", tls).port == 8883
    assert BrokerAddress.parse("mqtts://[::1]:9", tls).url == "mqtts://[::1]:9"
    assert BrokerAddress.parse("mqtt://h:1/").url == "mqtt://h:1"
    for bad, why in [
        ("http://h:1", "scheme"), ("h:1883", "scheme"), ("mqtt://", "no host"),
        ("mqtt://h:99999", "(?i)port"), ("mqtt://h:0", "(?i)port"), ("mqtt://u:p@h", "only"),
        ("mqtt://h/topic", "only"), ("mqtt://h:x", "invalid"),
    ]:
        with pytest.raises(TransportError, match=why):
            BrokerAddress.parse(bad)
    with pytest.raises(TransportError, match="needs the TLS files"):
        BrokerAddress.parse("mqtts://h")
    with pytest.raises(TransportError, match="unencrypted"):
        BrokerAddress.parse("mqtt://h", tls)


def test_client_rejects_bad_options(tmp_path: Path) -> None:
    address = BrokerAddress("127.0.0.1", 1)
    with pytest.raises(TransportError, match="protocol"):
        MqttClient("c", address, protocol="4")
    with pytest.raises(TransportError, match="client id"):
        MqttClient("", address)
    for bad_filter in ("", "a/#/b", "a+/b", "#x"):
        with pytest.raises(TransportError, match="topic filter"):
            MqttClient("c", address, subscriptions=[bad_filter])
    with pytest.raises(TransportError, match="backoff"):
        MqttClient("c", address, min_backoff=2, max_backoff=1)
    with pytest.raises(TransportError, match="cannot load"):
        MqttClient("c", BrokerAddress("h", 1, TlsFiles(tmp_path / "missing.pem")))
    with pytest.raises(TransportError, match="both"):
        MqttClient("c", BrokerAddress("h", 1, TlsFiles(tmp_path / "ca.pem", cert=tmp_path / "c.pem")))


def test_backoff_grows_with_jitter_within_bounds() -> None:
    b = Backoff(0.5, 30.0, random.Random(7))
    delays = [b.next() for _ in range(40)]
    assert delays[0] == 0.5
    assert all(0.5 <= d <= 30.0 for d in delays)
    assert max(delays) == 30.0  # reaches the cap
    assert len(set(delays)) > 10  # jittered, not lockstep
    b.reset()
    assert b.next() == 0.5


# --------------------------------------------------------------------------------------------------
# plain round trips


def test_plain_round_trip_both_ways(broker: EmbeddedBroker, clients: list[MqttClient]) -> None:
    address = BrokerAddress.parse(broker.url)
    host_in, term_in = Inbox(), Inbox()
    host = start(clients, client("egm-host", address, host_in, subscriptions=[UP_WILDCARD]))
    term = start(clients, client("T1", address, term_in, subscriptions=[down_topic("T1")]))
    assert host.wait_connected(10) and term.wait_connected(10)
    assert term.wire_protocol == "3.1.1"  # amqtt refused MQTT 5; "auto" fell back

    up_done, on_up = delivered()
    assert term.publish(up_topic("T1"), b"\x00report\xff", on_up)
    host_in.wait_message(up_topic("T1"), b"\x00report\xff")
    assert up_done.wait(10)

    down_done, on_down = delivered()
    assert host.publish(down_topic("T1"), b"command", on_down)
    term_in.wait_message(down_topic("T1"), b"command")
    assert down_done.wait(10)

    assert host_in.connection == [True] and term_in.connection == [True]
    wait_for(lambda: term.stats["delivered"] == 1 and host.stats["received"] == 1, what="stats")
    assert term.stats["published"] == 1 and term.stats["connects"] == 1


def test_publish_returns_false_while_disconnected_and_queues_nothing(clients: list[MqttClient]) -> None:
    port = free_port()
    address = BrokerAddress("127.0.0.1", port)
    term = client("T1", address)
    assert not term.publish(up_topic("T1"), b"before start")
    start(clients, term)
    wait_for(lambda: term.stats["connect_failures"] >= 2, what="failed attempts")  # broker down
    assert not term.connected
    assert not term.publish(up_topic("T1"), b"broker down")

    b = EmbeddedBroker(port=port)
    b.start()
    try:
        host_in = Inbox()
        host = start(clients, client("egm-host", address, host_in, subscriptions=[UP_WILDCARD]))
        assert host.wait_connected(10) and term.wait_connected(10)
        assert term.publish(up_topic("T1"), b"marker")
        host_in.wait_message(up_topic("T1"), b"marker")
        assert host_in.payloads() == [b"marker"]  # the refused ones were never queued nor re-sent
    finally:
        b.stop()


def test_on_delivered_fires_for_every_message(broker: EmbeddedBroker, clients: list[MqttClient]) -> None:
    term = start(clients, client("T1", BrokerAddress.parse(broker.url)))
    assert term.wait_connected(10)
    done: list[int] = []
    lock = threading.Lock()

    def mark(i: int) -> None:
        with lock:
            done.append(i)

    for i in range(200):
        assert term.publish(up_topic("T1"), b"x" * i, lambda i=i: mark(i))
    wait_for(lambda: len(done) == 200, what="200 PUBACKs")
    assert sorted(done) == list(range(200))
    assert term.stats["delivered"] == 200


def test_callback_errors_do_not_break_the_link(broker: EmbeddedBroker, clients: list[MqttClient]) -> None:
    address = BrokerAddress.parse(broker.url)
    seen: list[bytes] = []

    def on_message(topic: str, payload: bytes) -> None:
        seen.append(payload)
        raise RuntimeError("a buggy handler")

    host = start(clients, client("egm-host", address, subscriptions=[UP_WILDCARD], on_message=on_message))
    term = start(clients, client("T1", address))
    assert host.wait_connected(10) and term.wait_connected(10)
    assert term.publish(up_topic("T1"), b"one")
    assert term.publish(up_topic("T1"), b"two", lambda: 1 / 0)
    wait_for(lambda: seen == [b"one", b"two"], what="both messages despite the errors")
    assert host.connected and term.connected


def test_stop_is_idempotent_and_works_from_a_callback(broker: EmbeddedBroker) -> None:
    address = BrokerAddress.parse(broker.url)
    never = MqttClient("never-started", address)
    never.stop()
    never.stop()

    stopped = threading.Event()
    holder: list[MqttClient] = []

    def on_connection(up: bool) -> None:
        if up:
            holder[0].stop()  # only signals: it must not join paho's own thread
            stopped.set()

    c = client("T1", address, on_connection=on_connection)
    holder.append(c)
    c.start()
    assert stopped.wait(10)
    wait_for(lambda: not c.connected, what="the stop to take effect")
    c.stop()
    c.stop()
    assert not c.publish(up_topic("T1"), b"after stop")


# --------------------------------------------------------------------------------------------------
# reconnection


def test_reconnects_after_the_broker_comes_back(clients: list[MqttClient]) -> None:
    first = EmbeddedBroker()
    port = first.start()
    address = BrokerAddress("127.0.0.1", port)
    host_in, term_in = Inbox(), Inbox()
    host = start(clients, client("egm-host", address, host_in, subscriptions=[UP_WILDCARD]))
    term = start(clients, client("T1", address, term_in, subscriptions=[down_topic("T1")]))
    assert host.wait_connected(10) and term.wait_connected(10)

    first.stop()
    wait_for(lambda: term_in.connection == [True, False] and host_in.connection == [True, False],
             what="on_connection(False)")
    assert not term.publish(up_topic("T1"), b"while down")
    wait_for(lambda: term.stats["connect_failures"] >= 1, what="a refused reconnection attempt")

    second = EmbeddedBroker(port=port)
    assert second.start() == port
    try:
        wait_for(lambda: term_in.connection == [True, False, True]
                 and host_in.connection == [True, False, True], what="on_connection(True) again")
        assert term.stats["connects"] == 2 and term.stats["disconnects"] == 1
        # the subscriptions were made again on the new broker
        assert term.publish(up_topic("T1"), b"after")
        host_in.wait_message(up_topic("T1"), b"after")
        assert host.publish(down_topic("T1"), b"cmd")
        term_in.wait_message(down_topic("T1"), b"cmd")
    finally:
        second.stop()


def test_persistent_host_session_gets_what_was_published_while_away(
    broker: EmbeddedBroker, clients: list[MqttClient]
) -> None:
    address = BrokerAddress.parse(broker.url)
    host = client("egm-host", address, subscriptions=[UP_WILDCARD], persistent_session=True)
    host.start()
    assert host.wait_connected(10)
    host.stop()

    term = start(clients, client("T1", address))
    assert term.wait_connected(10)
    acks = []
    for i in range(3):
        assert term.publish(up_topic("T1"), b"away %d" % i, lambda: acks.append(1))
    wait_for(lambda: len(acks) == 3, what="PUBACKs while the host is away")

    host_in = Inbox()
    back = start(clients, client("egm-host", address, host_in, subscriptions=[UP_WILDCARD],
                                 persistent_session=True))
    wait_for(lambda: len(host_in.messages) == 3, what="the queued messages")
    assert sorted(host_in.payloads()) == [b"away 0", b"away 1", b"away 2"]
    assert back.wait_connected(10)


def test_clean_session_gets_nothing_published_while_away(broker: EmbeddedBroker, clients: list[MqttClient]) -> None:
    address = BrokerAddress.parse(broker.url)
    term_in = Inbox()
    term = client("T1", address, subscriptions=[down_topic("T1")])
    term.start()
    assert term.wait_connected(10)
    term.stop()
    host = start(clients, client("egm-host", address))
    assert host.wait_connected(10)
    done, on_done = delivered()
    assert host.publish(down_topic("T1"), b"missed", on_done)
    assert done.wait(10)
    back = start(clients, client("T1", address, term_in, subscriptions=[down_topic("T1")]))
    assert back.wait_connected(10)
    assert host.publish(down_topic("T1"), b"marker")
    term_in.wait_message(down_topic("T1"), b"marker")
    assert term_in.payloads() == [b"marker"]


def test_explicit_mqtt5_against_amqtt_is_refused(broker: EmbeddedBroker, clients: list[MqttClient]) -> None:
    c = start(clients, client("T1", BrokerAddress.parse(broker.url), protocol="5"))
    wait_for(lambda: c.stats["connect_failures"] >= 2, what="refusals")
    assert not c.connected and c.wire_protocol == "5" and c.stats["connects"] == 0


# --------------------------------------------------------------------------------------------------
# the embedded broker


def test_embedded_broker_port_url_and_restart() -> None:
    b = EmbeddedBroker()
    port = b.start()
    assert port > 0 and b.url == f"mqtt://127.0.0.1:{port}" and b.running
    assert b.start() == port  # already running
    b.stop()
    b.stop()
    assert not b.running
    again = EmbeddedBroker(port=port)  # the port is free again
    assert again.start() == port
    try:
        busy = EmbeddedBroker(port=port)
        with pytest.raises(EmbeddedBrokerError, match="cannot listen"):
            busy.start()
    finally:
        again.stop()


def test_embedded_broker_refuses_bad_tls_files(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedBrokerError, match="cannot load"):
        EmbeddedBroker(tls=(tmp_path / "c.pem", tmp_path / "k.pem", tmp_path / "ca.pem"))


# --------------------------------------------------------------------------------------------------
# TLS: the embedded broker requires client certificates


def test_tls_round_trip(tls_broker: EmbeddedBroker, pki_files: dict[str, Path],
                        clients: list[MqttClient]) -> None:
    f = pki_files
    host_in, term_in = Inbox(), Inbox()
    host = start(clients, client("egm-host", tls_address(tls_broker, f["ca_cert"], f["host_cert"], f["host_key"]),
                                 host_in, subscriptions=[UP_WILDCARD]))
    term = start(clients, client("T1", tls_address(tls_broker, f["ca_cert"], f["terminal_cert"], f["terminal_key"]),
                                 term_in, subscriptions=[down_topic("T1")]))
    assert host.wait_connected(10) and term.wait_connected(10)
    up_done, on_up = delivered()
    assert term.publish(up_topic("T1"), b"sealed report", on_up)
    host_in.wait_message(up_topic("T1"), b"sealed report")
    assert up_done.wait(10)
    assert host.publish(down_topic("T1"), b"sealed command")
    term_in.wait_message(down_topic("T1"), b"sealed command")


@pytest.mark.parametrize("who", ["no certificate", "foreign CA", "revoked"])
def test_tls_refuses_clients_without_a_valid_certificate(
    who: str, tls_broker: EmbeddedBroker, pki_files: dict[str, Path], foreign_files: dict[str, Path],
    clients: list[MqttClient],
) -> None:
    f = pki_files
    if who == "no certificate":
        cert, key = None, None
    elif who == "foreign CA":
        cert, key = foreign_files["terminal_cert"], foreign_files["terminal_key"]
    else:
        t3 = pki.issue(f["dir"], "terminal", "T3")
        ok = start(clients, client("T3", tls_address(tls_broker, f["ca_cert"], t3.cert, t3.key)))
        assert ok.wait_connected(10)                   # T3 is a good terminal of the casino...
        ok.stop()
        pki.revoke(f["dir"], "T3", "key-compromise")   # ...until revoked, while the broker runs
        cert, key = t3.cert, t3.key
    c = start(clients, client("intruder", tls_address(tls_broker, f["ca_cert"], cert, key)))
    wait_for(lambda: c.stats["connect_failures"] >= 2, what="refusals")
    assert c.stats["connects"] == 0 and not c.connected


def test_client_refuses_a_broker_from_another_ca(tls_broker: EmbeddedBroker, pki_files: dict[str, Path],
                                                 foreign_files: dict[str, Path], clients: list[MqttClient]) -> None:
    f = pki_files
    c = start(clients, client("T1", tls_address(tls_broker, foreign_files["ca_cert"], f["terminal_cert"],
                                                f["terminal_key"])))
    wait_for(lambda: c.stats["connect_failures"] >= 2, what="refusals")
    assert c.stats["connects"] == 0


def test_tls_acl_confines_each_terminal_to_its_topics(
    tls_broker: EmbeddedBroker, pki_files: dict[str, Path], clients: list[MqttClient]
) -> None:
    f = pki_files
    host_in, t1_in = Inbox(), Inbox()
    host = start(clients, client("egm-host", tls_address(tls_broker, f["ca_cert"], f["host_cert"], f["host_key"]),
                                 host_in, subscriptions=[UP_WILDCARD]))
    t1 = start(clients, client("T1", tls_address(tls_broker, f["ca_cert"], f["terminal_cert"], f["terminal_key"]),
                               t1_in, subscriptions=[down_topic("T1"), down_topic("T2"), UP_WILDCARD]))
    t2 = start(clients, client("T2", tls_address(tls_broker, f["ca_cert"], f["t2_cert"], f["t2_key"])))
    assert host.wait_connected(10) and t1.wait_connected(10) and t2.wait_connected(10)
    assert t1.stats["subscribe_refused"] == 2  # T2's down topic and everyone's up topics

    # T1 may not speak for T2; it may speak for itself (sent after, so received after).
    assert t1.publish(up_topic("T2"), b"forged")
    assert t1.publish(up_topic("T1"), b"genuine")
    host_in.wait_message(up_topic("T1"), b"genuine")
    assert host_in.payloads() == [b"genuine"]

    # T1 reads neither T2's commands nor T2's reports, only its own commands.
    assert t2.publish(up_topic("T2"), b"t2 report")
    host_in.wait_message(up_topic("T2"), b"t2 report")
    assert host.publish(down_topic("T2"), b"for T2")
    assert host.publish(down_topic("T1"), b"for T1")
    t1_in.wait_message(down_topic("T1"), b"for T1")
    assert t1_in.payloads() == [b"for T1"]


def test_an_orderly_stop_logs_no_error(caplog: pytest.LogCaptureFixture, clients: list[MqttClient]) -> None:
    # paho's loop says "Client is not connected" at ERROR when its connection closes; the
    # supervisor reports connections itself, so a stop leaves no ERROR line in the cabinet's log.
    b = EmbeddedBroker()
    b.start()
    try:
        c = start(clients, client("T1", BrokerAddress.parse(b.url)))
        assert c.wait_connected(10)
        with caplog.at_level(logging.DEBUG, logger="egm.hostlink.mqtt"):
            c.stop()
            b.stop()
            time.sleep(0.3)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
    finally:
        b.stop()


def test_a_connection_whose_every_subscription_is_refused_is_dropped_and_made_again(
    tls_broker: EmbeddedBroker, pki_files: dict[str, Path], clients: list[MqttClient]
) -> None:
    """A floor cluster node refuses subscriptions while it elects its MQTT streams' leaders (a node
    just died): a terminal that stayed connected then would never hear its acknowledgements. One
    whose every subscription is refused (here: T1 asks only for T2's topic) connects again."""
    f = pki_files
    t1 = start(clients, client("T1", tls_address(tls_broker, f["ca_cert"], f["terminal_cert"], f["terminal_key"]),
                               subscriptions=[down_topic("T2")]))
    wait_for(lambda: t1.stats["deaf_connections"] >= 2, what="two connections dropped for their refused subscriptions")
    assert t1.stats["connects"] >= 2 and t1.stats["subscribe_refused"] >= 2
    assert not t1.wait_connected(0.5)
