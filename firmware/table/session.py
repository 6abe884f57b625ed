"""One end of one table connection, without I/O: messages out as frames, frames in as messages.

Both the controller and the station use it (docs/protocols/table.md, "Security" and "Sequence
numbers"). Every message is an envelope signed by the sender's certificate key and encrypted to the
receiver's X25519 key (the controller's ``<controller>.kem`` certificate; the station's key of this
connection, announced in its signed ``join``). Sequence numbers grow per sender across connections
(each side starts its counter at the time in microseconds), and the receiver remembers the last one
it took from each peer (:class:`SeqBook`): an old or replayed frame is refused, also on a new
connection. Anything refused raises :class:`TableProtocolError`; the caller drops the connection.
"""

from __future__ import annotations

import base64
import itertools
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import x25519

from egmproto.envelope import Opened, open_, seal
from egmproto.errors import EnvelopeError, EnvelopeRejected
from egmproto.table_messages import EITHER, TABLE_SCHEMA
from firmware.table.errors import TableProtocolError
from firmware.table.protocol import FrameReader, encode_frame


def utc_now() -> datetime:
    return datetime.now(UTC)


class SeqBook:
    """The highest sequence number taken from each peer (kept across that peer's connections)."""

    def __init__(self) -> None:
        self._last: dict[str, int] = {}
        self._lock = threading.Lock()

    def last(self, peer: str) -> int | None:
        with self._lock:
            return self._last.get(peer)

    def take(self, peer: str, seq: int) -> None:
        with self._lock:
            self._last[peer] = max(seq, self._last.get(peer, -1))


class SeqCounter:
    """This side's sequence numbers: from the time in microseconds, so a restarted sender's numbers
    are still above the ones its peer last took."""

    def __init__(self, start: int | None = None) -> None:
        self._next = itertools.count(time.time_ns() // 1000 if start is None else start)
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            return next(self._next)


def kem_public_text(key: x25519.X25519PrivateKey) -> str:
    """The base64 of a connection's X25519 public key, as a ``join`` announces it."""
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode("ascii")


def kem_public_from_text(text: str) -> x25519.X25519PublicKey:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
        return x25519.X25519PublicKey.from_public_bytes(raw)
    except (ValueError, UnicodeEncodeError) as exc:
        raise TableProtocolError("bad_body", f"join.kem_public is not a base64 X25519 key: {exc}") from None


class Session:
    """Seal and open the messages of one connection.

    ``own_id`` signs with ``signing_key``; ``own_kem`` opens what is sent to this side; ``peer_id``
    (None: not known yet) is the only sender accepted; ``verify_key_for`` gives a sender's key (it
    may refuse a revoked certificate); ``incoming`` is the direction this side receives;
    ``peer_kem`` (set once known) is the key messages to the peer are encrypted to.
    """

    def __init__(self, *, own_id: str, signing_key: Any, own_kem: Any, peer_id: str | None,
                 verify_key_for: Callable[[str], Any], incoming: str, seqs: SeqBook, counter: SeqCounter,
                 peer_kem: Any = None, clock: Callable[[], datetime] = utc_now, max_age_s: float = 300) -> None:
        self.own_id = own_id
        self.peer_id = peer_id
        self.peer_kem = peer_kem
        self._signing_key = signing_key
        self._own_kem = own_kem
        self._verify_key_for = verify_key_for
        self._incoming = incoming
        self._seqs = seqs
        self._counter = counter
        self._clock = clock
        self._max_age_s = max_age_s
        self._reader = FrameReader()

    def frame(self, type_: str, body: dict[str, Any]) -> bytes:
        """One message to the peer, sealed and framed."""
        if self.peer_kem is None:
            raise TableProtocolError("no_key", f"no encryption key for {self.peer_id or 'the peer'} yet")
        try:
            envelope = seal(sender_id=self.own_id, seq=self._counter.next(), time=self._clock(), type=type_,
                            body=body, signing_key=self._signing_key, recipient_public_key=self.peer_kem,
                            schema=TABLE_SCHEMA)
        except EnvelopeError as exc:
            raise TableProtocolError("bad_body", f"cannot send {type_}: {exc}") from None
        return encode_frame(envelope)

    def feed(self, data: bytes) -> list[Opened]:
        """The messages ``data`` completes (none, one or several); :class:`TableProtocolError` on the
        first thing refused (what came before it in ``data`` is lost with the connection)."""
        return [self._open(envelope) for envelope in self._reader.feed(data)]

    def end(self) -> None:
        """The peer closed the connection; a partial frame left is refused as truncated."""
        self._reader.end()

    def _open(self, envelope: bytes) -> Opened:
        try:
            opened = open_(envelope, recipient_private_key=self._own_kem, verify_key_for=self._verify,
                           last_seq_for=self._seqs.last, now=self._clock(), max_age_s=self._max_age_s,
                           schema=TABLE_SCHEMA)
        except EnvelopeRejected as exc:
            raise TableProtocolError(exc.reason_code, exc.message) from None
        except EnvelopeError as exc:
            raise TableProtocolError("malformed", str(exc)) from None
        direction = TABLE_SCHEMA[opened.version][opened.type].direction
        if direction not in (self._incoming, EITHER):
            raise TableProtocolError("bad_body", f"{opened.type} is not sent {self._incoming.replace('_', ' ')}")
        self._seqs.take(opened.sender_id, opened.seq)
        return opened

    def _verify(self, sender_id: str) -> Any:
        if self.peer_id is not None and sender_id != self.peer_id:
            raise EnvelopeRejected("sender_mismatch", f"{sender_id!r} sent on {self.peer_id!r}'s connection")
        return self._verify_key_for(sender_id)
