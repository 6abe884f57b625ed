"""The host link's MQTT transport: topics, broker addresses and a reconnecting QoS 1 client.

Messages are opaque ``bytes`` here (signed and encrypted envelopes, ``envelope.py``); delivery
guarantees beyond one broker round trip belong to the caller's persistent outbox. The wire rules are in
``docs/protocols/host-transport.md``; in short:

* topics ``egm/v1/<terminal>/up`` (terminal to host) and ``egm/v1/<terminal>/down`` (host to
  terminal), everything at QoS 1, nothing retained;
* MQTT 5, falling back to 3.1.1 when the broker refuses 5 (``protocol="auto"``);
* clean sessions, except the host's ``persistent_session=True``, so QoS 1 reports published while the
  host is away wait in the broker for it;
* TLS 1.2 or newer with the casino CA, a client certificate where the broker requires one;
* reconnection forever with exponential backoff and jitter; :meth:`MqttClient.publish` refuses
  (returns ``False``) while the link is down rather than queueing anything.

Threads: :class:`MqttClient` owns a supervisor thread (connects, waits out the backoff) and, while a
connection lasts, paho's network thread. **Every user callback (``on_message``, ``on_connection``,
``on_delivered``) runs on paho's network thread**, one at a time and in the order the events happened.
Given ``loop=`` a :class:`~egmproto.mqtt_loop.SharedLoop`, a client has no thread of its own: its
connection steps, timers and callbacks run on the loop's thread, shared by every client of the
process, with the same guarantees (``mqtt_loop.py``).
Keep callbacks short; they may call :meth:`MqttClient.publish` and :meth:`MqttClient.stop`, but must
not wait for anything that waits for the transport itself. Each connection uses a fresh paho client,
so nothing paho queued on a dead connection is ever re-sent behind the caller's back.
"""

from __future__ import annotations

import logging
import random
import re
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from egmproto.errors import HostLinkError
from egmproto.mqtt_loop import SharedLoop, Timer

log = logging.getLogger("egm.hostlink.mqtt")


