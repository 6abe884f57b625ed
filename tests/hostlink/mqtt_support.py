"""Helpers of the MQTT transport tests: waiting for conditions, recording callbacks, free ports."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

from egmproto.mqtt import BrokerAddress, MqttClient

TIMEOUT = 10.0


def wait_for(condition: Callable[[], bool], timeout: float = TIMEOUT, what: str = "condition") -> None:
    """Poll ``condition`` until it holds; fail the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Inbox:
    """Records ``on_message`` and ``on_connection`` calls (from paho's thread)."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, bytes]] = []
        self.connection: list[bool] = []
        self._lock = threading.Lock()

    def on_message(self, topic: str, payload: bytes) -> None:
        with self._lock:
            self.messages.append((topic, payload))

    def on_connection(self, up: bool) -> None:
        with self._lock:
            self.connection.append(up)

    def wait_message(self, topic: str, payload: bytes, timeout: float = TIMEOUT) -> None:
        wait_for(lambda: (topic, payload) in self.messages, timeout, f"{payload!r} on {topic}")

    def payloads(self) -> list[bytes]:
        with self._lock:
            return [p for _, p in self.messages]


def client(
    client_id: str, address: BrokerAddress, inbox: Inbox | None = None, **kwargs: object
) -> MqttClient:
    """An :class:`MqttClient` with fast backoff, wired to ``inbox``."""
    kwargs.setdefault("min_backoff", 0.05)
    kwargs.setdefault("max_backoff", 0.3)
    if inbox is not None:
        kwargs.setdefault("on_message", inbox.on_message)
        kwargs.setdefault("on_connection", inbox.on_connection)
    return MqttClient(client_id, address, **kwargs)  # type: ignore[arg-type]


def delivered() -> tuple[threading.Event, Callable[[], None]]:
    """An event and the ``on_delivered`` callback that sets it."""
    event = threading.Event()
    return event, event.set


def start(clients: list[MqttClient], c: MqttClient) -> MqttClient:
    clients.append(c)
    c.start()
    return c
