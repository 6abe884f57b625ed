"""The stream made and proven to take messages in through every node before terminals publish
(host/jetstream_intake.py), on a real 3-node cluster."""

from __future__ import annotations

import asyncio
from pathlib import Path

import nats

from host.jetstream import PROBE_SUBJECT, STREAM, JetStreamSource
from host.jetstream_intake import prepare_stream
from host.local.nats import NatsCluster

from .conftest import host_tls, needs_nats, wait_for

pytestmark = needs_nats


def _messages(cluster: NatsCluster, casino: dict[str, Path]) -> int:
    async def count() -> int:
        nc = await nats.connect(servers=cluster.nats_urls, tls=host_tls(casino).context())
        try:
            return int((await nc.jetstream(timeout=5).stream_info(STREAM)).state.messages)
        finally:
            await nc.close()
    return asyncio.run(count())


def test_every_node_gets_a_probe_into_the_stream_and_the_probes_are_gone(shared_cluster: NatsCluster,
                                                                           casino: dict[str, Path]) -> None:
    taken = prepare_stream(shared_cluster.nats_urls, host_tls(casino))
    assert list(taken) == shared_cluster.nats_urls and all(0 <= s < 60 for s in taken.values())
    assert _messages(shared_cluster, casino) == 0                 # purged: no worker will ever see them
    again = prepare_stream(shared_cluster.nats_url, host_tls(casino))   # the stream exists: probes only
    assert len(again) == 3 and _messages(shared_cluster, casino) == 0


def test_a_worker_acknowledges_a_probe_and_hands_it_to_nobody(shared_cluster: NatsCluster, casino: dict[str, Path]) -> None:
    prepare_stream(shared_cluster.nats_urls, host_tls(casino))
    batches: list[list[tuple[str, bytes]]] = []
    source = JetStreamSource(shared_cluster.nats_url, batches.append, tls=host_tls(casino), name="probe-test").start()
    try:
        assert source.wait_ready(30)

        async def probe() -> None:
            nc = await nats.connect(servers=shared_cluster.nats_urls, tls=host_tls(casino).context())
            try:
                await nc.jetstream(timeout=5).publish(PROBE_SUBJECT, b"probe", stream=STREAM)
            finally:
                await nc.close()
        asyncio.run(probe())
        # its own probes (one per node, made before it consumed) and this one: all acknowledged
        wait_for(lambda: source.stats["probes"] == 4, what="the probes acknowledged")
    finally:
        source.stop()
    assert batches == [] and _messages(shared_cluster, casino) == 0
