"""The embedded MQTT broker (amqtt) of the single-machine default: host and terminal on one box.

:class:`EmbeddedBroker` runs amqtt's :class:`~amqtt.broker.Broker` on its own asyncio loop in a
daemon thread. amqtt speaks MQTT 3.1.1 only and its
own TLS listener merely *asks* for a client certificate (``CERT_OPTIONAL``). So this module does not
use amqtt's listener: it opens the listening socket itself, with its own SSL context, and hands every
accepted connection to amqtt through amqtt's *external listener* interface
(``Broker.external_connected``). With ``tls=(cert, key, ca)`` the context is TLS 1.2 or newer and
``CERT_REQUIRED``: a client without a certificate chained to the CA (and, with ``crl``, not
revoked) fails the handshake before it sends a byte of MQTT. Then:

* :class:`CertificateAuth` accepts host and terminal certificates only (by extended key usage) and
  uses the certificate's CN as the session's user name (Mosquitto's ``use_identity_as_username``);
* :class:`TopicAcl` applies the same rules as ``deploy/mosquitto/acl``: a terminal publishes only on
  ``egm/v1/<its CN>/up`` and subscribes only to ``egm/v1/<its CN>/down``; the host subscribes to
  ``up`` topics (``egm/v1/+/up``) and publishes on ``down`` topics.

amqtt also hangs on an MQTT 5 CONNECT that carries properties (it parses it as 3.1.1 and waits for
bytes that never come), so a small gate reads each connection's CONNECT first: anything but 3.1.1 gets
the 3.1.1 refusal "unacceptable protocol version" at once, on which :class:`~egmproto.mqtt.
MqttClient` in ``protocol="auto"`` falls back to 3.1.1; a 3.1.1 CONNECT is replayed to amqtt.

amqtt's own QoS 1 delivery loses acknowledged messages under load and across reconnections, so the
broker is :class:`~firmware.hostlink.reliable_broker.ReliableBroker`, which delivers every message it
acknowledged at least once to every matching subscription (``reliable_broker.py``).

Without TLS (development) anyone on the bound address may connect anonymously and use any topic, so
bind it to the loopback address (the default); a non-loopback plain listener is logged as a warning.
Sessions are never flagged anonymous, so a client connecting with ``clean_session=False`` (the host)
keeps its subscriptions and QoS 1 messages while it is away, for :data:`SESSION_EXPIRY_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amqtt.adapters import StreamReaderAdapter, StreamWriterAdapter
from amqtt.contexts import Action
from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin
from amqtt.session import Session

from egmproto import pki, x509parse
from egmproto.errors import HostLinkError
from egmproto.mqtt import UP_WILDCARD, down_topic, terminal_of, up_topic
from egmproto.tls import ContextFollowingCrl, TlsSetupError
from firmware.hostlink.reliable_broker import ReliableBroker

log = logging.getLogger("egm.hostlink.broker")

SESSION_EXPIRY_S = 7 * 24 * 3600
#: Seconds amqtt adds to a client's keepalive before it gives up on the client.
KEEPALIVE_GRACE_S = 15
_IDENTITY = "egm.identity"  # Session.attributes key: (kind, CN) of the client certificate
_LISTENER = "default"
#: Seconds a new connection has to send its CONNECT.
CONNECT_TIMEOUT_S = 10
MAX_CONNECT_BYTES = 64 * 1024
SHUTDOWN_TIMEOUT_S = 5
_MQTT_311 = 4
_CONNACK_UNSUPPORTED = b"\x20\x02\x00\x01"  # CONNACK, return code 1: unacceptable protocol version


class EmbeddedBrokerError(HostLinkError):
    """The embedded broker could not start (port in use, bad TLS files, amqtt failure)."""


# --------------------------------------------------------------------------------------------------
# amqtt plugins


class CertificateAuth(BaseAuthPlugin):
    """With ``require_certificate``: admit host and terminal certificates only; CN = user name."""

    @dataclass
    class Config:
        require_certificate: bool = False

    async def authenticate(self, *, session: Session) -> bool | None:
        if not self.config.require_certificate:
            return True  # development: anonymous, but not flagged so (persistent sessions work)
        identity = _identity(session)
        if identity is None:
            log.warning("refusing MQTT client %s: no host or terminal certificate", session.client_id)
            return False
        session.attributes[_IDENTITY] = identity
        session.username = identity[1]
        return True


class TopicAcl(BaseTopicPlugin):
    """With ``require_certificate``: the topic rules of ``deploy/mosquitto/acl``."""

    @dataclass
    class Config:
        require_certificate: bool = False

    async def topic_filtering(
        self, *, session: Session | None = None, topic: str | None = None, action: Action | None = None
    ) -> bool | None:
        if not self.config.require_certificate or action == Action.RECEIVE:
            return True  # what a client receives is bounded by what it may subscribe to
        identity = session.attributes.get(_IDENTITY) if session is not None else None
        allowed = identity is not None and topic is not None and _allowed(identity, topic, action)
        if not allowed:
            log.warning("MQTT client %s (%s) may not %s %s", session.client_id if session else "?",
                        identity[1] if identity else "?", action, topic)
        return allowed


def _identity(session: Session) -> tuple[str, str] | None:
    """(kind, CN) of the session's client certificate, for host and terminal certificates only."""
    ssl_object = session.ssl_object
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return None
    try:
        cert = x509parse.certificate(der)
    except x509parse.PARSE_ERRORS:
        return None
    kind, name = pki.cert_kind(cert), pki.common_name(cert)
    if name is None or not pki.NAME_RE.fullmatch(name):
        return None
    if kind == "terminal" and pki.terminal_id_of(cert) == name:
        return kind, name
    if kind == "host":
        return kind, name
    return None


