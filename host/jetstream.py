"""The host's consumer group on the floor broker cluster (NATS JetStream): terminals' reports in
batches, acknowledged to the stream only after the host has handled them.

Terminals publish over MQTT (``egm/v1/<terminal>/up``); the NATS server turns each MQTT topic into a
NATS subject (``/`` becomes ``.``: ``egm.v1.<terminal>.up``), and the stream :data:`STREAM` keeps
every message on :data:`SUBJECTS`, replicated on ``replicas`` nodes, on disk, until a host worker
has acknowledged it (work-queue retention). Every worker (``egm host serve --jetstream``, one or
many processes) binds the one durable pull consumer :data:`CONSUMER`: the consumer group. JetStream
hands each message to one worker at a time and gives it to another if it is not acknowledged within
``ack_wait`` (the worker died, or is stuck).

:class:`JetStreamSource` runs on its own thread with its own asyncio loop (the host is threaded). It
fetches up to ``batch`` messages (or what came within ``max_wait`` seconds), calls
``on_batch([(topic, payload), ...])`` in the MQTT topic form (so ``egmproto.mqtt.terminal_of``
works), and only when that returns acknowledges every message of the batch; if it raises, they are
negatively acknowledged and come again after :data:`NAK_DELAY_S`. While the callback runs longer
than a third of ``ack_wait``, the messages are marked in progress so they are not handed to another
worker. The wire rules are in docs/protocols/host-transport.md, "The floor broker cluster".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import nats
import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import api

from egmproto.mqtt import TlsFiles

log = logging.getLogger("egm.host.jetstream")

STREAM = "EGM_UP"
SUBJECTS = "egm.v1.*.up"
CONSUMER = "egm-host"
#: the subject of the intake probes (host/jetstream_intake.py): in the stream, no terminal's, never
#: handed to the host's store
PROBE_SUBJECT = "egm.v1._intake-probe.up"
PROBE_TIMEOUT_S = 10.0
BATCH = 500
MAX_WAIT_S = 0.25
ACK_WAIT_S = 30.0
MAX_ACK_PENDING = 20_000
NAK_DELAY_S = 1.0
#: Messages waiting longer than this for a worker are dropped by the stream; the terminal still
#: holds them in its outbox (nothing is acknowledged to it before the host stored it).
MAX_AGE_S = 7 * 24 * 3600
RETRY_S = 0.5

Batch = list[tuple[str, bytes]]


class _EofNoise(logging.Filter):
    """asyncio warns "returning true from eof_received() has no effect when using ssl" whenever a
    TLS connection of nats-py closes (every node loss, every stop); that line says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "eof_received()" not in str(record.msg)


logging.getLogger("asyncio").addFilter(_EofNoise())


# --------------------------------------------------------------------------------------------------
# topics and subjects


def subject_of(topic: str) -> str:
    """The NATS subject of an MQTT topic, as the NATS server maps it: ``/`` separates tokens, and a
    ``.`` in a level is ``//`` (servers from 2.10; 2.9 refuses MQTT topics with a ``.``)."""
    return ".".join(level.replace(".", "//") for level in topic.split("/"))


def topic_of(subject: str) -> str:
    """The MQTT topic of a NATS subject: the exact reverse of :func:`subject_of`."""
    return "/".join(token.replace("//", ".") for token in subject.split("."))


def _ssl_context(tls: TlsFiles | None) -> ssl.SSLContext | None:
    return None if tls is None else tls.context()


def parse_urls(urls: str | Sequence[str]) -> list[str]:
    """``tls://h1:4222,tls://h2:4222`` or a list; each needs a scheme (``tls://`` or ``nats://``)."""
    parts = [p.strip() for p in urls.split(",")] if isinstance(urls, str) else [str(p).strip() for p in urls]
    if not parts or not all(p.startswith(("tls://", "nats://")) and len(p) > len("nats://") for p in parts):
        raise ValueError(f"invalid NATS server list {urls!r}: tls://HOST:PORT[,tls://HOST:PORT...]")
    return parts


# --------------------------------------------------------------------------------------------------
# the stream and the consumer


def stream_config(replicas: int) -> api.StreamConfig:
    return api.StreamConfig(name=STREAM, subjects=[SUBJECTS], retention=api.RetentionPolicy.WORK_QUEUE,
                            storage=api.StorageType.FILE, num_replicas=replicas, max_age=MAX_AGE_S,
                            discard=api.DiscardPolicy.OLD, duplicate_window=120.0)


