"""A load harness for the embedded broker's QoS 1 guarantee: what it acknowledges, it delivers.

:func:`run` starts :class:`~firmware.hostlink.broker.EmbeddedBroker` on a loopback port with TLS and
client certificates (as the product does), one subscriber like the host (``egm/v1/+/up``, QoS 1,
persistent session) and several publishers like terminals (each on its own ``up`` topic with its
own certificate). The publishers send QoS 1 messages with unique ids, each keeping a window of
messages waiting for their PUBACK. Meanwhile the subscriber is disconnected and reconnected (same
client id, persistent session, so it subscribes again every time) and "flapping" terminals connect,
subscribe to their ``down`` topic and leave, over and over (each one adds a topic filter to the
broker's subscriptions and removes it again, as a terminal re-subscribing does).

A second persistent subscriber (:data:`AUDIT_ID`) takes each publisher's ``up`` topic by name.
The result counts the ids acknowledged to the publishers and the ids delivered to each subscriber;
every acknowledged id must be delivered to both at least once. Used by ``tests/hostlink/test_broker_delivery.py``
(a small run in the default suite, a large one marked ``fuzz``) and ``benchmarks/bench_broker.py``.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from egmproto import pki
from egmproto.mqtt import (
    UP_WILDCARD,
    BrokerAddress,
    MqttClient,
    TlsFiles,
    down_topic,
    up_topic,
)
from firmware.hostlink.broker import EmbeddedBroker

HOST_ID = "egm-host"
#: A second persistent subscriber, on each publisher's own ``up`` topic (a standby or audit host):
#: a message then matches two topic filters, the host's ``egm/v1/+/up`` and ``egm/v1/<T>/up``.
AUDIT_ID = "egm-audit"
#: Messages a publisher has waiting for their PUBACK at most (paho queues the rest otherwise).
WINDOW = 50


@dataclass
class LoadResult:
    """What one run saw; ids are ``b"<terminal>:<n>"``, ``delivered`` is per subscriber."""

    messages: int
    acked: set[bytes] = field(default_factory=set)
    delivered: dict[str, collections.Counter[bytes]] = field(default_factory=lambda: {
        HOST_ID: collections.Counter(), AUDIT_ID: collections.Counter()})
    publish_seconds: float = 0.0       #: from the first publish to the last PUBACK
    subscriber_connections: int = 0
    flaps: int = 0

    @property
    def lost(self) -> dict[str, list[bytes]]:
        """Per subscriber, the ids acknowledged to a publisher and never delivered to it."""
        missing = {who: sorted(self.acked - got.keys()) for who, got in self.delivered.items()}
        return {who: ids for who, ids in missing.items() if ids}

    @property
    def duplicates(self) -> int:
        return sum(sum(got.values()) - len(got) for got in self.delivered.values())

    @property
    def acked_per_s(self) -> float:
        return len(self.acked) / self.publish_seconds if self.publish_seconds else 0.0

    def summary(self) -> str:
        lost = self.lost
        delivered = ", ".join(f"{len(self.acked) - len(lost.get(who, ()))} of them delivered to {who}"
                              for who in self.delivered)
        return (f"{self.messages} published, {len(self.acked)} acknowledged, {delivered} "
                f"({sum(map(len, lost.values()))} lost), "
                f"{self.duplicates} duplicates, {self.subscriber_connections} host connections, "
                f"{self.flaps} flaps, {self.acked_per_s:.0f} acknowledged/s")


def pki_for(directory: Path, terminals: int, flappers: int) -> dict[str, Path]:
    """A development PKI with terminals ``T1``..``Tn`` and flappers ``F1``..``Fm``."""
    files = pki.ensure_development_pki(directory, "T1")
    for name in [f"T{i}" for i in range(2, terminals + 1)] + [f"F{i}" for i in range(1, flappers + 1)]:
        issue = pki.issue(files["dir"], "terminal", name)
        files[f"{name}_cert"], files[f"{name}_key"] = issue.cert, issue.key
    files["T1_cert"], files["T1_key"] = files["terminal_cert"], files["terminal_key"]
    return files


class _Subscriber:
    """A host's side: a persistent session on ``subscriptions``, reconnected at will."""

    def __init__(self, client_id: str, subscriptions: list[str], address: BrokerAddress,
                 result: LoadResult) -> None:
        self.client_id, self.subscriptions, self.address, self.result = client_id, subscriptions, address, result
        self.lock = threading.Lock()
        self.client: MqttClient | None = None

    def on_message(self, _topic: str, payload: bytes) -> None:
        with self.lock:
            self.result.delivered[self.client_id][payload] += 1

    def connect(self) -> None:
        self.client = MqttClient(self.client_id, self.address, subscriptions=self.subscriptions,
                                 on_message=self.on_message, persistent_session=True,
                                 min_backoff=0.05, max_backoff=0.3)
        self.client.start()
        if not self.client.wait_connected(20):
            raise RuntimeError(f"{self.client_id} did not connect")
        if self.client_id == HOST_ID:
            self.result.subscriber_connections += 1

    def disconnect(self) -> None:
        if self.client is not None:
            self.client.stop()
            self.client = None


