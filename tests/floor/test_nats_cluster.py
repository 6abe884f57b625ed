"""The floor broker cluster (host/local/nats.py) and the host's consumer group (host/jetstream.py)
on a real 3-node nats-server cluster: client certificates required on MQTT and NATS, a terminal's
QoS 1 reports shared exactly once between two workers on other nodes, batches acknowledged only
after the host's callback returned, redelivered to another worker when one dies."""

from __future__ import annotations

import asyncio
import os
import queue
import re
import signal
import socket
import ssl
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import nats
import pytest

from egmproto import pki
from egmproto.mqtt import TlsFiles, up_topic
from host.jetstream import JetStreamSource, parse_urls, subject_of, topic_of
from host.local.nats import NatsCluster, NatsClusterError
from host.store import HostStore

from .conftest import (
    Recorder,
    consumer_ready,
    host_tls,
    needs_nats,
    publish_numbers,
    terminal_client,
    wait_for,
)
from .test_node_loss import stream_state

ROOT = Path(__file__).resolve().parents[2]


def test_topics_map_to_subjects_and_back_exactly() -> None:
    for terminal, subject in [("T1", "egm.v1.T1.up"), ("T-001", "egm.v1.T-001.up"),
                              ("a_b", "egm.v1.a_b.up"), ("a.b", "egm.v1.a//b.up"), ("x..y", "egm.v1.x////y.up")]:
        assert subject_of(up_topic(terminal)) == subject
        assert topic_of(subject) == up_topic(terminal)


def test_server_lists_are_checked() -> None:
    assert parse_urls("tls://a:1, tls://b:2") == ["tls://a:1", "tls://b:2"]
    for bad in ("", "a:1", "tls://a:1,", "mqtts://a:1"):
        with pytest.raises(ValueError, match="NATS server list"):
            parse_urls(bad)


def test_no_nats_server_is_a_clear_error(tmp_path: Path, casino: dict[str, Path]) -> None:
    with pytest.raises(NatsClusterError, match="nats-server is not installed"):
        NatsCluster(tmp_path, casino["dir"], binary=str(tmp_path / "no-such-nats-server"))


@needs_nats
def test_a_node_that_cannot_start_is_reported_with_its_log(tmp_path: Path, casino: dict[str, Path]) -> None:
    cluster = NatsCluster(tmp_path / "c", casino["dir"])
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", cluster.nodes[1].client_port))   # n2's port is taken
        squatter.listen()
        with pytest.raises(NatsClusterError, match=r"(?s)nats node n2 exited.*address already in use"):
            cluster.start()
    assert not any(node.running for node in cluster.nodes)        # nothing left behind


async def _nats_connect(url: str, tls: TlsFiles) -> None:
    nc = await nats.connect(servers=[url], tls=tls.context(), connect_timeout=3, allow_reconnect=False,
                            max_reconnect_attempts=0)
    await nc.close()


@needs_nats
def test_clients_need_a_certificate_of_the_casino(tmp_path: Path, shared_cluster: NatsCluster,
                                                  casino: dict[str, Path]) -> None:
    cluster = shared_cluster
    foreign = pki.ensure_development_pki(tmp_path / "foreign", "T1")     # same names, another CA
    no_cert = TlsFiles(casino["ca_cert"])
    other_ca = TlsFiles(casino["ca_cert"], foreign["terminal_cert"], foreign["terminal_key"])
    # MQTT: the genuine terminal connects; without a certificate, or with a foreign one, never.
    clients = [terminal_client(casino, "T1", cluster.mqtt_urls[0], min_backoff=0.05, max_backoff=0.2)]
    for tls in (no_cert, other_ca):
        from egmproto.mqtt import BrokerAddress, MqttClient

        clients.append(MqttClient("T1-intruder", BrokerAddress.parse(cluster.mqtt_urls[0], tls),
                                  min_backoff=0.05, max_backoff=0.2))
    for c in clients:
        c.start()
    try:
        assert clients[0].wait_connected(10)
        for intruder in clients[1:]:
            wait_for(lambda i=intruder: i.stats["connect_failures"] >= 2, what="refused attempts")
            assert intruder.stats["connects"] == 0 and not intruder.connected
    finally:
        for c in clients:
            c.stop()
    # NATS: the host's certificate connects; none, or a foreign one, is refused in the handshake.
    asyncio.run(_nats_connect(cluster.nats_urls[1], host_tls(casino)))
    for tls in (no_cert, other_ca):
        with pytest.raises((ssl.SSLError, OSError, nats.errors.Error)):
            asyncio.run(_nats_connect(cluster.nats_urls[1], tls))


