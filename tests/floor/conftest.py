"""The floor broker cluster on this machine: a casino PKI, a 3-node NATS JetStream cluster
(host/local/nats.py), terminals' MQTT clients and the host's JetStream workers.

Every test that needs the cluster is skipped, saying why, when ``nats-server`` is not installed
(Debian: ``apt-get install nats-server``)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import nats
import nats.js.errors
import pytest

from egmproto import pki
from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles, up_topic
from host.jetstream import CONSUMER, STREAM, JetStreamSource
from host.local.nats import NatsCluster, find_nats_server

needs_nats = pytest.mark.skipif(find_nats_server() is None, reason="nats-server is not installed "
                                "(apt-get install nats-server): the floor broker cluster cannot run")


@pytest.fixture(scope="module")
def casino(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A development PKI with terminals T1, T2 and T-001 and the host."""
    files = pki.ensure_development_pki(tmp_path_factory.mktemp("casino"), "T1")
    for terminal in ("T2", "T-001"):
        pki.issue(files["dir"], "terminal", terminal)
    return files


@pytest.fixture
def cluster(tmp_path: Path, casino: dict[str, Path]) -> Iterator[NatsCluster]:
    """A cluster of this test's own (for tests that kill nodes)."""
    c = NatsCluster(tmp_path / "cluster", casino["dir"])
    c.start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def shared_cluster(tmp_path_factory: pytest.TempPathFactory, casino: dict[str, Path]) -> Iterator[NatsCluster]:
    """One cluster for the module's tests that kill no node; see :func:`fresh_stream`."""
    c = NatsCluster(tmp_path_factory.mktemp("cluster"), casino["dir"])
    c.start()
    yield c
    c.stop()


@pytest.fixture
def fresh_stream(shared_cluster: NatsCluster, casino: dict[str, Path]) -> NatsCluster:
    """The shared cluster without the host's stream (nor its consumer): each test starts clean."""

    async def drop() -> None:
        nc = await nats.connect(servers=shared_cluster.nats_urls, tls=host_tls(casino).context())
        try:
            await nc.jetstream(timeout=5).delete_stream(STREAM)
        except nats.js.errors.NotFoundError:
            pass
        finally:
            await nc.close()

    asyncio.run(drop())
    return shared_cluster


def terminal_tls(casino: dict[str, Path], terminal: str) -> TlsFiles:
    issued = casino["dir"] / "issued"
    return TlsFiles(casino["ca_cert"], issued / f"{terminal}.cert.pem", issued / f"{terminal}.key.pem")


def host_tls(casino: dict[str, Path]) -> TlsFiles:
    return TlsFiles(casino["ca_cert"], casino["host_cert"], casino["host_key"])


def terminal_client(casino: dict[str, Path], terminal: str, urls: list[str] | str, **kw: object) -> MqttClient:
    return MqttClient(terminal, BrokerAddress.parse_list(urls, terminal_tls(casino, terminal)), **kw)  # type: ignore[arg-type]


def publish_numbers(casino: dict[str, Path], terminal: str, urls: list[str] | str, count: int) -> None:
    """``terminal`` publishes b"0" .. b"count-1" at QoS 1 on its ``up`` topic and waits for every
    PUBACK, then disconnects."""
    term = terminal_client(casino, terminal, urls)
    term.start()
    try:
        assert term.wait_connected(10)
        acked: list[int] = []
        for i in range(count):
            assert term.publish(up_topic(terminal), b"%d" % i, lambda i=i: acked.append(i))
        wait_for(lambda: len(acked) == count, what="the PUBACKs")
    finally:
        term.stop()


def consumer_ready(cluster: NatsCluster, casino: dict[str, Path]) -> bool:
    """The host's stream and its consumer group exist (a worker made them)."""

    async def ask() -> bool:
        nc = await nats.connect(servers=cluster.nats_urls, tls=host_tls(casino).context())
        try:
            await nc.jetstream(timeout=5).consumer_info(STREAM, CONSUMER)
            return True
        except nats.js.errors.NotFoundError:
            return False
        finally:
            await nc.close()

    return asyncio.run(ask())


class Recorder:
    """The host-side callback of a worker: records every (topic, payload) it is handed."""

    def __init__(self) -> None:
        self.items: list[tuple[str, bytes]] = []
        self.lock = threading.Lock()

    def __call__(self, items: list[tuple[str, bytes]]) -> None:
        with self.lock:
            self.items.extend(items)

    def payloads(self) -> list[bytes]:
        with self.lock:
            return [p for _, p in self.items]


@pytest.fixture
def workers(casino: dict[str, Path]) -> Iterator[Callable[..., JetStreamSource]]:
    """Start JetStream workers (``workers(urls, on_batch)``); every one is stopped at the end."""
    started: list[JetStreamSource] = []

    def make(urls: list[str], on_batch: Callable[[list[tuple[str, bytes]]], object], **kw: object) -> JetStreamSource:
        kw.setdefault("replicas", 3)
        w = JetStreamSource(urls, on_batch, tls=host_tls(casino), name=f"test-worker-{len(started)}", **kw)  # type: ignore[arg-type]
        started.append(w)
        w.start()
        assert w.wait_ready(30), "the JetStream worker did not get ready"
        return w

    yield make
    for w in started:
        w.stop()


def wait_for(condition: Callable[[], object], timeout: float = 20.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)