def _allowed(identity: tuple[str, str], topic: str, action: Action | str) -> bool:
    kind, name = identity
    if kind == "terminal":
        if action == Action.PUBLISH:
            return topic == up_topic(name)
        return action == Action.SUBSCRIBE and topic == down_topic(name)
    if action == Action.PUBLISH:
        return topic.endswith("/down") and terminal_of(topic) is not None
    return action == Action.SUBSCRIBE and (
        topic == UP_WILDCARD or (topic.endswith("/up") and terminal_of(topic) is not None)
    )


# --------------------------------------------------------------------------------------------------
# the broker


class EmbeddedBroker:
    """amqtt on ``host:port`` in a daemon thread; ``port=0`` picks a free port (see :meth:`start`)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        tls: tuple[Path, Path, Path] | None = None,
        crl: Path | None = None,
        debug: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self.crl = crl
        self.debug = debug
        if tls is None and crl is not None:
            raise EmbeddedBrokerError("a CRL needs TLS")
        try:
            self._tls = ContextFollowingCrl(*tls, crl=crl) if tls is not None else None
            self._ssl = self._tls.context() if self._tls is not None else None
        except TlsSetupError as exc:
            raise EmbeddedBrokerError(str(exc)) from None
        if self._ssl is not None and self._tls is not None:
            self._ssl.sni_callback = self._tls.swap      # each handshake checks against the CRL of now
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._lock = threading.Lock()
        amqtt_log = logging.getLogger("amqtt")
        if debug:
            amqtt_log.setLevel(logging.DEBUG)
        elif amqtt_log.level == logging.NOTSET:
            amqtt_log.setLevel(logging.WARNING)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 10) -> int:
        """Listen and serve; return the port. Raise :class:`EmbeddedBrokerError` if it cannot."""
        with self._lock:
            if self.running:
                return self.port
            if self.tls is None and not _loopback(self.host):
                log.warning("embedded MQTT broker on %s:%s without TLS: anyone who can reach it may "
                            "connect", self.host, self.port)
            try:
                sock = socket.create_server((self.host, self.port), family=_family(self.host))
            except OSError as exc:
                raise EmbeddedBrokerError(
                    f"cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
            self.port = sock.getsockname()[1]
            started = threading.Event()
            failure: list[BaseException] = []
            loop = asyncio.new_event_loop()
            stop = asyncio.Event()
            self._loop, self._stop_event = loop, stop
            self._thread = threading.Thread(
                target=self._run, args=(loop, sock, stop, started, failure),
                name=f"egm-broker-{self.port}", daemon=True,
            )
            self._thread.start()
        if not started.wait(timeout) or failure:
            self.stop()
            why = f"{failure[0]}" if failure else f"not up within {timeout} s"
            raise EmbeddedBrokerError(f"the embedded MQTT broker on {self.url} did not start: {why}")
        log.info("embedded MQTT broker listening on %s%s", self.url,
                 " (client certificates required)" if self.tls else "")
        return self.port

    def stop(self) -> None:
        """Disconnect every client, close the port, end the thread; idempotent."""
        with self._lock:
            thread, loop, event = self._thread, self._loop, self._stop_event
            self._thread = self._loop = self._stop_event = None
        if thread is None or loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop already ended (a failed start)
            loop.call_soon_threadsafe(event.set)  # type: ignore[union-attr]
        thread.join(15)
        if thread.is_alive():
            log.warning("the embedded MQTT broker on %s did not stop in time", self.url)
        else:
            loop.close()
            log.info("embedded MQTT broker on %s stopped", self.url)

    # -- the broker thread --------------------------------------------------------------------------

    def _config(self) -> dict[str, Any]:
        require = {"require_certificate": self.tls is not None}
        return {
            "listeners": {_LISTENER: {"type": "external"}},
            "session_expiry_interval": SESSION_EXPIRY_S,
            "timeout_disconnect_delay": KEEPALIVE_GRACE_S,
            "plugins": {
                f"{__name__}.CertificateAuth": require,
                f"{__name__}.TopicAcl": require,
            },
        }

    def _run(self, loop: asyncio.AbstractEventLoop, sock: socket.socket, stop: asyncio.Event,
             started: threading.Event, failure: list[BaseException]) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve(sock, stop, started))
        except BaseException as exc:  # reported to start(), or logged after it
            failure.append(exc)
            if started.is_set():
                log.exception("the embedded MQTT broker on %s failed", self.url)
            started.set()
        finally:
            sock.close()
            _cancel_all(loop)

    async def _serve(self, sock: socket.socket, stop: asyncio.Event, started: threading.Event) -> None:
        broker = ReliableBroker(self._config())
        await broker.start()
        open_connections: dict[asyncio.Task[object], asyncio.StreamWriter] = {}

        async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            me = asyncio.current_task()
            assert me is not None
            open_connections[me] = writer
            try:
                connect = await asyncio.wait_for(_read_connect(reader), CONNECT_TIMEOUT_S)
                if connect is None:
                    return
                if _protocol_level(connect) != _MQTT_311:
                    writer.write(_CONNACK_UNSUPPORTED)  # what amqtt means to answer, but cannot parse
                    await writer.drain()
                    return
                await broker.external_connected(
                    _ReplayReader(reader, connect), StreamWriterAdapter(writer), _LISTENER)
            except (TimeoutError, asyncio.IncompleteReadError):
                log.debug("embedded MQTT broker: no CONNECT from a client")
            except OSError as exc:  # the client went away while amqtt was still talking to it
                log.debug("embedded MQTT broker: connection ended: %s", exc)
            except Exception:
                log.exception("embedded MQTT broker: error on a client connection")
            finally:
                writer.close()
                open_connections.pop(me, None)

        server = await asyncio.start_server(connected, sock=sock, ssl=self._ssl)
        try:
            started.set()
            await stop.wait()
        finally:
            server.close()
            # Cut every client off first and let amqtt see the connections end: on Python 3.11,
            # cancelling amqtt's reader (what Broker.shutdown does) can be lost inside
            # asyncio.wait_for, and shutdown would then wait for the client to speak.
            for writer in list(open_connections.values()):
                writer.transport.abort()
            if open_connections:
                await asyncio.wait(list(open_connections), timeout=SHUTDOWN_TIMEOUT_S)
            try:
                await asyncio.wait_for(broker.shutdown(), SHUTDOWN_TIMEOUT_S)
            except TimeoutError:
                log.warning("embedded MQTT broker: amqtt did not shut down within %s s",
                            SHUTDOWN_TIMEOUT_S)


# --------------------------------------------------------------------------------------------------
# the protocol gate in front of amqtt


async def _read_connect(reader: asyncio.StreamReader) -> bytes | None:
    """The client's first packet, whole, if it is a CONNECT of a sane size; else ``None``."""
    first = await reader.readexactly(1)
    if first[0] >> 4 != 1:
        return None
    length_bytes = bytearray()
    length, multiplier = 0, 1
    while True:
        byte = (await reader.readexactly(1))[0]
        length_bytes.append(byte)
        length += (byte & 0x7F) * multiplier
        if not byte & 0x80:
            break
        multiplier *= 128
        if len(length_bytes) >= 4:
            return None
    if length > MAX_CONNECT_BYTES:
        return None
    return first + bytes(length_bytes) + await reader.readexactly(length)


def _protocol_level(connect: bytes) -> int | None:
    """The protocol level of a CONNECT (4 = MQTT 3.1.1, 5 = MQTT 5), ``None`` if unreadable."""
    i = 1
    while connect[i] & 0x80:
        i += 1
    header = connect[i + 1:]
    if len(header) < 7 or header[:6] != b"\x00\x04MQTT":
        return None
    return header[6]


class _ReplayReader(StreamReaderAdapter):
    """A stream reader that first hands back the bytes the protocol gate already read."""

    def __init__(self, reader: asyncio.StreamReader, prefix: bytes) -> None:
        super().__init__(reader)
        self._prefix = prefix

    async def read(self, n: int = -1) -> bytes:
        if not self._prefix:
            data: bytes = await super().read(n)
            return data
        if 0 <= n < len(self._prefix):
            data, self._prefix = self._prefix[:n], self._prefix[n:]
            return data
        data, self._prefix = self._prefix, b""
        if n > len(data):
            data += await super().read(n - len(data))
        return data


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=SHUTDOWN_TIMEOUT_S))
    loop.run_until_complete(loop.shutdown_asyncgens())


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