@needs_nats
def test_two_workers_share_a_terminals_reports_exactly_once(fresh_stream: NatsCluster, casino: dict[str, Path],
                                                            workers: Callable[..., JetStreamSource]) -> None:
    cluster = fresh_stream
    a, b, c = cluster.nats_urls
    first, second = Recorder(), Recorder()
    w1 = workers([b, c], first, batch=20)
    w2 = workers([c, b], second, batch=20)
    sent: dict[str, list[bytes]] = {"T1": [], "T-001": []}
    acked: list[bytes] = []
    terminals = {t: terminal_client(casino, t, cluster.mqtt_urls[0]) for t in sent}   # on node A
    for t in terminals.values():
        t.start()
    try:
        assert all(t.wait_connected(10) for t in terminals.values())
        for i in range(300):
            for name, t in terminals.items():
                payload = f"{name}:{i}".encode()
                assert t.publish(up_topic(name), payload, lambda p=payload: acked.append(p))
                sent[name].append(payload)
        wait_for(lambda: len(acked) == 600, what="the PUBACKs")
        wait_for(lambda: len(first.items) + len(second.items) >= 600, what="the workers")
    finally:
        for t in terminals.values():
            t.stop()
    everything = first.items + second.items
    assert sorted(p for _, p in everything) == sorted(sent["T1"] + sent["T-001"])       # no loss, no dup
    assert {topic for topic, _ in everything} == {up_topic("T1"), up_topic("T-001")}
    for name in sent:       # and each terminal's, as each worker saw them, in the order sent
        for rec in (first, second):
            mine = [p for topic, p in rec.items if topic == up_topic(name)]
            assert mine == sorted(mine, key=lambda p: int(p.split(b":")[1]))
    assert first.items and second.items, "both workers had a share"
    # a batch is acknowledged to the stream after its handler returned: the count follows the items
    wait_for(lambda: w1.stats["acked"] + w2.stats["acked"] >= 600, what="the workers' acknowledgements")
    assert w1.stats["acked"] + w2.stats["acked"] == 600


@needs_nats
def test_a_failed_batch_comes_again_and_reports_wait_for_a_worker(
        fresh_stream: NatsCluster, casino: dict[str, Path], workers: Callable[..., JetStreamSource]) -> None:
    cluster = fresh_stream
    w = workers(cluster.nats_urls, Recorder())     # makes the stream and the consumer, then goes
    w.stop()
    publish_numbers(casino, "T2", cluster.mqtt_urls[2], 10)
    calls: list[list[bytes]] = []
    handled = Recorder()

    def flaky(items: list[tuple[str, bytes]]) -> None:
        calls.append([p for _, p in items])
        if len(calls) == 1:
            raise RuntimeError("the database is down")
        handled(items)

    again = workers([cluster.nats_urls[0]], flaky)              # the ten waited in the stream
    wait_for(lambda: len(handled.items) == 10, what="the redelivery")
    assert calls[0] == [b"%d" % i for i in range(10)]
    assert sorted(handled.payloads(), key=int) == calls[0]
    wait_for(lambda: again.stats["acked"] == 10, what="the acknowledgements")
    assert again.stats["failed_batches"] == 1 and again.stats["redelivered"] == 10


WORKER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from egmproto.mqtt import TlsFiles
    from host.jetstream import JetStreamSource
    pki = Path(sys.argv[2])
    def hang(items):
        print("got", len(items), flush=True)
        time.sleep(3600)                          # SIGKILLed before it returns: never acknowledged
    tls = TlsFiles(pki / "ca.cert.pem", pki / "issued/egm-host.cert.pem", pki / "issued/egm-host.key.pem")
    source = JetStreamSource(sys.argv[1], hang, tls=tls, replicas=3, ack_wait=3).start()
    print("ready" if source.wait_ready(30) else "not ready", flush=True)
    time.sleep(3600)
