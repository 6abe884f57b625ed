"""The host's stream made, and proven to take messages in through every node, before any terminal
publishes (docs/floor-cluster.md, "Before the terminals").

A terminal's QoS 1 report is acknowledged (PUBACK) by the node it is connected to as soon as that
node has routed it; whether the stream keeps it depends on that node already knowing where the
stream's leader is. Right after the stream is made, a node may not know yet, and what it PUBACKs
then is dropped (the terminal's outbox sends it again after its ack timeout, so nothing is lost, but
the first reports of a run wait for that). :func:`prepare_stream` makes the stream if missing
(:func:`host.jetstream.ensure_stream`), then publishes a probe through each node with JetStream's
acknowledged publish (the stream answers only once it stored the message) until every node's probe
is stored, and purges the probes (a worker that gets one acknowledges it and passes it on to nobody:
:data:`host.jetstream.PROBE_SUBJECT`). Run it before the terminals start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence

import nats
import nats.errors

from egmproto.mqtt import TlsFiles
from host.jetstream import PROBE_SUBJECT, STREAM, ensure_stream, parse_urls

log = logging.getLogger("egm.host.jetstream")


class StreamNotReady(Exception):
    """A node did not get a message into the stream within the time allowed."""


def prepare_stream(urls: str | Sequence[str], tls: TlsFiles | None, *, replicas: int | None = None,
                   timeout: float = 60.0) -> dict[str, float]:
    """Make the stream (``replicas``: default one per URL, at most 3) and wait until a probe
    published through every node in ``urls`` is stored; the probes are then purged. Returns, per
    node URL, the seconds until its first stored probe. Raises :class:`StreamNotReady`."""
    nodes = parse_urls(urls)
    return asyncio.run(_prepare(nodes, None if tls is None else tls.context(), replicas or min(3, len(nodes)),
                                timeout))


async def _prepare(nodes: list[str], ssl_ctx: object, replicas: int, timeout: float) -> dict[str, float]:
    began = time.monotonic()
    deadline = began + timeout
    taken: dict[str, float] = {}
    first = await nats.connect(servers=nodes, tls=ssl_ctx, connect_timeout=5, allow_reconnect=False)
    try:
        js = first.jetstream(timeout=5)
        while True:
            try:
                await ensure_stream(js, replicas)
                break
            except (nats.errors.Error, TimeoutError) as exc:   # no meta leader yet
                if time.monotonic() > deadline:
                    raise StreamNotReady(f"the stream {STREAM} could not be made: {exc}") from None
                await asyncio.sleep(0.5)
        for url in nodes:
            taken[url] = await _probe(url, ssl_ctx, deadline) - began
        await js.purge_stream(STREAM, subject=PROBE_SUBJECT)
    finally:
        await first.close()
    log.info("the stream %s takes messages in through every node (%s)", STREAM,
             ", ".join(f"{u} {s:.2f} s" for u, s in taken.items()))
    return taken


async def _probe(url: str, ssl_ctx: object, deadline: float) -> float:
    """Publish probes through this one node until the stream stores one; when it did."""
    nc = await nats.connect(servers=[url], tls=ssl_ctx, connect_timeout=5, allow_reconnect=False)
    try:
        js = nc.jetstream(timeout=2)
        while True:
            try:
                await js.publish(PROBE_SUBJECT, b"probe", stream=STREAM)
                return time.monotonic()
            except (nats.errors.Error, TimeoutError) as exc:  # no route to the leader yet
                if time.monotonic() > deadline:
                    raise StreamNotReady(f"{url}: nothing published there reaches the stream {STREAM}: "
                                         f"{type(exc).__name__} {exc}") from None
                log.info("%s: the stream %s does not take messages from there yet: %s", url, STREAM, exc)
                await asyncio.sleep(0.2)
    finally:
        await nc.close()


async def probe_nodes(urls: list[str], ssl_ctx: object, timeout: float) -> dict[str, float | None]:
    """What a worker does after making sure of the stream (:class:`host.jetstream.JetStreamSource`):
    a probe through each node until stored, at most ``timeout`` seconds in all; seconds taken per
    node, None for a node that did not get one in (down, or still electing), which is logged and
    not waited for. The probes stay in the stream; whichever worker meets one acknowledges it."""
    began = time.monotonic()
    deadline = began + timeout
    taken: dict[str, float | None] = {}
    for url in urls:
        try:
            taken[url] = await _probe(url, ssl_ctx, deadline) - began
        except (StreamNotReady, nats.errors.Error, OSError, TimeoutError) as exc:
            log.warning("%s: no probe got into the stream %s from there: %s", url, STREAM, exc)
            taken[url] = None
    return taken

