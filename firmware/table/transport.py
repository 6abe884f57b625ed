"""The table link's transport: TCP with mutual TLS, one :class:`Connection` per station.

Both ends present certificates of the casino PKI (``egm certs``): the controller its ``host``
certificate (``issued/<controller_name>``, its address among its names), each station its
``terminal`` certificate, whose terminal id is the station's id at the table. A certificate not
issued by the table's CA, expired or revoked (the CRL is followed while the controller runs) ends
the handshake. Over TLS every message is an envelope of its own (:mod:`firmware.table.session`).

A :class:`Connection` reads frames on its own thread and hands each message to its handler; writes
go through a queue to a writer thread, so a sender never blocks; it sends a heartbeat when it has
sent nothing for a third of ``link_timeout_s`` and ends when it has heard nothing for
``link_timeout_s``.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509

from egmproto.envelope import Opened
from firmware.table.errors import TableError, TableProtocolError
from firmware.table.protocol import wire_body
from firmware.table.session import Session

log = logging.getLogger("egm.table.link")

#: How long a TLS handshake and a join may take.
HANDSHAKE_S = 10.0


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) -> (host, port); :class:`TableError` otherwise."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise TableError(f"{text!r} is not HOST:PORT")
    return host, int(port)


def client_context(ca: Path, cert: Path, key: Path) -> ssl.SSLContext:
    """A station's TLS context: TLS 1.2 or newer, the controller verified against the table's CA
    (its certificate must name the address connected to), the station's certificate presented."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_verify_locations(cafile=str(ca))
        ctx.load_cert_chain(str(cert), str(key))
    except (OSError, ssl.SSLError) as exc:
        raise TableError(f"TLS: cannot load {ca}, {cert}, {key}: {exc}") from None
    ctx.check_hostname = True
    return ctx


def peer_certificate(sock: ssl.SSLSocket) -> x509.Certificate:
    der = sock.getpeercert(binary_form=True)
    if not der:
        raise TableProtocolError("unknown_sender", "the peer presented no certificate")
    return x509.load_der_x509_certificate(der)


class Connection:
    """One TLS connection carrying sealed frames; see the module's docstring."""

    def __init__(self, sock: ssl.SSLSocket, session: Session, *, name: str, link_timeout_s: float,
                 handler: Callable[[Connection, Opened], None], on_close: Callable[[Connection, str], None]) -> None:
        self.sock = sock
        self.session = session
        self.name = name
        self.link_timeout_s = link_timeout_s
        self._handler = handler
        self._on_close = on_close
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self._closed = threading.Event()
        self._last_sent = time.monotonic()
        self._threads: list[threading.Thread] = []

    # --- sending -------------------------------------------------------------------------------
    def send(self, type_: str, body: dict[str, Any]) -> None:
        """Queue one message (sealed now, in the caller's order); never blocks."""
        if self._closed.is_set():
            return
        try:
            frame = self.session.frame(type_, wire_body(type_, body))
        except TableProtocolError as exc:
            log.error("table link %s: cannot send %s: %s", self.name, type_, exc)
            return
        self._out.put(frame)

    def _writer(self) -> None:
        while True:
            try:
                frame = self._out.get(timeout=self.link_timeout_s / 3)
            except queue.Empty:
                if self._closed.is_set():
                    return
                self.send("heartbeat", {})
                continue
            if frame is None:
                return
            try:
                self.sock.sendall(frame)
            except OSError as exc:
                self.close(f"send failed: {exc}")
                return
            self._last_sent = time.monotonic()

    # --- receiving -----------------------------------------------------------------------------
    def read_one(self) -> Opened:
        """Block for the next message (the join, the welcome: before the threads start)."""
        while True:
            data = self.sock.recv(65536)
            if not data:
                self.session.end()
                raise TableProtocolError("closed", "the peer closed the connection")
            messages = self.session.feed(data)
            if messages:
                if len(messages) > 1:
                    raise TableProtocolError("malformed", "nothing may follow the first message before its answer")
                return messages[0]

    def _reader(self) -> None:
        reason = "closed"
        try:
            self.sock.settimeout(self.link_timeout_s)
            while not self._closed.is_set():
                try:
                    data = self.sock.recv(65536)
                except TimeoutError:
                    reason = f"nothing heard for {self.link_timeout_s} s"
                    break
                if not data:
                    self.session.end()
                    reason = "the peer closed the connection"
                    break
                for message in self.session.feed(data):
                    if message.type == "bye":
                        reason = f"the peer said bye: {message.body['reason']}"
                        raise _Bye
                    self._handler(self, message)
        except _Bye:
            pass
        except TableProtocolError as exc:
            reason = f"refused input: {exc}"
            log.error("table link %s: %s; the connection is dropped", self.name, reason)
            self.send("bye", {"reason": reason})
        except (OSError, ssl.SSLError) as exc:
            reason = f"connection lost: {exc}"
        except TableError as exc:
            reason = f"refused: {exc}"
            log.error("table link %s: %s", self.name, reason)
        except Exception:                    # a bug: its traceback in the log, this connection ends
            reason = "internal error"
            log.exception("table link %s: internal error handling a message", self.name)
        self.close(reason)

    def start(self) -> None:
        for target, what in ((self._reader, "read"), (self._writer, "write")):
            thread = threading.Thread(target=target, name=f"table-{what}-{self.name}", daemon=True)
            self._threads.append(thread)
            thread.start()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def close(self, reason: str) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        self._out.put(None)
        for thread in self._threads:
            started = thread.ident is not None            # the reader may end before the writer starts
            if started and thread is not threading.current_thread() and thread.name.startswith("table-write"):
                thread.join(timeout=1.0)
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        log.info("table link %s closed: %s", self.name, reason)
        self._on_close(self, reason)

    def wait(self, timeout: float | None = None) -> bool:
        return self._closed.wait(timeout)


class _Bye(Exception):
    """The peer said bye."""

