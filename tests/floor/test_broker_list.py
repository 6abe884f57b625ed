"""A terminal's broker setting may list a cluster's nodes: ``BrokerAddress.parse_list`` and an
``MqttClient`` that goes on to the next node when one fails (embedded brokers, no NATS needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles, TransportError, up_topic
from firmware.hostlink.broker import EmbeddedBroker
from tests.hostlink.mqtt_support import free_port

from .conftest import wait_for


def test_a_list_of_brokers_is_parsed_in_order(tmp_path: Path) -> None:
    tls = TlsFiles(tmp_path / "ca.pem")
    three = BrokerAddress.parse_list("mqtts://h1:8884, h2:8885,mqtts://h3", tls)
    assert [a.url for a in three] == ["mqtts://h1:8884", "mqtts://h2:8885", "mqtts://h3:8883"]
    assert all(a.tls == tls for a in three)
    assert BrokerAddress.parse_list(["mqtt://a:1", "mqtt://b:2"]) == (BrokerAddress("a", 1), BrokerAddress("b", 2))
    assert BrokerAddress.parse_list("mqtt://solo:1") == (BrokerAddress.parse("mqtt://solo:1"),)
    for bad, why in [("", "one or more"), ("mqtt://a:1,", "one or more"), ([], "one or more"),
                     ("h1:1,mqtt://h2:2", "scheme"), ("mqtt://a:1,http://b:2", "scheme")]:
        with pytest.raises(TransportError, match=why):
            BrokerAddress.parse_list(bad)
    with pytest.raises(TransportError, match="unencrypted"):
        BrokerAddress.parse_list(["mqtts://a:1", "mqtt://b:2"], tls)
    with pytest.raises(TransportError, match="a BrokerAddress or a list"):
        MqttClient("c", [])


def test_the_client_goes_on_to_the_next_broker() -> None:
    first, second = EmbeddedBroker(), EmbeddedBroker()
    first.start()
    second.start()
    dead = f"mqtt://127.0.0.1:{free_port()}"
    term = MqttClient("T1", BrokerAddress.parse_list([dead, first.url, second.url]), min_backoff=0.05,
                      max_backoff=0.2)
    term.start()
    try:
        assert term.wait_connected(10)                      # the first one refused: the second took it
        assert term.address.url == first.url and term.stats["connect_failures"] >= 1
        first.stop()                                        # its node goes: on to the next
        wait_for(lambda: term.connected and term.address.url == second.url, what="the move to the third")
        acked: list[int] = []
        assert term.publish(up_topic("T1"), b"after the move", lambda: acked.append(1))
        wait_for(lambda: acked, what="the PUBACK")
        second.stop()                                       # round the list: the dead one, the first ...
        wait_for(lambda: term.stats["connect_failures"] >= 4, what="attempts round the list")
        assert not term.connected
    finally:
        term.stop()
        first.stop()
        second.stop()