class _PahoNoise(logging.Filter):
    """paho's network loop logs ERROR "Client is not connected" once when a connection it was
    looping on is closed (every disconnect, every shutdown). The supervisor reports connections
    itself, at their real level; that line is dropped so an orderly stop logs no error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Client is not connected")


_paho_log = logging.getLogger("egm.hostlink.mqtt.paho")
_paho_log.addFilter(_PahoNoise())

UP = "egm/v1/{terminal}/up"
DOWN = "egm/v1/{terminal}/down"
UP_WILDCARD = "egm/v1/+/up"
QOS = 1
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883}
#: How long the broker keeps a persistent (host) session while its client is away (MQTT 5).
SESSION_EXPIRY_S = 7 * 24 * 3600
#: A connection that stayed up this long resets the backoff to ``min_backoff``.
STABLE_AFTER_S = 10.0
PROTOCOLS = ("auto", "5", "3.1.1")
_TOPIC = re.compile(r"egm/v1/([A-Za-z0-9_.-]{1,32})/(up|down)")
_UNSUPPORTED_PROTOCOL = 132  # CONNACK 0x84 (MQTT 5); paho maps a 3.1.1 return code 1 onto it
_STATS = ("connects", "disconnects", "connect_failures", "published", "delivered", "refused",
          "received", "subscribe_refused", "deaf_connections")


class TransportError(HostLinkError):
    """A transport misconfiguration (bad broker URL, TLS files, options); never "broker down"."""


# --------------------------------------------------------------------------------------------------
# topics


def up_topic(terminal_id: str) -> str:
    """The topic a terminal publishes its reports on."""
    return _checked(UP.format(terminal=terminal_id))


def down_topic(terminal_id: str) -> str:
    """The topic the host sends a terminal its commands on."""
    return _checked(DOWN.format(terminal=terminal_id))


def terminal_of(topic: str) -> str | None:
    """The terminal id of an ``up`` or ``down`` topic; ``None`` if the topic is not one of ours."""
    m = _TOPIC.fullmatch(topic) if isinstance(topic, str) else None
    return m.group(1) if m else None


def _check_filter(topic_filter: str) -> str:
    """A valid MQTT topic filter ('+' a whole level, '#' only as the whole last level)."""
    levels = topic_filter.split("/") if isinstance(topic_filter, str) and topic_filter else [""]
    ok = all(
        ("+" not in level or level == "+") and ("#" not in level or (level == "#" and i == len(levels) - 1))
        for i, level in enumerate(levels)
    )
    if not ok or not topic_filter:
        raise TransportError(f"invalid MQTT topic filter {topic_filter!r}")
    return topic_filter


def _checked(topic: str) -> str:
    if terminal_of(topic) is None:
        raise TransportError(f"invalid terminal id in topic {topic!r}: 1-32 of [A-Za-z0-9_.-]")
    return topic


# --------------------------------------------------------------------------------------------------
# addresses and TLS


@dataclass(frozen=True)
class TlsFiles:
    """The PEM files of a TLS connection to the broker."""

    ca: Path                       #: CA certificate(s) the broker's certificate must chain to
    cert: Path | None = None       #: our client certificate (PEM) ...
    key: Path | None = None        #: ... and its private key
    check_hostname: bool = True    #: the broker's certificate must name the host we connect to

    def context(self) -> ssl.SSLContext:
        """A client-side SSL context: TLS 1.2 or newer, the broker verified against ``ca``."""
        if (self.cert is None) != (self.key is None):
            raise TransportError("TLS: give both the client certificate and its key, or neither")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_verify_locations(cafile=str(self.ca))
            if self.cert is not None and self.key is not None:
                ctx.load_cert_chain(str(self.cert), str(self.key))
        except (OSError, ssl.SSLError) as exc:
            raise TransportError(f"TLS: cannot load {self.ca}, {self.cert}, {self.key}: {exc}") from None
        ctx.check_hostname = self.check_hostname
        return ctx


@dataclass(frozen=True)
class BrokerAddress:
    """Where the broker listens and, for ``mqtts``, how to talk TLS to it."""

    host: str
    port: int
    tls: TlsFiles | None = None

    @classmethod
    def parse(cls, url: str, tls: TlsFiles | None = None) -> BrokerAddress:
        """``mqtt://host[:port]`` (plain, 1883) or ``mqtts://host[:port]`` (TLS, 8883; needs ``tls``)."""
        try:
            parts = urlsplit(url.strip())
            port = parts.port
        except (AttributeError, ValueError) as exc:
            raise TransportError(f"invalid broker URL {url!r}: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise TransportError(f"invalid broker URL {url!r}: the scheme must be mqtt:// or mqtts://")
        if port is not None and not 0 < port < 65536:
            raise TransportError(f"invalid broker URL {url!r}: port {port} out of range")
        if not parts.hostname:
            raise TransportError(f"invalid broker URL {url!r}: no host")
        if parts.username or parts.password or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise TransportError(f"invalid broker URL {url!r}: only scheme://host[:port] is accepted")
        if scheme == "mqtts" and tls is None:
            raise TransportError(f"{url}: mqtts:// needs the TLS files (CA, client certificate and key)")
        if scheme == "mqtt" and tls is not None:
            raise TransportError(f"{url}: mqtt:// is unencrypted; use mqtts:// with TLS files")
        return cls(parts.hostname, port or DEFAULT_PORTS[scheme], tls)

    @classmethod
    def parse_list(cls, urls: str | Sequence[str], tls: TlsFiles | None = None) -> tuple[BrokerAddress, ...]:
        """One broker or several (the nodes of a cluster), in the order they are tried: a list of
        URLs, or one string of URLs separated by commas. A part without a scheme takes the one
        before it: ``mqtts://h1:8883,h2:8883,h3`` is three TLS brokers. Every broker of a list
        uses the same scheme (all ``mqtts`` with ``tls``, or all ``mqtt`` without)."""
        parts = [p.strip() for p in urls.split(",")] if isinstance(urls, str) else [str(p).strip() for p in urls]
        if not parts or not all(parts):
            raise TransportError(f"invalid broker list {urls!r}: give one or more URLs separated by commas")
        out: list[BrokerAddress] = []
        scheme = ""
        for part in parts:
            if "://" in part:
                scheme = part.split("://", 1)[0].lower()
            elif scheme:
                part = f"{scheme}://{part}"
            out.append(cls.parse(part, tls))       # with tls, an mqtt:// part is refused, and the reverse
        return tuple(out)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"


# --------------------------------------------------------------------------------------------------
# backoff


class Backoff:
    """Exponential backoff with "decorrelated jitter": each delay is drawn from
    ``[min_delay, 3 * previous]`` and capped at ``max_delay``, so a floor of terminals that lost the
    broker together does not come back in lockstep."""

    def __init__(self, min_delay: float, max_delay: float, rng: random.Random | None = None) -> None:
        if not 0 < min_delay <= max_delay:
            raise TransportError(f"backoff: need 0 < min ({min_delay}) <= max ({max_delay})")
        self.min_delay = min_delay
        self.max_delay = max_delay
        self._rng = rng or random.Random()
        self._last = 0.0

    def next(self) -> float:
        if self._last <= 0:
            self._last = self.min_delay
        else:
            self._last = min(self.max_delay, self._rng.uniform(self.min_delay, self._last * 3))
        return self._last

    def reset(self) -> None:
        self._last = 0.0


# --------------------------------------------------------------------------------------------------
# the client


class _Connection:
    """One paho client for one connection attempt, and what happened to it."""

    def __init__(self, number: int, client: paho.Client, protocol: str, address: BrokerAddress) -> None:
        self.number = number
        self.client = client
        self.protocol = protocol
        self.address = address
        self.accepted = False          # CONNACK success
        self.ready = False             # subscriptions acknowledged: announced as connected
        self.accepted_at = 0.0
        self.sub_mid: int | None = None
        self.ended = threading.Event()
        self.refused_protocol = False
        self.dialing = False           # its blocking connect is running (shared loop: on a connector)
        self.finished = False          # wound up (shared loop)
        self.timer: Timer | None = None  # no CONNACK in time (shared loop)


class MqttClient:
    """A reconnecting MQTT client that publishes at QoS 1 and hands received messages to a callback.

    ``on_connection(True)`` runs after every (re)connection once the subscriptions are acknowledged,
    ``on_connection(False)`` when an announced connection is lost (not on :meth:`stop`).
    ``on_message(topic, payload)`` runs for every message received. All callbacks run on paho's
    network thread (module docstring). ``persistent_session=True`` (the host) keeps the broker
    session across disconnections; otherwise every connection starts clean.

    ``address`` is one broker or a sequence of them (the nodes of a cluster): the client connects to
    the first and, whenever a connection fails or is lost, goes on to the next one (after the
    backoff delay), round the list. :attr:`address` is the one in use (or tried next).
    """

    def __init__(
        self,
        client_id: str,
        address: BrokerAddress | Sequence[BrokerAddress],
        *,
        subscriptions: Sequence[str] = (),
        on_message: Callable[[str, bytes], None] | None = None,
        on_connection: Callable[[bool], None] | None = None,
        min_backoff: float = 0.5,
        max_backoff: float = 30.0,
        keepalive: int = 30,
        protocol: str = "auto",
        persistent_session: bool = False,
        session_expiry: int = SESSION_EXPIRY_S,
        connect_timeout: float = 5.0,
        loop: SharedLoop | None = None,
    ) -> None:
        if not client_id or not isinstance(client_id, str) or len(client_id.encode("utf-8")) > 64:
            raise TransportError(f"invalid MQTT client id {client_id!r}: 1-64 bytes")
        if protocol not in PROTOCOLS:
            raise TransportError(f"invalid MQTT protocol {protocol!r}: one of {', '.join(PROTOCOLS)}")
        if keepalive < 1:
            raise TransportError(f"invalid keepalive {keepalive}: at least 1 second")
        if persistent_session and session_expiry < 1:
            raise TransportError("a persistent session needs a session expiry of at least 1 second")
        addresses = (address,) if isinstance(address, BrokerAddress) else tuple(address)
        if not addresses or not all(isinstance(a, BrokerAddress) for a in addresses):
            raise TransportError(f"invalid broker address {address!r}: a BrokerAddress or a list of them")
        self.client_id = client_id
        self.addresses = addresses
        self._index = 0
        self.subscriptions = tuple(_check_filter(f) for f in subscriptions)
        self.on_message = on_message
        self.on_connection = on_connection
        self.keepalive = keepalive
        self.protocol = protocol
        self.persistent_session = persistent_session
        self.session_expiry = session_expiry
        self.connect_timeout = connect_timeout
        self._backoff = Backoff(min_backoff, max_backoff)
        self._ssl = {a.tls: a.tls.context() for a in addresses if a.tls is not None}
        self._wire_protocol = "3.1.1" if protocol == "3.1.1" else "5"
        self._lock = threading.Condition()       # guards the fields below; never held across paho calls
        self._conn: _Connection | None = None
        self._pending: dict[tuple[int, int], Callable[[], None] | None] = {}
        self._connected = threading.Event()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._in_callback = threading.local()
        self._numbers = 0
        self.stats: dict[str, int] = dict.fromkeys(_STATS, 0)
        self._loop = loop
        self._running = False                    # shared loop: started and not yet wound up
        self._idle = threading.Event()           # shared loop: not running
        self._idle.set()
        self._retry: Timer | None = None         # shared loop: the next attempt, after the backoff

    # -- public -------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start connecting in the background; a broker that is down is retried forever."""
        with self._lock:
            if self._thread is not None or self._running:
                return
            self._stopping.clear()
            if self._loop is not None:
                self._running = True
                self._idle.clear()
                self._loop.call_soon(self._attempt)
                return
            self._thread = threading.Thread(
                target=self._supervise, name=f"egm-mqtt-{self.client_id}", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        """Disconnect and stop the threads; idempotent. Called from a callback, it only signals."""
        with self._lock:
            thread = self._thread
        self._stopping.set()
        self._connected.clear()
        self._wake.set()  # the supervisor disconnects
        if self._loop is not None:
            self._loop.call_soon(self._tend)
            if not (self._loop.in_loop() or self._idle.wait(self.connect_timeout + 5)):
                log.warning("%s: the MQTT client did not stop in time", self.client_id)
            return
        if thread is None or getattr(self._in_callback, "active", False):
            return
        thread.join(self.connect_timeout + 5)
        if thread.is_alive():
            log.warning("%s: the MQTT supervisor did not stop in time", self.client_id)

    @property
    def address(self) -> BrokerAddress:
        """The broker of the current connection, or the one tried next."""
        return self.addresses[self._index]

    @property
    def connected(self) -> bool:
        """Connected, subscribed, and accepting :meth:`publish` calls."""
        return self._connected.is_set()

    @property
    def wire_protocol(self) -> str:
        """The protocol the next (or current) connection uses: ``"5"`` or ``"3.1.1"``."""
        return self._wire_protocol

    def wait_connected(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for :attr:`connected`; return it."""
        return self._connected.wait(timeout)

    def publish(self, topic: str, payload: bytes, on_delivered: Callable[[], None] | None = None) -> bool:
        """Publish at QoS 1; ``False`` (nothing queued) when not connected.

        ``on_delivered`` runs on paho's network thread when the broker acknowledges (PUBACK) the
        message, never if the connection is lost first or the broker refuses it (MQTT 5 reason code
        of 0x80 or more, e.g. "not authorized"): the caller's outbox keeps the message until then.
        """
        if not isinstance(payload, bytes | bytearray | memoryview):
            raise TypeError(f"payload must be bytes, not {type(payload).__name__}")
        with self._lock:
            conn = self._conn if self._connected.is_set() else None
        if conn is None:
            return False
        info = conn.client.publish(topic, bytes(payload), qos=QOS)  # outside our lock (see on_publish)
        with self._lock:
            if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
                self._lock.notify_all()
                log.debug("%s: publish on %s refused by paho: %s", self.client_id, topic,
                          paho.error_string(info.rc))
                return False
            self._pending[(conn.number, info.mid)] = on_delivered
            self.stats["published"] += 1
            self._lock.notify_all()
        return True

    # -- the supervisor thread ----------------------------------------------------------------------

    def _supervise(self) -> None:
        try:
            self._run()
        finally:
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None
            log.debug("%s: MQTT supervisor stopped", self.client_id)

    def _run(self) -> None:
        while not self._stopping.is_set():
            delay = self._delay_after(self._connect_once())
            if delay is None:
                break
            self._stopping.wait(delay)

    def _delay_after(self, conn: _Connection | None) -> float | None:
        """How long to wait before the next attempt after ``conn`` ended (``None``: stopping)."""
        if self._stopping.is_set():
            return None
        if conn is not None and conn.refused_protocol:
            return 0.0  # retry at once in 3.1.1
        if conn is not None and conn.accepted and time.monotonic() - conn.accepted_at >= STABLE_AFTER_S:
            self._backoff.reset()
        self._index = (self._index + 1) % len(self.addresses)   # a cluster: the next node
        delay = self._backoff.next()
        log.info("%s: reconnecting to %s in %.2f s", self.client_id, self.address.url, delay)
        return delay

    def _connect_once(self) -> _Connection | None:
        """Connect, run paho's loop until the connection ends; ``None`` if it never opened."""
        conn = self._prepare()
        if not self._dial(conn):
            return None
        conn.client.loop_start()
        deadline = time.monotonic() + self.connect_timeout
        while not (conn.ended.is_set() or self._stopping.is_set()):
            if conn.accepted:
                self._wake.wait()
            elif not self._wake.wait(max(0.0, deadline - time.monotonic())) and not conn.accepted:
                self._no_connack(conn)
                break
            self._wake.clear()
        if not conn.ended.is_set():
            conn.client.disconnect()
        conn.client.loop_stop()
        self._release(conn)
        return conn

    def _prepare(self) -> _Connection:
        """A new connection (a fresh paho client), the current one from now on."""
        with self._lock:
            self._numbers += 1
            number = self._numbers
            self._pending.clear()  # what the previous connection had in flight will never be acked
        address = self.address
        conn = _Connection(number, self._new_paho(number, address), self._wire_protocol, address)
        self._wake.clear()
        with self._lock:
            self._conn = conn
        return conn

    def _release(self, conn: _Connection) -> None:
        with self._lock:
            if self._conn is conn:
                self._conn = None

    def _no_connack(self, conn: _Connection) -> None:
        self.stats["connect_failures"] += 1
        log.warning("%s: no CONNACK from %s within %.1f s", self.client_id, conn.address.url,
                    self.connect_timeout)

    def _dial(self, conn: _Connection) -> bool:
        """paho's blocking connect (TCP, TLS handshake, CONNECT queued); False if it failed."""
        address = conn.address
        if self._stopping.is_set():
            self._release(conn)
            return False
        try:
            if conn.protocol == "5":
                props = Properties(PacketTypes.CONNECT)
                if self.persistent_session:
                    props.SessionExpiryInterval = self.session_expiry
                conn.client.connect(address.host, address.port, self.keepalive,
                                    clean_start=not self.persistent_session, properties=props)
            else:
                conn.client.connect(address.host, address.port, self.keepalive)
        except (OSError, ValueError) as exc:  # refused, unreachable, TLS handshake (ssl.SSLError)
            self.stats["connect_failures"] += 1
            log.warning("%s: cannot connect to %s: %s", self.client_id, address.url, exc)
            self._release(conn)
            return False
        return True

    # -- on a shared loop (its thread) --------------------------------------------------------------

    def _attempt(self) -> None:
        """Open a connection: the blocking part on the loop's connectors, then :meth:`_dialled`."""
        assert self._loop is not None
        self._retry = None
        if self._stopping.is_set():
            self._wound_up()
            return
        conn = self._prepare()
        conn.dialing = True
        self._loop.dial(lambda: self._dial(conn), lambda ok: self._dialled(conn, ok))

    def _dialled(self, conn: _Connection, ok: bool) -> None:
        assert self._loop is not None
        conn.dialing = False
        if not ok:
            conn.finished = True
            self._next(None)
            return
        self._loop.watch(conn.client)
        conn.timer = self._loop.call_later(self.connect_timeout, self._connack_due, conn)
        self._tend()

    def _connack_due(self, conn: _Connection) -> None:
        if not (conn.accepted or conn.ended.is_set() or conn.finished):
            self._no_connack(conn)
            self._wind_up(conn)

    def _tend(self) -> None:
        """Wind up the current connection if it ended or the client is stopping; stop when idle."""
        conn = self._conn
        if conn is not None and conn.dialing:
            return                                   # :meth:`_dialled` comes back here
        if conn is not None and (conn.ended.is_set() or self._stopping.is_set()):
            self._wind_up(conn)
        elif conn is None and self._stopping.is_set() and self._running:
            if self._retry is not None:
                self._retry.cancel()
            self._wound_up()

    def _wind_up(self, conn: _Connection) -> None:
        assert self._loop is not None
        if conn.finished:
            return
        conn.finished = True
        if conn.timer is not None:
            conn.timer.cancel()
        if not conn.ended.is_set():
            conn.client.disconnect()
            conn.client.loop_write()                 # the DISCONNECT now; paho then closes
        sock = conn.client.socket()
        if sock is not None:                         # not written at once: closed anyway
            self._loop.unwatch(sock)
            sock.close()
        self._release(conn)
        self._next(conn)

    def _next(self, conn: _Connection | None) -> None:
        assert self._loop is not None
        delay = self._delay_after(conn)
        if delay is None:
            self._wound_up()
        else:
            self._retry = self._loop.call_later(delay, self._attempt)

    def _wound_up(self) -> None:
        with self._lock:
            self._running = False
        self._idle.set()
        log.debug("%s: MQTT client stopped", self.client_id)

    def _new_paho(self, number: int, address: BrokerAddress) -> paho.Client:
        v5 = self._wire_protocol == "5"
        kwargs: dict[str, Any] = {} if v5 else {"clean_session": not self.persistent_session}
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=paho.MQTTv5 if v5 else paho.MQTTv311,
            reconnect_on_failure=False,
            **kwargs,
        )
        client.connect_timeout = self.connect_timeout
        client.enable_logger(_paho_log)
        if address.tls is not None:
            client.tls_set_context(self._ssl[address.tls])
        if self._loop is not None:
            self._loop.adopt(client)
        client.on_connect = self._guard(lambda *a: self._on_connect(number, *a))
        client.on_subscribe = self._guard(lambda *a: self._on_subscribe(number, *a))
        client.on_disconnect = self._guard(lambda *a: self._on_disconnect(number, *a))
        client.on_publish = self._guard(lambda *a: self._on_publish(number, *a))
        client.on_message = self._guard(lambda *a: self._on_message(*a))
        return client

    # -- paho callbacks (paho's network thread) -----------------------------------------------------

    def _guard(self, fn: Callable[..., None]) -> Callable[..., None]:
        """Mark the thread as in a callback, and never let an exception kill paho's loop."""

        def wrapped(*args: Any) -> None:
            self._in_callback.active = True
            try:
                fn(*args)
            except Exception:
                log.exception("%s: error in an MQTT callback", self.client_id)
            finally:
                self._in_callback.active = False

        return wrapped

    def _signal(self) -> None:
        """Something happened to the connection: the supervisor (or the shared loop) looks."""
        self._wake.set()
        if self._loop is not None:
            self._loop.call_soon(self._tend)

    def _current(self, number: int) -> _Connection | None:
        with self._lock:
            conn = self._conn
        return conn if conn is not None and conn.number == number else None

    def _on_connect(self, number: int, client: paho.Client, _u: Any, flags: Any, rc: Any, _p: Any) -> None:
        conn = self._current(number)
        if conn is None:
            return
        if rc.is_failure:
            if rc.value == _UNSUPPORTED_PROTOCOL and self.protocol == "auto" and conn.protocol == "5":
                log.info("%s: %s refuses MQTT 5; falling back to 3.1.1", self.client_id, conn.address.url)
                self._wire_protocol = "3.1.1"
                conn.refused_protocol = True
            else:
                self.stats["connect_failures"] += 1
                log.warning("%s: %s refused the connection: %s", self.client_id, conn.address.url, rc)
            conn.ended.set()  # paho closes the socket and its loop ends; do not wait for more
            self._signal()
            return
        conn.accepted = True
        conn.accepted_at = time.monotonic()
        self._signal()
        self.stats["connects"] += 1
        log.info("%s: connected to %s (MQTT %s%s)", self.client_id, conn.address.url, conn.protocol,
                 ", session present" if flags.session_present else "")
        if self.subscriptions:
            result, mid = client.subscribe([(topic, QOS) for topic in self.subscriptions])
            if result == MQTTErrorCode.MQTT_ERR_SUCCESS:
                conn.sub_mid = mid
            return
        self._announce(conn)

    def _on_subscribe(self, number: int, _c: Any, _u: Any, mid: int, codes: list[Any], _p: Any) -> None:
        conn = self._current(number)
        if conn is None or mid != conn.sub_mid:
            return
        for topic, code in zip(self.subscriptions, codes, strict=False):
            if code.is_failure:
                self.stats["subscribe_refused"] += 1
                log.error("%s: %s refused the subscription to %s: %s", self.client_id,
                          conn.address.url, topic, code)
        if codes and all(code.is_failure for code in codes):
            # nothing would ever come in: a cluster node refuses subscriptions while the leader of
            # its MQTT session streams is being elected (a node just died); connect again (the
            # next node, after the backoff) rather than stay connected deaf
            self.stats["deaf_connections"] += 1
            log.warning("%s: %s refused every subscription; connecting again", self.client_id, conn.address.url)
            conn.client.disconnect()
            return
        self._announce(conn)

    def _announce(self, conn: _Connection) -> None:
        conn.ready = True
        self._connected.set()
        if self.on_connection is not None:
            self.on_connection(True)

    def _on_disconnect(self, number: int, _c: Any, _u: Any, _f: Any, rc: Any, _p: Any) -> None:
        conn = self._current(number)
        if conn is None:
            return
        self._connected.clear()
        if conn.accepted:
            self.stats["disconnects"] += 1
        if self._stopping.is_set():
            log.info("%s: disconnected from %s", self.client_id, conn.address.url)
        elif conn.accepted:
            log.warning("%s: lost the connection to %s: %s", self.client_id, conn.address.url, rc)
        elif not conn.ended.is_set():  # closed before a CONNACK: e.g. our certificate refused
            self.stats["connect_failures"] += 1
            log.warning("%s: %s closed the connection before accepting it (%s): it refuses our "
                        "certificate, or it is going down", self.client_id, conn.address.url, rc)
        conn.ended.set()
        self._signal()
        if conn.ready and not self._stopping.is_set() and self.on_connection is not None:
            self.on_connection(False)

    def _on_publish(self, number: int, _c: Any, _u: Any, mid: int, rc: Any, _p: Any) -> None:
        key = (number, mid)
        deadline = time.monotonic() + 1.0
        with self._lock:
            # The PUBACK can beat publish() to registering the mid: wait for it (publish() holds no
            # paho lock while it registers, so this is microseconds).
            while key not in self._pending and (remaining := deadline - time.monotonic()) > 0:
                self._lock.wait(remaining)
            if key not in self._pending:
                log.debug("%s: acknowledgement of an unknown message %d", self.client_id, mid)
                return
            callback = self._pending.pop(key)
            refused = rc.is_failure
            self.stats["refused" if refused else "delivered"] += 1
        if refused:
            log.error("%s: %s refused a message: %s", self.client_id, self.address.url, rc)
        elif callback is not None:
            callback()

    def _on_message(self, _c: Any, _u: Any, message: paho.MQTTMessage) -> None:
        self.stats["received"] += 1
        if self.on_message is not None:
            self.on_message(message.topic, bytes(message.payload))