""")


@needs_nats
def test_a_batch_of_a_worker_that_dies_goes_to_another(tmp_path: Path, fresh_stream: NatsCluster, casino: dict[str, Path],
                                                       workers: Callable[..., JetStreamSource]) -> None:
    cluster = fresh_stream
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    errors = (tmp_path / "worker.err").open("w")
    proc = subprocess.Popen([sys.executable, "-c", WORKER, cluster.nats_urls[1], str(casino["dir"])],
                            stdout=subprocess.PIPE, stderr=errors, env=env, text=True)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout or ()], daemon=True).start()

    def said() -> str:
        try:
            return lines.get(timeout=30)
        except queue.Empty:
            return "nothing in 30 s; " + (tmp_path / "worker.err").read_text()[-2000:]

    try:
        assert (line := said()) == "ready\n", line       # the stream exists: reports wait in it
        publish_numbers(casino, "T1", cluster.mqtt_urls[0], 5)
        assert (line := said()).startswith("got"), line
        proc.send_signal(signal.SIGKILL)                          # the worker dies holding them
        proc.wait(10)
        survivor = Recorder()
        workers([cluster.nats_urls[2]], survivor, ack_wait=3)
        wait_for(lambda: len(survivor.items) >= 5, timeout=20, what="the redelivery to the survivor")
        assert sorted(survivor.payloads(), key=int) == [b"%d" % i for i in range(5)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        errors.close()


@needs_nats
@pytest.mark.soak
def test_two_egm_host_serve_processes_share_the_reports(tmp_path: Path, fresh_stream: NatsCluster,
                                                        casino: dict[str, Path]) -> None:
    """``egm host serve --broker NODES --jetstream NODES`` twice (each with a SQLite store of its own
    here: one shared database is PostgreSQL's job): 200 messages (not envelopes: each is refused and
    logged) handled once between the two processes.

    It failed in most runs while the workers consumed as soon as the stream was made: the 200
    messages, PUBACKed on node 1, never reached the stream (a node that does not yet know the new
    stream's leader routes a publish nowhere). Each worker now gets a probe into the stream
    through every node before it consumes (host/jetstream_intake.py): 3 runs of 3 failed before,
    3 of 3 passed after. Still under ``make soak`` (two processes and a cluster: about 6 s)."""
    cluster = fresh_stream
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    states = [tmp_path / f"host{i}" for i in range(2)]
    logs = [(tmp_path / f"host{i}.log").open("w") for i in range(2)]
    hosts = [subprocess.Popen([sys.executable, "-m", "firmware.cli", "--log-level", "INFO", "host", "serve",
                               "--state-dir", str(state), "--pki", str(casino["dir"]),
                               "--jetstream", cluster.nats_url], stdout=subprocess.PIPE, stderr=log, env=env, text=True)
             for state, log in zip(states, logs, strict=True)]
    try:
        for h in hosts:
            assert h.stdout is not None and "reports from JetStream" in h.stdout.readline()
        wait_for(lambda: consumer_ready(cluster, casino), what="a host worker to make the consumer group")
        publish_numbers(casino, "T1", cluster.mqtt_urls[0], 200)

        def refusals() -> int:
            return sum((tmp_path / f"host{i}.log").read_text().count("refused a message") for i in range(2))

        try:
            wait_for(lambda: refusals() >= 200, what="200 refusals logged")
        except AssertionError as exc:
            st = stream_state(cluster, casino, 0)
            raise AssertionError(f"{exc}; stream {st.state}; {refusals()} logged") from None
    finally:
        for h in hosts:
            h.send_signal(signal.SIGTERM)
        said = [h.communicate(timeout=30)[0] for h in hosts]
        for log in logs:
            log.close()
    refused = [int(m.group(1)) if (m := re.search(r"'malformed': (\d+)", out)) else 0 for out in said]
    assert sum(refused) == 200, said                    # each message to one of them, once
    assert all(h.returncode == 0 for h in hosts)
    stored = []
    for state in states:
        with HostStore.open(str(state / "host.db")) as store:
            stored.append(len(store.rejections(last=1000)))
    assert stored == refused
