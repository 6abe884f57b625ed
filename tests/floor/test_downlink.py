"""The host's way out on the floor cluster (host/nats_downlink.py): core NATS on a terminal's down
subject reaches the terminal's MQTT QoS 1 subscription; refused, not queued, while no node answers."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from egmproto.mqtt import down_topic
from host.local.nats import NatsCluster
from host.nats_downlink import NatsDownlink

from .conftest import host_tls, needs_nats, terminal_client, wait_for


@needs_nats
def test_messages_reach_the_terminals_subscription_in_order(fresh_stream: NatsCluster,
                                                            casino: dict[str, Path]) -> None:
    cluster = fresh_stream
    got: list[bytes] = []
    lock = threading.Lock()

    def on_message(topic: str, payload: bytes) -> None:
        assert topic == down_topic("T1")
        with lock:
            got.append(payload)

    terminal = terminal_client(casino, "T1", cluster.mqtt_urls[2], subscriptions=[down_topic("T1")],
                               on_message=on_message)
    terminal.start()
    downlink = NatsDownlink("egm-host-test", cluster.nats_urls, tls=host_tls(casino))
    try:
        assert terminal.wait_connected(20)
        downlink.start()
        assert downlink.wait_connected(20)
        sent = [f"ack:{i}".encode() for i in range(500)]
        for payload in sent:
            assert downlink.publish(down_topic("T1"), payload)
        wait_for(lambda: len(got) >= 500, what="the terminal's 500 messages")
        assert got == sent                                  # each once, in the order published
        assert downlink.stats["published"] == 500 and not downlink.stats["dropped"]
        with pytest.raises(ValueError):
            downlink.publish("egm/v1/T1/sideways", b"x")    # only terminals' topics
        with pytest.raises(TypeError):
            downlink.publish(down_topic("T1"), b"x", on_delivered=lambda: None)   # no receipts in core NATS
    finally:
        downlink.stop()
        terminal.stop()
    assert not downlink.connected
    assert not downlink.publish(down_topic("T1"), b"late")  # stopped: refused, nothing queued
    assert downlink.stats["refused"] == 1


def test_refuses_while_no_node_answers(casino: dict[str, Path]) -> None:
    downlink = NatsDownlink("egm-host-test", "tls://127.0.0.1:9", tls=host_tls(casino))   # nothing listens
    downlink.start()
    try:
        wait_for(lambda: downlink.stats["connect_failures"] >= 1, what="a refused connection")
        assert not downlink.publish(down_topic("T1"), b"x")
        assert downlink.stats["refused"] == 1 and downlink.stats["published"] == 0
    finally:
        downlink.stop()