def consumer_config(ack_wait: float) -> api.ConsumerConfig:
    return api.ConsumerConfig(durable_name=CONSUMER, ack_policy=api.AckPolicy.EXPLICIT, ack_wait=ack_wait,
                              max_ack_pending=MAX_ACK_PENDING, max_deliver=-1,
                              deliver_policy=api.DeliverPolicy.ALL, filter_subject=SUBJECTS)


async def ensure_stream(js: Any, replicas: int) -> None:
    """The stream, created if missing. Several workers may race: a create that finds it made by
    another with the same configuration succeeds; with another configuration, the existing one is
    kept (logged). Returns once the stream has a leader."""
    try:
        await js.stream_info(STREAM)
        return
    except nats.js.errors.NotFoundError:
        pass
    try:
        await js.add_stream(stream_config(replicas))
        log.info("created the stream %s (%s, %d replicas)", STREAM, SUBJECTS, replicas)
    except nats.js.errors.BadRequestError as exc:
        info = await js.stream_info(STREAM)          # made meanwhile by another worker
        log.warning("the stream %s exists with another configuration (%s); using it: %s",
                    STREAM, info.config.num_replicas, exc.description)
    for _ in range(50):                                  # its leader elected before the consumer
        info = await js.stream_info(STREAM)
        if info.cluster is None or info.cluster.leader:
            return
        await asyncio.sleep(0.1)


# --------------------------------------------------------------------------------------------------
# the worker


