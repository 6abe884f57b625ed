"""The controller's side of the table link: accepts the stations (mutual TLS), checks each one's
join, hands its messages to the controller and carries the controller's messages to it; a ticker
thread runs the controller's clock (docs/protocols/table.md).

A station is its certificate: its id is the terminal id the certificate carries, checked against the
table's CA and current CRL at the handshake and again for every envelope; a join from anything else
is refused, and hostile input drops that connection only.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from egmproto.envelope import Opened
from egmproto.errors import EnvelopeError
from egmproto.identity import HostIdentity
from egmproto.messages import check_body
from egmproto.pki import PkiError, terminal_id_of
from egmproto.table_messages import TABLE_SCHEMA, TO_CONTROLLER
from egmproto.tls import ContextFollowingCrl
from firmware.ledger.errors import CriticalMemoryError
from firmware.table.controller import TableController
from firmware.table.errors import TableError, TableProtocolError
from firmware.table.identity import controller_identity, tls_files
from firmware.table.session import SeqBook, SeqCounter, Session, kem_public_from_text
from firmware.table.transport import HANDSHAKE_S, Connection, parse_address, peer_certificate

log = logging.getLogger("egm.table.server")

#: How often the controller's clock runs (the window, the decisions' time-out, the next round).
TICK_S = 0.02


class TableServer:
    """Serves ``controller`` on ``listen`` (``HOST:PORT``; port 0: any free port, see :attr:`address`)."""

    def __init__(self, controller: TableController, pki_dir: str | Path, listen: str) -> None:
        self.controller = controller
        self.pki = Path(pki_dir)
        settings = controller.settings
        self.identity: HostIdentity = controller_identity(self.pki, settings.controller_name)
        cert, key, ca = tls_files(self.pki, settings.controller_name)
        crl = self.pki / "crl.pem"
        self._tls = ContextFollowingCrl(cert, key, ca, crl=crl if crl.exists() else None)
        self._tls.context()
        self._listen = parse_address(listen)
        self._seqs = SeqBook()
        self._counter = SeqCounter()
        self._conns: dict[str, Connection] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self.address: tuple[str, int] = self._listen
        #: Why the table stopped by itself (its critical memory failed), or None.
        self.halted: str | None = None
        #: Called once the table has halted (``egm table serve`` stops then).
        self.on_halt: Callable[[], None] = lambda: None
        controller.out = self

    # --- the controller's Outbound -------------------------------------------------------------
    def send(self, station: str, type_: str, body: dict[str, Any]) -> None:
        with self._lock:
            conn = self._conns.get(station)
        if conn is not None:
            conn.send(type_, body)

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> tuple[str, int]:
        host, port = self._listen
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = self._sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            sock.close()
            raise TableError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        sock.listen(16)
        sock.settimeout(0.2)
        self.address = sock.getsockname()[:2]
        for target, name in ((self._accept_loop, "table-accept"), (self._tick_loop, "table-tick")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            self._threads.append(thread)
            thread.start()
        log.info("table %s serving %s on %s:%d", self.controller.settings.table_id, self.controller.game.id,
                 *self.address)
        return self.address

    def stop(self, *, bye: bool = True) -> None:
        """Stop serving; ``bye=False``: the connections just end (what a power cut looks like)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
        if self._sock is not None:
            self._sock.close()
        with self._lock:
            conns = list(self._conns.values())
        for conn in conns:
            if bye:
                conn.send("bye", {"reason": "the table controller stops"})
            conn.close("the controller stops")

    def _tick_loop(self) -> None:
        while not self._stop.wait(TICK_S):
            try:
                self.controller.tick()
            except TableError as exc:
                log.error("table: %s", exc)
            except CriticalMemoryError as exc:
                log.critical("table: critical memory failed, the table stops: %s", exc)
                self.halted = str(exc)
                self.on_halt()
                return

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                raw, peer = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw, peer), name=f"table-join-{peer[1]}", daemon=True).start()

    # --- one station ---------------------------------------------------------------------------
    def _serve(self, raw: socket.socket, peer: Any) -> None:
        raw.settimeout(HANDSHAKE_S)
        try:
            sock = self._tls.context().wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError) as exc:
            log.warning("table: TLS handshake with %s refused: %s", peer, exc)
            raw.close()
            return
        try:
            conn = self._join(sock)
        except (TableProtocolError, OSError, ssl.SSLError) as exc:
            log.warning("table: join from %s refused: %s", peer, exc)
            sock.close()
            return
        if conn is not None:
            conn.start()

    def _station_of(self, sock: ssl.SSLSocket) -> str:
        cert = peer_certificate(sock)
        try:
            self.identity.trust.check(cert, "terminal")
        except PkiError as exc:
            raise TableProtocolError("unknown_sender", str(exc)) from None
        station = terminal_id_of(cert)
        if station is None:
            raise TableProtocolError("unknown_sender", "the certificate carries no terminal id")
        return station

    def _join(self, sock: ssl.SSLSocket) -> Connection | None:
        station = self._station_of(sock)
        settings = self.controller.settings
        session = Session(own_id=settings.controller_name, signing_key=self.identity.signing_key,
                          own_kem=self.identity.kem_key, peer_id=station, verify_key_for=self.identity.terminal_key,
                          incoming=TO_CONTROLLER, seqs=self._seqs, counter=self._counter)
        conn = Connection(sock, session, name=station, link_timeout_s=settings.link_timeout_s,
                          handler=self._handle, on_close=self._closed)
        join = conn.read_one()
        if join.type != "join":
            raise TableProtocolError("bad_body", f"the first message must be a join, not {join.type}")
        session.peer_kem = kem_public_from_text(join.body["kem_public"])
        if join.body["table_id"] != settings.table_id:
            self._refuse(conn, f"this is table {settings.table_id}, not {join.body['table_id']}")
            return None
        with self._lock:                      # stop() closes what is registered once it is set
            stopping = self._stop.is_set()
            old = None if stopping else self._conns.get(station)
            if not stopping:
                self._conns[station] = conn
        if stopping:                          # a join that was under way when the controller stopped
            conn.close("the controller stops")
            return None
        if old is not None:
            old.close("the station connected again")
        try:
            self.controller.join(station, join.body["seat"], on_seated=lambda welcome: conn.send("welcome", welcome),
                                 open_bets=[b["bet_id"] for b in join.body["open_bets"] if isinstance(b, dict)
                                            and isinstance(b.get("bet_id"), str)])
        except TableError as exc:
            with self._lock:
                if self._conns.get(station) is conn:
                    del self._conns[station]
            self._refuse(conn, str(exc))
            return None
        for bet in join.body["open_bets"]:
            self._bet(conn, bet)
        return conn

    def _refuse(self, conn: Connection, reason: str) -> None:
        log.warning("table: %s refused: %s", conn.name, reason)
        conn.start()
        conn.send("bye", {"reason": reason})
        conn.close(reason)

    def _bet(self, conn: Connection, body: Any) -> None:
        try:
            check_body("bet", body, schema=TABLE_SCHEMA)
        except EnvelopeError as exc:
            raise TableProtocolError("bad_body", f"join.open_bets: {exc}") from None
        self.controller.bet(conn.name, body)

    def _handle(self, conn: Connection, message: Opened) -> None:
        c = self.controller
        if message.type == "bet":
            c.bet(conn.name, message.body)
        elif message.type == "decision":
            c.decision(conn.name, message.body)
        elif message.type == "result_ack":
            c.result_ack(conn.name, message.body)
        elif message.type == "join":
            raise TableProtocolError("bad_body", "joined already")

    def _closed(self, conn: Connection, reason: str) -> None:
        with self._lock:
            current = self._conns.get(conn.name) is conn
            if current:
                del self._conns[conn.name]
        if current:
            self.controller.leave(conn.name)
