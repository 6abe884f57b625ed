"""The station's link to the table controller: implements ``TablePort`` for the terminal's table
rounds and drives their ``TableEvents`` (firmware/cabinet/table_port.py, docs/protocols/table.md).

It connects (mutual TLS), joins with every open bet (``TableEvents.open_bets``) on every
(re)connection, hands the controller's messages to the rounds, acknowledges a result only after the
rounds committed it, reconnects with a growing back-off, tells the rounds when the link goes up or
down, and measures each round's latency from the betting window's close (the controller's
monotonic stamp in the snapshot) to the first card received here: both on one machine, the
``CLOCK_MONOTONIC`` stamps compare (:attr:`TableClient.latencies`, also sent in the ``result_ack``).
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import x25519

from egmproto.envelope import Opened
from egmproto.pki import common_name
from egmproto.table_messages import TABLE_SCHEMA, TO_STATION
from firmware.cabinet.table_port import TableEvents, TablePort
from firmware.table.errors import TableError, TableProtocolError
from firmware.table.identity import station_identity, tls_files
from firmware.table.protocol import body_from_wire
from firmware.table.session import SeqBook, SeqCounter, Session, kem_public_text
from firmware.table.transport import (
    HANDSHAKE_S,
    Connection,
    client_context,
    parse_address,
    peer_certificate,
)

log = logging.getLogger("egm.table.client")

BET_FIELDS = tuple(TABLE_SCHEMA[3]["bet"].required)
DECISION_FIELDS = tuple(TABLE_SCHEMA[3]["decision"].required)


class TableClient(TablePort):
    """One station's link; :meth:`start` it, :meth:`stop` it. See the module's docstring."""

    def __init__(self, events: TableEvents, *, station_id: str, pki_dir: str | Path, controller: str,
                 controller_name: str = "egm-table", table_id: str = "TABLE-1", seat: int = 0,
                 link_timeout_s: float = 5.0, backoff_s: tuple[float, float] = (0.1, 5.0)) -> None:
        self.events = events
        self.station_id = station_id
        self.pki = Path(pki_dir)
        self.address = parse_address(controller)
        self.controller_name = controller_name
        self.table_id = table_id
        self.seat_wanted = seat
        self.link_timeout_s = link_timeout_s
        self.backoff_s = backoff_s
        self.identity = station_identity(self.pki, station_id, controller_name)
        cert, key, ca = tls_files(self.pki, station_id)
        self._tls = client_context(ca, cert, key)
        self._seqs = SeqBook()
        self._counter = SeqCounter()
        self._conn: Connection | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: The seat the controller gave this station (None before the first welcome).
        self.seat: int | None = None
        #: Betting close -> first card received, in seconds, one per round seen from its close.
        self.latencies: list[float] = []
        self._closed_ns: dict[str, int] = {}
        self._latency_of: dict[str, float] = {}
        #: How many connections were made (a test's reconnection count).
        self.connections = 0

    # --- TablePort -----------------------------------------------------------------------------
    def send_bet(self, bet: dict[str, Any]) -> None:
        self._send("bet", {k: bet[k] for k in BET_FIELDS})

    def send_decision(self, decision: dict[str, Any]) -> None:
        self._send("decision", {k: decision[k] for k in DECISION_FIELDS})

    def connected(self) -> bool:
        conn = self._conn
        return conn is not None and not conn.closed

    def _send(self, type_: str, body: dict[str, Any]) -> None:
        conn = self._conn
        if conn is None or conn.closed:
            log.info("table link down: %s kept for the next connection", type_)
            return
        conn.send(type_, body)

    # --- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"table-client-{self.station_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        conn = self._conn
        if conn is not None:
            conn.send("bye", {"reason": "the station stops"})
            conn.close("the station stops")
        if self._thread is not None:
            self._thread.join(timeout=3.0)

    def _run(self) -> None:
        delay = self.backoff_s[0]
        down_told = False
        while not self._stop.is_set():
            try:
                conn = self._connect()
            except (OSError, ssl.SSLError, TableError) as exc:
                if not down_told:
                    self.events.link_state(False, f"cannot reach the table: {exc}")
                    down_told = True
                log.info("table link: %s; again in %.1f s", exc, delay)
                self._stop.wait(delay)
                delay = min(delay * 2, self.backoff_s[1])
                continue
            delay = self.backoff_s[0]
            self.connections += 1
            self._conn = conn
            self.events.link_state(True, f"seat {self.seat} at {self.table_id}")
            down_told = False
            conn.start()
            while not conn.wait(0.2):
                if self._stop.is_set():
                    return
            self._conn = None
            if not self._stop.is_set():
                self.events.link_state(False, "the link to the table was lost")
                down_told = True
                self._stop.wait(delay)

    def _connect(self) -> Connection:
        host, port = self.address
        raw = socket.create_connection((host, port), timeout=HANDSHAKE_S)
        try:
            sock = self._tls.wrap_socket(raw, server_hostname=host)
        except (OSError, ssl.SSLError):
            raw.close()
            raise
        try:
            cert = peer_certificate(sock)
            if common_name(cert) != self.controller_name:
                raise TableError(f"{host}:{port} is {common_name(cert)}, not the table controller "
                                 f"{self.controller_name}")
            kem = x25519.X25519PrivateKey.generate()
            session = Session(own_id=self.station_id, signing_key=self.identity.signing_key, own_kem=kem,
                              peer_id=self.controller_name, verify_key_for=self._controller_key,
                              incoming=TO_STATION, seqs=self._seqs, counter=self._counter,
                              peer_kem=self.identity.host_kem_key)
            conn = Connection(sock, session, name=self.controller_name, link_timeout_s=self.link_timeout_s,
                              handler=self._handle, on_close=lambda c, reason: None)
            sock.sendall(session.frame("join", {"table_id": self.table_id, "kem_public": kem_public_text(kem),
                                                "seat": self.seat_wanted,
                                                "open_bets": [{k: b[k] for k in BET_FIELDS}
                                                              for b in self.events.open_bets()]}))
            first = conn.read_one()
        except BaseException:
            sock.close()
            raise
        if first.type == "bye":
            sock.close()
            raise TableError(f"the table refused the join: {first.body['reason']}")
        if first.type != "welcome":
            sock.close()
            raise TableProtocolError("bad_body", f"the answer to a join is a welcome, not {first.type}")
        self.seat = first.body["seat"]
        log.info("table link: joined %s at seat %s", self.table_id, self.seat)
        return conn

    def _controller_key(self, sender: str) -> Any:
        return self.identity.host_verify_key if sender == self.controller_name else None

    # --- the controller's messages -------------------------------------------------------------
    def _handle(self, conn: Connection, message: Opened) -> None:
        body = body_from_wire(message.type, message.body)
        if message.type == "snapshot":
            body["own_seat"] = self.seat
            body["link"] = "up"
            self._note_cards(body.get("round_id"), body.get("betting_closed_ns"), _has_cards(body))
            self.events.table_snapshot(body)
        elif message.type == "bet_answer":
            self.events.bet_answered(body)
        elif message.type == "decision_request":
            self._note_cards(body["round_id"], None, True)
            self.events.decision_requested(body)
        elif message.type == "result":
            self.events.round_result(body)          # returns once committed
            ack: dict[str, Any] = {"bet_id": body["bet_id"]}
            latency = self._latency_of.get(body["round_id"])
            if latency is not None:
                ack["latency_us"] = round(latency * 1e6)
            conn.send("result_ack", ack)

    def _note_cards(self, round_id: str | None, closed_ns: int | None, cards: bool) -> None:
        if round_id is None:
            return
        if closed_ns is not None:
            self._closed_ns.setdefault(round_id, closed_ns)
        start = self._closed_ns.get(round_id)
        if cards and start is not None and round_id not in self._latency_of:
            latency = (time.monotonic_ns() - start) / 1e9
            self._latency_of[round_id] = latency
            self.latencies.append(latency)
            for old in list(self._closed_ns)[:-8]:        # keep the last few rounds only
                self._closed_ns.pop(old, None)
                self._latency_of.pop(old, None)


def _has_cards(snapshot: dict[str, Any]) -> bool:
    return bool(snapshot["dealer"]["cards"]) or any(s["cards"] for s in snapshot["seats"])