class JetStreamSource:
    """One worker of the host's consumer group. :meth:`start` returns at once; the thread connects
    (again and again while no node answers), makes the stream and the consumer if missing, and
    feeds ``on_batch`` until :meth:`stop`."""

    def __init__(self, urls: str | Sequence[str], on_batch: Callable[[Batch], object], *,
                 tls: TlsFiles | None = None, name: str = "egm-host", replicas: int | None = None,
                 batch: int = BATCH, max_wait: float = MAX_WAIT_S, ack_wait: float = ACK_WAIT_S) -> None:
        self.urls = parse_urls(urls)
        if not 1 <= batch <= 10_000 or max_wait <= 0 or ack_wait < 1:
            raise ValueError(f"JetStream: batch {batch} (1-10000), max_wait {max_wait} (> 0), "
                             f"ack_wait {ack_wait} (>= 1 s)")
        self.on_batch = on_batch
        self.name = name
        self.replicas = replicas or min(3, len(self.urls))
        self.batch = batch
        self.max_wait = max_wait
        self.ack_wait = ack_wait
        self._ssl = _ssl_context(tls)
        self.stats: Counter[str] = Counter()
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # -- public -------------------------------------------------------------------------------------
    def start(self) -> JetStreamSource:
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._thread_main, name=f"egm-jetstream-{self.name}",
                                            daemon=True)
            self._thread.start()
        return self

    def wait_ready(self, timeout: float) -> bool:
        """Connected, with the stream and the consumer in place."""
        return self._ready.wait(timeout)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def stop(self, timeout: float = 15.0) -> None:
        """Finish the batch in hand (handled and acknowledged), then close; idempotent."""
        self._stopping.set()
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):      # the loop ended meanwhile
                loop.call_soon_threadsafe(wake.set)
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("%s: the JetStream worker did not stop in time", self.name)
        self._thread = None

    # -- the thread ---------------------------------------------------------------------------------
    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception:
            log.exception("%s: the JetStream worker stopped on an error", self.name)
        finally:
            self._ready.clear()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        while not self._stopping.is_set():
            nc = await self._connect()
            if nc is None:
                return
            try:
                await self._consume(nc)
            finally:
                self._ready.clear()
                try:
                    await nc.close()
                except Exception as exc:                 # closing a dead connection
                    log.debug("%s: close: %s", self.name, exc)

    async def _sleep(self, seconds: float) -> None:
        assert self._wake is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _connect(self) -> Any:
        """A connection to one of the nodes (nats-py then moves between them by itself); ``None``
        when stopped first."""
        while not self._stopping.is_set():
            try:
                return await nats.connect(
                    servers=self.urls, tls=self._ssl, name=self.name, connect_timeout=2,
                    allow_reconnect=True, max_reconnect_attempts=-1, reconnect_time_wait=RETRY_S,
                    error_cb=self._on_error, disconnected_cb=self._on_disconnected,
                    reconnected_cb=self._on_reconnected)
            except Exception as exc:                     # no node answers (yet)
                self.stats["connect_failures"] += 1
                log.warning("%s: cannot connect to %s: %s", self.name, ",".join(self.urls), exc)
                await self._sleep(RETRY_S * 2)
        return None

    async def _on_error(self, exc: Exception) -> None:
        log.debug("%s: NATS: %s", self.name, exc)

    async def _on_disconnected(self) -> None:
        if self._stopping.is_set():
            return
        self.stats["disconnects"] += 1
        log.warning("%s: lost the NATS connection; reconnecting", self.name)

    async def _on_reconnected(self) -> None:
        self.stats["reconnects"] += 1
        log.info("%s: reconnected to NATS", self.name)

    async def _consume(self, nc: Any) -> None:
        js = nc.jetstream(timeout=5)
        sub = None
        while sub is None and not self._stopping.is_set():
            try:
                await ensure_stream(js, self.replicas)
                await self._probe_intake()
                sub = await js.pull_subscribe(SUBJECTS, durable=CONSUMER, stream=STREAM,
                                              config=consumer_config(self.ack_wait))
            except (nats.errors.Error, TimeoutError) as exc:   # no meta leader yet, a node going
                log.warning("%s: stream %s not ready: %s", self.name, STREAM, exc)
                await self._sleep(RETRY_S)
        if sub is None:
            return
        self._ready.set()
        log.info("%s: consuming %s from the stream %s as %s", self.name, SUBJECTS, STREAM, CONSUMER)
        while not self._stopping.is_set():
            try:
                # a fetch is over in max_wait; one that is not is given up and made again
                msgs = await asyncio.wait_for(sub.fetch(self.batch, timeout=self.max_wait), self.max_wait + 5)
            except nats.errors.TimeoutError:
                continue                                  # nothing waiting
            except nats.errors.ConnectionClosedError:
                return
            except (nats.errors.Error, TimeoutError) as exc:  # a node lost mid-fetch: nats-py reconnects
                self.stats["fetch_errors"] += 1
                log.info("%s: fetch: %s %s", self.name, type(exc).__name__, exc)
                await self._sleep(RETRY_S)
                continue
            if msgs:                                      # nats-py may end a fetch with none
                await self._deliver(nc, msgs)

    async def _probe_intake(self) -> None:
        """Before consuming (and so before anyone waiting for the consumer group publishes): the
        stream takes messages in through every node. Right after the stream is made, a node may
        PUBACK a terminal's publish without the stream keeping it (docs/floor-cluster.md, "Before
        the terminals"); best effort, at most :data:`PROBE_TIMEOUT_S`."""
        from host.jetstream_intake import probe_nodes

        taken = await probe_nodes(self.urls, self._ssl, PROBE_TIMEOUT_S)
        log.info("%s: the stream %s takes messages in through %d of %d nodes", self.name, STREAM,
                 sum(1 for t in taken.values() if t is not None), len(taken))

    async def _deliver(self, nc: Any, msgs: list[Msg]) -> None:
        probes = [m for m in msgs if m.subject == PROBE_SUBJECT]
        if probes:                                        # host/jetstream_intake.py's: nobody's report
            for m in probes:
                await _quietly(m.ack())
            self.stats["probes"] += len(probes)
            msgs = [m for m in msgs if m.subject != PROBE_SUBJECT]
            if not msgs:
                return
        items = [(topic_of(m.subject), bytes(m.data)) for m in msgs]
        self.stats["batches"] += 1
        self.stats["received"] += len(items)
        self.stats["redelivered"] += sum(1 for m in msgs if _delivered(m) > 1)
        work = asyncio.get_running_loop().run_in_executor(None, self.on_batch, items)
        try:
            while True:
                try:
                    await asyncio.wait_for(asyncio.shield(work), self.ack_wait / 3)
                    break
                except TimeoutError:                     # still working: keep the messages ours
                    for m in msgs:
                        await m.in_progress()
        except Exception as exc:
            self.stats["failed_batches"] += 1
            log.error("%s: a batch of %d messages failed (redelivered in %.0f s): %s", self.name, len(msgs),
                      NAK_DELAY_S, exc)
            for m in msgs:
                await _quietly(m.nak(delay=NAK_DELAY_S))
            return
        for m in msgs:
            await _quietly(m.ack())
        await _quietly(nc.flush(timeout=5))
        self.stats["acked"] += len(msgs)


def _delivered(msg: Msg) -> int:
    try:
        return int(msg.metadata.num_delivered or 1)
    except Exception:
        return 1


async def _quietly(aw: Any) -> None:
    """An acknowledgement that cannot go (the connection is down) is not an error: the message
    comes again after ``ack_wait`` and the host's store knows it already."""
    try:
        await aw
    except Exception as exc:
        log.info("acknowledgement not sent: %s", exc)