def _publisher(name: str, address: BrokerAddress, count: int, result: LoadResult, lock: threading.Lock,
               failures: list[str], ready: threading.Barrier, finished: threading.Event,
               leave: threading.Event | None) -> None:
    """Connect (subscribed to our ``down`` topic, as a terminal is), wait for ``ready``, publish
    ``count`` ids; stay connected until ``leave`` is set (if given), then disconnect."""
    client = MqttClient(name, address, subscriptions=[down_topic(name)], min_backoff=0.05, max_backoff=0.3)
    client.start()
    window = threading.Semaphore(WINDOW)
    outstanding = threading.Event()
    left = [count]

    def acked(message_id: bytes) -> None:
        with lock:
            result.acked.add(message_id)
            left[0] -= 1
            if not left[0]:
                outstanding.set()
        window.release()

    try:
        if not client.wait_connected(20):
            failures.append(f"{name} did not connect")
            ready.abort()
            return
        ready.wait(30)  # every publisher is connected ...
        ready.wait(30)  # ... and so is the subscriber
        for n in range(count):
            message_id = f"{name}:{n}".encode()
            window.acquire()
            while not client.publish(up_topic(name), message_id, lambda m=message_id: acked(m)):
                time.sleep(0.01)  # not connected: publish() queued nothing
        if not outstanding.wait(120):
            failures.append(f"{name}: {left[0]} messages never acknowledged")
        finished.set()
        if leave is not None:
            leave.wait()
    finally:
        finished.set()
        client.stop()


def _flap(name: str, address: BrokerAddress, stop: threading.Event, result: LoadResult) -> None:
    while not stop.is_set():
        client = MqttClient(name, address, subscriptions=[down_topic(name)], min_backoff=0.05, max_backoff=0.3)
        client.start()
        client.wait_connected(10)
        client.stop()
        result.flaps += 1


def run(files: dict[str, Path], *, messages: int = 3000, terminals: int = 4, flappers: int = 2,
        reconnect_every: float = 0.5, linger: bool = False, settle: float = 30.0) -> LoadResult:
    """Publish ``messages`` (spread over ``terminals``) with the disturbances above; see the module.

    ``reconnect_every``: seconds between two reconnections of the subscriber (0: never);
    ``flappers``: terminals connecting and subscribing over and over; ``linger``: the publishers
    stay connected until everything was delivered (or ``settle`` seconds passed) instead of leaving
    as soon as their last message is acknowledged.
    """
    broker = EmbeddedBroker(tls=(files["host_cert"], files["host_key"], files["ca_cert"]))
    broker.start()
    result = LoadResult(messages)

    def address(name: str) -> BrokerAddress:
        cert, key = (files["host_cert"], files["host_key"]) if name in (HOST_ID, AUDIT_ID) else \
            (files[f"{name}_cert"], files[f"{name}_key"])
        return BrokerAddress.parse(broker.url, TlsFiles(files["ca_cert"], cert, key))

    subscriber = _Subscriber(HOST_ID, [UP_WILDCARD], address(HOST_ID), result)
    audit = _Subscriber(AUDIT_ID, [up_topic(f"T{i + 1}") for i in range(terminals)], address(AUDIT_ID), result)
    lock, failures, stop, leave = threading.Lock(), [], threading.Event(), threading.Event()
    ready = threading.Barrier(terminals + 1)
    per = [messages // terminals + (i < messages % terminals) for i in range(terminals)]
    finished = [threading.Event() for _ in range(terminals)]
    publishers = [threading.Thread(target=_publisher, daemon=True, args=(
        f"T{i + 1}", address(f"T{i + 1}"), per[i], result, lock, failures, ready, finished[i],
        leave if linger else None,
    )) for i in range(terminals)]
    flapping = [threading.Thread(target=_flap, args=(f"F{i + 1}", address(f"F{i + 1}"), stop, result),
                                 daemon=True) for i in range(flappers)]
    try:
        for thread in publishers:
            thread.start()
        ready.wait(30)  # the terminals' subscriptions come before the host's, as after a host restart
        subscriber.connect()
        audit.connect()
        ready.wait(30)
        started = time.monotonic()
        for thread in flapping:
            thread.start()
        while not all(f.wait(reconnect_every or None) for f in finished):
            subscriber.disconnect()
            subscriber.connect()
        result.publish_seconds = time.monotonic() - started
        stop.set()
        for thread in flapping:
            thread.join(15)
        if failures:
            raise RuntimeError("; ".join(failures))
        deadline = time.monotonic() + settle
        while result.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        return result
    finally:
        stop.set()
        leave.set()
        for thread in publishers:
            thread.join(15)
        subscriber.disconnect()
        audit.disconnect()
        broker.stop()
