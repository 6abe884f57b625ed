"""A broker node killed (SIGKILL) under a terminal mid-stream: its MqttClient goes on to the next
node of its list, every report it sent reaches the host's workers, the node rejoins when started
again; and the stream, replicated on three nodes, keeps what it holds when its leader is killed
while no worker runs."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nats
import pytest

from egmproto.mqtt import up_topic
from host.jetstream import STREAM, JetStreamSource
from host.local.nats import NatsCluster

from .conftest import Recorder, host_tls, needs_nats, publish_numbers, terminal_client, wait_for

log = logging.getLogger("tests.floor")


def stream_state(cluster: NatsCluster, casino: dict[str, Path], node: int) -> Any:
    """The stream's info as node ``node`` tells it."""

    async def ask() -> Any:
        nc = await nats.connect(servers=[cluster.nats_urls[node]], tls=host_tls(casino).context(),
                                allow_reconnect=False, connect_timeout=3)
        try:
            return await nc.jetstream(timeout=5).stream_info(STREAM)
        finally:
            await nc.close()

    return asyncio.run(ask())


class Sender:
    """A terminal's reports numbered 0, 1, ..., sent as the terminal's outbox sends them: what the
    broker did not PUBACK on a connection that ended goes again on the next one, and what the host
    (here: the workers) has not seen :data:`ACK_TIMEOUT_S` after its PUBACK goes again too."""

    ACK_TIMEOUT_S = 2.0

    def __init__(self, client: Any, total: int, seen: Callable[[], set[int]]) -> None:
        self.client = client
        self.total = total
        self.seen = seen
        self.unacked: dict[int, int] = {}          # number -> the connection it went out on
        self.acked: dict[int, float] = {}          # number -> when its PUBACK came
        self.next = 0
        self.resent_unseen = 0                     # PUBACKed, yet never reached the stream
        self._checked = time.monotonic()

    def resend_unseen(self) -> None:
        """The application's resend: PUBACKed long ago and still not at the host."""
        now = time.monotonic()
        if now - self._checked < self.ACK_TIMEOUT_S / 2:
            return
        self._checked = now
        seen = self.seen()
        for n, at in list(self.acked.items()):
            if n not in seen and now - at > self.ACK_TIMEOUT_S and self._send(n):
                del self.acked[n]
                self.resent_unseen += 1

    def _send(self, n: int) -> bool:
        conn = self.client.stats["connects"]
        if not self.client.publish(up_topic("T1"), b"%d" % n, lambda: self.acked.__setitem__(n, time.monotonic())):
            return False
        self.unacked[n] = conn
        return True

    @property
    def done(self) -> bool:
        return len(self.acked) == self.total

    def pump(self) -> None:
        """Re-send what a lost connection took with it, then the next new number."""
        now_conn = self.client.stats["connects"]
        for n, conn in list(self.unacked.items()):
            if n in self.acked:
                del self.unacked[n]
            elif conn < now_conn:
                self._send(n)
        if self.next < self.total and self._send(self.next):
            self.next += 1


def kill_cycle(cluster: NatsCluster, casino: dict[str, Path], term: Any, got: Recorder,
               connected_at: list[float], total: int) -> tuple[float, int, int]:
    """Reports 0..total-1 from ``term``; the node it is on is SIGKILLed a third of the way; every
    number must reach the workers. Returns (seconds from the kill to the first PUBACK on another
    node, reports sent again because they never reached the stream, duplicates at the workers)."""
    before = len(got.items)
    victim = cluster.mqtt_urls.index(term.address.url)
    sender = Sender(term, total, lambda: {int(p) for p in got.payloads()[before:]})
    killed_at = resumed_at = 0.0
    while not (sender.done and len(sender.seen()) == total):
        sender.pump()
        sender.resend_unseen()
        if sender.next == total // 3 and not killed_at:
            cluster.kill(victim)
            killed_at = time.monotonic()
        if killed_at and not resumed_at and connected_at[-1] > killed_at:     # on another node
            after = [t for t in list(sender.acked.values()) if t > connected_at[-1]]
            resumed_at = min(after) if after else 0.0
        time.sleep(0.002)
        assert time.monotonic() - (killed_at or time.monotonic()) < 120, "the terminal never resumed"
    assert term.address.url != cluster.mqtt_urls[victim]
    numbers = [int(p) for p in got.payloads()[before:]]
    assert set(numbers) == set(range(total))
    cluster.restart(victim)                                              # the node rejoins
    wait_for(lambda: all(r.current for r in (stream_state(cluster, casino, victim).cluster.replicas or [])),
             timeout=60, what="the restarted node's replica to catch up")
    return resumed_at - killed_at, sender.resent_unseen, len(numbers) - total


@needs_nats
@pytest.mark.soak
def test_a_terminal_moves_to_another_node_and_nothing_is_lost(
        cluster: NatsCluster, casino: dict[str, Path], workers: Callable[..., JetStreamSource]) -> None:
    """``make soak``: EGM_FLOOR_KILLS cycles (default 5) of 1,500 reports each, the terminal's node
    killed in every one; prints how long the terminal took to resume each time."""
    a, b, c = cluster.nats_urls
    got = Recorder()
    workers([b, c, a], got)
    workers([c, a, b], got)
    connected_at: list[float] = []
    term = terminal_client(casino, "T1", cluster.mqtt_url,          # the product's backoff: 0.5 s, 30 s
                           on_connection=lambda up: connected_at.append(time.monotonic()) if up else None)
    term.start()
    try:
        assert term.wait_connected(10)
        for cycle in range(int(os.environ.get("EGM_FLOOR_KILLS", "5"))):
            resume, resent, duplicates = kill_cycle(cluster, casino, term, got, connected_at, 1500)
            print(f"cycle {cycle}: resumed {resume:.2f} s after the kill; {resent} reports sent again "
                  f"(never reached the stream); {duplicates} duplicates")
    finally:
        term.stop()


@needs_nats
def test_the_stream_keeps_its_messages_when_its_leader_dies(
        cluster: NatsCluster, casino: dict[str, Path], workers: Callable[..., JetStreamSource]) -> None:
    workers(cluster.nats_urls, Recorder()).stop()                      # the stream exists; no worker
    info = stream_state(cluster, casino, 0)
    assert info.config.num_replicas == 3 and len(info.cluster.replicas) == 2
    publish_numbers(casino, "T1", cluster.mqtt_url, 100)
    wait_for(lambda: stream_state(cluster, casino, 0).state.messages == 100, what="the stream to hold them")
    leader = stream_state(cluster, casino, 0).cluster.leader
    index = next(n.index for n in cluster.nodes if n.name == leader)
    cluster.kill(index)
    survivors = [u for i, u in enumerate(cluster.nats_urls) if i != index]
    got = Recorder()
    workers(survivors, got)
    wait_for(lambda: len(got.items) >= 100, timeout=30, what="the 100 from the surviving replicas")
    assert sorted(int(p) for p in got.payloads()) == list(range(100))
    cluster.restart(index, wait=False)                                  # rejoining: see the soak test
