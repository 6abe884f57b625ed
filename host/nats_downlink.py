"""The host's way out on the floor broker cluster: messages to terminals as core NATS messages.

On the cluster (``egm host serve --jetstream``) the terminals still speak MQTT; the NATS server maps
each MQTT topic to a subject (``egm/v1/<terminal>/down`` is ``egm.v1.<terminal>.down``,
:func:`host.jetstream.subject_of`). A message a NATS client publishes on that subject reaches the
terminal's MQTT subscription (at QoS 0, NATS's own delivery) at once.

Why not MQTT QoS 1 from the host: the NATS server stores every QoS 1 message an MQTT client
publishes in its MQTT message stream and answers PUBACK only once the stream has it, one message at a
time per connection; with a JetStream consumer per terminal subscription behind that stream, the
host's single connection published 1,193 acks/s to 1 subscribed terminal but 172/s to 300 (measured,
docs/floor-cluster.md "The host's way out"), and at 1,000 terminals the acknowledgements queued
behind each other for minutes. A terminal's sessions are clean, so QoS 1 kept nothing across a
reconnection anyway: what makes delivery reliable is end to end (the terminal's outbox sends a report
again until its acknowledgement comes; the host sends a command again until the terminal confirms
it, docs/protocols/host-session.md).

:class:`NatsDownlink` has the part of :class:`egmproto.mqtt.MqttClient` the host's server uses
(``start``, ``stop``, ``connected``, ``publish``). It runs its own thread with an asyncio loop and a
nats-py connection that moves between the nodes by itself; :meth:`publish` may be called from any
thread, refuses (``False``) while no node is connected, and keeps the order of its calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Any

import nats

from egmproto.mqtt import TlsFiles, terminal_of
from host.jetstream import parse_urls, subject_of

log = logging.getLogger("egm.host.downlink")

RETRY_S = 0.5
#: a first connection not made in this long is given up, counted, and tried again
CONNECT_WAIT_S = 5.0
#: messages waiting for the loop at most; past it :meth:`NatsDownlink.publish` refuses (a stuck loop
#: must not eat the host's memory; the terminal asks again)
MAX_WAITING = 50_000


class NatsDownlink:
    """Publishes the host's sealed messages to terminals over NATS (see the module's text)."""

    def __init__(self, client_id: str, urls: str | Sequence[str], *, tls: TlsFiles | None = None,
                 **_ignored: Any) -> None:
        self.client_id = client_id
        self.urls = parse_urls(urls)
        self._ssl: ssl.SSLContext | None = None if tls is None else tls.context()
        self.stats: Counter[str] = Counter()
        self._waiting: deque[tuple[str, bytes]] = deque()
        self._lock = threading.Lock()
        self._kicked = False
        self._stopping = threading.Event()
        self._connected = threading.Event()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    # -- the client's face --------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is None:
            self._stopping.clear()
            self._thread = threading.Thread(target=self._thread_main, name=f"egm-downlink-{self.client_id}",
                                            daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Send what is waiting (best effort, a few seconds), close; idempotent."""
        self._stopping.set()
        self._kick()
        thread = self._thread
        if thread is not None:
            thread.join(10)
            if thread.is_alive():
                log.warning("%s: the NATS downlink did not stop in time", self.client_id)
        self._thread = None

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    def publish(self, topic: str, payload: bytes, on_delivered: Callable[[], None] | None = None) -> bool:
        """Queue ``payload`` for ``topic``'s subject; ``False`` (nothing queued) while no node is
        connected or too much is waiting. ``on_delivered`` is not supported (core NATS has no
        delivery receipt): passing one is a programming error."""
        if on_delivered is not None:
            raise TypeError("NatsDownlink.publish has no delivery receipt (on_delivered)")
        if not isinstance(payload, bytes | bytearray | memoryview):
            raise TypeError(f"payload must be bytes, not {type(payload).__name__}")
        if terminal_of(topic) is None:
            raise ValueError(f"not a terminal's topic: {topic!r}")
        if not self._connected.is_set():
            self.stats["refused"] += 1
            return False
        with self._lock:
            if len(self._waiting) >= MAX_WAITING:
                self.stats["refused"] += 1
                return False
            self._waiting.append((subject_of(topic), bytes(payload)))
        self.stats["published"] += 1
        self._kick()
        return True

    def _kick(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        with self._lock:
            if self._kicked:
                return
            self._kicked = True
        with contextlib.suppress(RuntimeError):          # the loop closed meanwhile
            loop.call_soon_threadsafe(wake.set)

    # -- the thread ---------------------------------------------------------------------------------
    def _thread_main(self) -> None:
        try:
            asyncio.run(self._main())
        except Exception:
            log.exception("%s: the NATS downlink stopped on an error", self.client_id)
        finally:
            self._connected.clear()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        nc = await self._connect()
        if nc is None:
            return
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                with self._lock:
                    self._kicked = False
                    batch = list(self._waiting)
                    self._waiting.clear()
                for subject, payload in batch:
                    try:
                        await nc.publish(subject, payload)
                    except Exception as exc:             # closed under us: the terminal asks again
                        self.stats["dropped"] += 1
                        log.debug("%s: publish on %s: %s", self.client_id, subject, exc)
                if self._stopping.is_set():
                    with contextlib.suppress(Exception):
                        await nc.flush(timeout=3)
                    return
        finally:
            self._connected.clear()
            with contextlib.suppress(Exception):
                await nc.close()

    async def _connect(self) -> Any:
        """A connection to one of the nodes (nats-py then moves between them by itself); ``None``
        when stopped first. nats-py's own first connect retries forever, so it is raced against
        :meth:`stop` and given up after :data:`CONNECT_WAIT_S` to be counted and tried again."""
        assert self._wake is not None
        while not self._stopping.is_set():
            attempt = asyncio.ensure_future(nats.connect(
                servers=self.urls, tls=self._ssl, name=self.client_id, connect_timeout=2,
                allow_reconnect=True, max_reconnect_attempts=-1, reconnect_time_wait=RETRY_S,
                error_cb=self._on_error, disconnected_cb=self._on_disconnected,
                reconnected_cb=self._on_reconnected))
            stopped = asyncio.ensure_future(self._wake.wait())
            await asyncio.wait({attempt, stopped}, timeout=CONNECT_WAIT_S, return_when=asyncio.FIRST_COMPLETED)
            stopped.cancel()
            self._wake.clear()
            if attempt.done() and attempt.exception() is None:
                nc = attempt.result()
                self._connected.set()
                self.stats["connects"] += 1
                log.info("%s: sending to terminals through NATS %s", self.client_id,
                         nc.connected_url.netloc if nc.connected_url else "?")
                return nc
            if not attempt.done():
                attempt.cancel()
                with contextlib.suppress(BaseException):
                    await attempt
            self.stats["connect_failures"] += 1
            reason = attempt.exception() if not attempt.cancelled() else "no node answered"
            log.warning("%s: cannot connect to %s: %s", self.client_id, ",".join(self.urls), reason)
        return None

    async def _on_error(self, exc: Exception) -> None:
        log.debug("%s: NATS: %s", self.client_id, exc)

    async def _on_disconnected(self) -> None:
        self._connected.clear()
        if not self._stopping.is_set():
            self.stats["disconnects"] += 1
            log.warning("%s: lost the NATS connection; reconnecting", self.client_id)

    async def _on_reconnected(self) -> None:
        self._connected.set()
        self.stats["reconnects"] += 1
        log.info("%s: reconnected to NATS", self.client_id)
