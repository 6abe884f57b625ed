"""The embedded broker delivers every QoS 1 message it acknowledged, at least once, to every matching
subscription of a persistent session, across the subscriber's reconnections (``reliable_broker.py``).

The load runs use ``broker_load.run`` (TLS, client certificates, a host-like persistent subscriber,
terminal-like publishers); each small run isolates one way amqtt 0.12.1 lost messages, the large
one (``make fuzz``) combines them. The raw-socket test checks MQTT 3.1.1 [MQTT-4.4.0-1] byte by byte.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from egmproto.mqtt import UP_WILDCARD, BrokerAddress, MqttClient, up_topic
from firmware.hostlink.broker import EmbeddedBroker
from tests.hostlink import broker_load
from tests.hostlink.mqtt_support import delivered


@pytest.fixture(scope="module")
def load_pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return broker_load.pki_for(tmp_path_factory.mktemp("load"), terminals=4, flappers=2)


@pytest.mark.parametrize("disturbance", [
    # publishers disconnect as soon as their last message is acknowledged
    pytest.param({"flappers": 0, "reconnect_every": 0}, id="publishers-leave"),
    # terminals subscribe and leave while messages are broadcast
    pytest.param({"flappers": 2, "reconnect_every": 0, "linger": True}, id="terminals-resubscribe"),
    # the host-like subscriber disconnects and reconnects (persistent session)
    pytest.param({"flappers": 0, "reconnect_every": 0.4, "linger": True}, id="subscriber-reconnects"),
])
def test_every_acknowledged_message_is_delivered(load_pki: dict[str, Path], disturbance: dict) -> None:
    result = broker_load.run(load_pki, messages=2000, settle=15, **disturbance)
    assert len(result.acked) == 2000, result.summary()
    assert result.lost == {}, result.summary()
    if disturbance["reconnect_every"]:
        assert result.subscriber_connections >= 2, result.summary()
    if disturbance["flappers"]:
        assert result.flaps >= 2, result.summary()


@pytest.mark.fuzz
def test_every_acknowledged_message_is_delivered_large_run(load_pki: dict[str, Path]) -> None:
    result = broker_load.run(load_pki, messages=20_000, flappers=2, reconnect_every=0.5, settle=60)
    assert len(result.acked) == 20_000, result.summary()
    assert result.lost == {}, result.summary()


# --------------------------------------------------------------------------------------------------
# MQTT 3.1.1 [MQTT-4.4.0-1]: an unacknowledged PUBLISH is sent again on reconnection, DUP set


class RawClient:
    """Just enough MQTT 3.1.1 over a plain socket to leave a PUBLISH unacknowledged on purpose."""

    def __init__(self, port: int, client_id: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        cid = client_id.encode()
        # CONNECT: protocol "MQTT" level 4, flags 0 (clean session off), keepalive 60
        body = b"\x00\x04MQTT\x04\x00\x00\x3c" + struct.pack("!H", len(cid)) + cid
        self.sock.sendall(b"\x10" + _length(len(body)) + body)
        assert self.read()[0] >> 4 == 2  # CONNACK

    def subscribe(self, topic_filter: str) -> None:
        f = topic_filter.encode()
        body = b"\x00\x01" + struct.pack("!H", len(f)) + f + b"\x01"
        self.sock.sendall(b"\x82" + _length(len(body)) + body)
        assert self.read()[0] >> 4 == 9  # SUBACK

    def read(self) -> tuple[int, bytes]:
        first = self._exactly(1)[0]
        length, shift = 0, 0
        while True:
            byte = self._exactly(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return first, self._exactly(length)

    def publish_received(self) -> tuple[bool, int, bytes]:
        """The next PUBLISH: (DUP flag, packet identifier, payload)."""
        first, body = self.read()
        assert first >> 4 == 3, f"expected a PUBLISH, got packet type {first >> 4}"
        topic_len = struct.unpack("!H", body[:2])[0]
        packet_id = struct.unpack("!H", body[2 + topic_len:4 + topic_len])[0]
        return bool(first & 0x08), packet_id, body[4 + topic_len:]

    def puback(self, packet_id: int) -> None:
        self.sock.sendall(b"\x40\x02" + struct.pack("!H", packet_id))

    def close(self) -> None:
        self.sock.close()

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the broker closed the connection")
            data += chunk
        return data


def _length(n: int) -> bytes:
    out = bytearray()
    while True:
        n, digit = divmod(n, 128)
        out.append(digit | (0x80 if n else 0))
        if not n:
            return bytes(out)


@pytest.fixture
def plain_broker() -> Iterator[EmbeddedBroker]:
    b = EmbeddedBroker()
    b.start()
    yield b
    b.stop()


def test_unacknowledged_message_is_sent_again_on_reconnection(plain_broker: EmbeddedBroker) -> None:
    host = RawClient(plain_broker.port, "egm-host")
    host.subscribe(UP_WILDCARD)
    terminal = MqttClient("T1", BrokerAddress.parse(plain_broker.url), min_backoff=0.05, max_backoff=0.3)
    terminal.start()
    try:
        assert terminal.wait_connected(10)
        acked, on_acked = delivered()
        assert terminal.publish(up_topic("T1"), b"report 1", on_acked)
        assert acked.wait(10)
        dup, packet_id, payload = host.publish_received()
        assert (dup, payload) == (False, b"report 1")
        host.close()  # gone without a PUBACK

        back = RawClient(plain_broker.port, "egm-host")
        try:
            again = back.publish_received()
            assert again == (True, packet_id, b"report 1")
            back.puback(packet_id)
            back.subscribe(UP_WILDCARD)  # the SUBACK comes: nothing else was waiting
        finally:
            back.close()
    finally:
        terminal.stop()
