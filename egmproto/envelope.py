"""The host link's message envelope: signed, then HPKE-encrypted to the recipient (sans-I/O).

:func:`seal` turns (sender, seq, time, type, body) into bytes; :func:`open_` turns bytes back into an
:class:`Opened` message or raises :class:`EnvelopeRejected` with one reason code. Neither does any
I/O: the caller supplies keys, the sender's verification key (``verify_key_for``: the host resolves
the terminal's certificate against the CA and CRL elsewhere, see :func:`key_from_certificate`), the
last sequence number seen from the sender (``last_seq_for``) and the clock (``now``).

Layout, byte by byte, in docs/protocols/host-envelope.md. In short::

    header    = "EGM1" | version u8 | kem_id u16 | sender_len u8 | sender (ASCII)
    envelope  = header | enc_len u16 | enc | HPKE ciphertext (AES-256-GCM, tag included)
    plaintext = inner | sig_alg u8 | signature (64 bytes)
    inner     = canonical JSON {"body","sender","seq","time","type","v"}

HPKE base mode, X25519 / HKDF-SHA256 / AES-256-GCM by default, or the ML-KEM-768 + X25519 hybrid KEM
(``pq_hybrid=True``); the HPKE ``info`` is the header, so the outer sender id, version and KEM are
bound into the key schedule. The signature (Ed25519, or ECDSA P-256 with SHA-256 as raw r||s) is
over the inner bytes, which carry the sender id again; the decoder requires both ids to agree.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, hpke
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, mlkem, x25519
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

from egmproto.errors import EnvelopeError, EnvelopeRejected
from egmproto.messages import PROTOCOL_VERSION, SUPPORTED_VERSIONS, Schema, check_body

MAGIC = b"EGM1"
MAX_ENVELOPE_BYTES = 256 * 1024
SENDER_ID = re.compile(r"[A-Za-z0-9_.-]{1,32}")
SEQ_MAX = 2**63 - 1

KEM_X25519 = 0x0020          #: RFC 9180 DHKEM(X25519, HKDF-SHA256)
KEM_MLKEM768_X25519 = 0x647A  #: ML-KEM-768 + X25519 hybrid (draft-ietf-hpke-pq code point)

SIG_ED25519 = 1
SIG_ECDSA_P256_SHA256 = 2
SIG_LEN = 64                 #: both algorithms: Ed25519, or ECDSA r||s as two 32-byte big-endian ints

_KEMS: dict[int, Any] = {
    KEM_X25519: hpke.KEM.X25519,
    KEM_MLKEM768_X25519: hpke.KEM.MLKEM768_X25519,
}
_KEM_NAMES = {KEM_X25519: "X25519", KEM_MLKEM768_X25519: "MLKEM768-X25519"}
_KEM_PRIVATE = {KEM_X25519: x25519.X25519PrivateKey,
                KEM_MLKEM768_X25519: hpke.MLKEM768X25519PrivateKey}
_KEM_PUBLIC = {KEM_X25519: x25519.X25519PublicKey,
               KEM_MLKEM768_X25519: hpke.MLKEM768X25519PublicKey}
_INNER_KEYS = frozenset({"v", "sender", "seq", "time", "type", "body"})
_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z")
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"

# Every byte the header may hold before the sender id: fixed; then 1 + len(sender); then enc_len.
_FIXED = struct.Struct(">4sBHB")     # magic, version, kem id, sender length


_SUITES = {kem_id: hpke.Suite(kem, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_256_GCM) for kem_id, kem in _KEMS.items()}


def _suite(kem_id: int) -> Any:
    return _SUITES[kem_id]


def generate_hybrid_private_key() -> hpke.MLKEM768X25519PrivateKey:
    """A fresh ML-KEM-768 + X25519 recipient key (cryptography has no ``generate()`` for it)."""
    return hpke.MLKEM768X25519PrivateKey(mlkem.MLKEM768PrivateKey.generate(),
                                         x25519.X25519PrivateKey.generate())


@dataclass(frozen=True)
class Opened:
    """A message that passed every check of :func:`open_`."""

    sender_id: str
    seq: int
    time: datetime
    type: str
    body: dict[str, Any]
    version: int = PROTOCOL_VERSION
    kem: str = "X25519"


# --- canonical JSON ---------------------------------------------------------------------------

def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8 (not \\u-escaped), no NaN: the bytes that are signed."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _refuse(token: str) -> Any:
    raise ValueError(f"{token} is not allowed")


def _parse_canonical(data: bytes) -> Any:
    try:
        obj = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates,
                         parse_constant=_refuse, parse_float=_refuse)
    except (ValueError, RecursionError) as exc:
        raise EnvelopeRejected("malformed", f"inner message is not strict JSON: {exc}") from None
    try:
        again = canonical_json(obj)
    except (ValueError, RecursionError) as exc:  # pragma: no cover - parse already refused these
        raise EnvelopeRejected("malformed", f"inner message cannot be re-encoded: {exc}") from None
    if again != data:
        raise EnvelopeRejected("malformed", "inner message is not canonical JSON")
    return obj


def format_time(t: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; ``t`` must be timezone-aware."""
    if not isinstance(t, datetime) or t.tzinfo is None or t.utcoffset() is None:
        raise EnvelopeError("time must be a timezone-aware datetime")
    return t.astimezone(UTC).strftime(_TIME_FORMAT)


def _parse_time(s: Any) -> datetime:
    if not isinstance(s, str) or not _TIME.fullmatch(s):
        raise EnvelopeRejected("malformed", f"time {s!r:.40} is not YYYY-MM-DDTHH:MM:SS.ffffffZ")
    try:   # the pattern matched, so this is exactly _TIME_FORMAT (fromisoformat reads the Z as UTC)
        return datetime.fromisoformat(s)
    except ValueError:
        raise EnvelopeRejected("malformed", f"time {s!r} is not a real time") from None


# --- signatures -------------------------------------------------------------------------------

def _sign(key: Any, data: bytes) -> tuple[int, bytes]:
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return SIG_ED25519, key.sign(data)
    if isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP256R1):
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(hashes.SHA256())))
        return SIG_ECDSA_P256_SHA256, r.to_bytes(32, "big") + s.to_bytes(32, "big")
    raise EnvelopeError(f"signing key must be Ed25519 or ECDSA P-256, not {type(key).__name__}")


def _verify(key: Any, alg: int, signature: bytes, data: bytes) -> None:
    try:
        if isinstance(key, ed25519.Ed25519PublicKey):
            if alg != SIG_ED25519:
                raise EnvelopeRejected("bad_signature", f"algorithm {alg} but the sender's key is Ed25519")
            key.verify(signature, data)
        elif isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1):
            if alg != SIG_ECDSA_P256_SHA256:
                raise EnvelopeRejected("bad_signature", f"algorithm {alg} but the sender's key is P-256")
            r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
            key.verify(encode_dss_signature(r, s), data, ec.ECDSA(hashes.SHA256()))
        else:
            raise EnvelopeRejected("bad_signature",
                                   f"the sender's key ({type(key).__name__}) cannot verify envelopes")
    except InvalidSignature:
        raise EnvelopeRejected("bad_signature", "signature does not verify") from None


# --- seal -------------------------------------------------------------------------------------

def _header(version: int, kem_id: int, sender: bytes) -> bytes:
    return _FIXED.pack(MAGIC, version, kem_id, len(sender)) + sender


def seal(*, sender_id: str, seq: int, time: datetime, type: str, body: dict[str, Any],
         signing_key: Any, recipient_public_key: Any, version: int = PROTOCOL_VERSION,
         pq_hybrid: bool = False, schema: Schema | None = None) -> bytes:
    """Sign and encrypt one message; :class:`EnvelopeError` if anything about it is invalid.

    ``pq_hybrid=False`` needs an X25519 recipient key, ``True`` an ``MLKEM768X25519PublicKey``.
    ``schema``: the protocol whose message types the body is checked against (default: the host
    link's, ``messages.SCHEMA``; the live table's is ``table_messages.TABLE_SCHEMA``).
    """
    if version not in SUPPORTED_VERSIONS:
        raise EnvelopeError(f"protocol version {version!r} is not supported")
    if not isinstance(sender_id, str) or not SENDER_ID.fullmatch(sender_id):
        raise EnvelopeError(f"sender id {sender_id!r} does not match [A-Za-z0-9_.-]{{1,32}}")
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= SEQ_MAX:
        raise EnvelopeError(f"seq {seq!r} is not an integer in 0..2^63-1")
    check_body(type, body, version, schema)
    kem_id = KEM_MLKEM768_X25519 if pq_hybrid else KEM_X25519
    if not isinstance(recipient_public_key, _KEM_PUBLIC[kem_id]):
        raise EnvelopeError(f"{_KEM_NAMES[kem_id]} needs a {_KEM_PUBLIC[kem_id].__name__} recipient key,"
                            f" not {recipient_public_key.__class__.__name__}")
    inner = canonical_json({"v": version, "sender": sender_id, "seq": seq, "time": format_time(time),
                            "type": type, "body": body})
    alg, signature = _sign(signing_key, inner)
    header = _header(version, kem_id, sender_id.encode("ascii"))
    sealed: bytes = _suite(kem_id).encrypt(inner + bytes([alg]) + signature, recipient_public_key, info=header)
    enc_len = _KEMS[kem_id].enc_length()
    enc, ciphertext = sealed[:enc_len], sealed[enc_len:]
    out = header + struct.pack(">H", enc_len) + enc + ciphertext
    if len(out) > MAX_ENVELOPE_BYTES:
        raise EnvelopeError(f"envelope of {len(out)} bytes exceeds {MAX_ENVELOPE_BYTES}")
    return out


# --- open -------------------------------------------------------------------------------------

def _pick_private_key(keys: Any, kem_id: int) -> Any:
    wanted = _KEM_PRIVATE[kem_id]
    candidates = keys if isinstance(keys, (list, tuple)) else (keys,)
    for key in candidates:
        if isinstance(key, wanted):
            return key
    raise EnvelopeRejected("decrypt_failed",
                           f"envelope uses KEM {_KEM_NAMES[kem_id]} and there is no key for it here")


def _lookup_key(verify_key_for: Callable[[str], Any], sender_id: str) -> Any:
    try:
        key = verify_key_for(sender_id)
    except LookupError:
        key = None
    if key is None:
        raise EnvelopeRejected("unknown_sender", f"no verification key for sender {sender_id!r}")
    return key


def open_(data: bytes, *, recipient_private_key: Any | Iterable[Any],
          verify_key_for: Callable[[str], Any], last_seq_for: Callable[[str], int | None],
          now: datetime, max_age_s: float = 300, max_skew_s: float = 60,
          direction: str | None = None, schema: Schema | None = None) -> Opened:
    """Decrypt, verify and check one envelope; :class:`EnvelopeRejected` with a reason otherwise.

    ``recipient_private_key`` is one key, or a list of keys (one per KEM, to accept both during a
    migration). ``verify_key_for(sender_id)`` returns the sender's public key, or ``None`` (or raises
    ``LookupError``) when the sender is unknown; it may raise :class:`EnvelopeRejected` itself (a
    revoked certificate), which propagates. ``last_seq_for(sender_id)`` is the highest sequence
    number already accepted from the sender, or ``None``. ``direction`` (``messages.TO_HOST`` or
    ``TO_TERMINAL``), when given, refuses message types meant for the other side. ``schema``: as
    :func:`seal`'s.
    """
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise EnvelopeError("now must be a timezone-aware datetime")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise EnvelopeRejected("malformed", f"envelope must be bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) > MAX_ENVELOPE_BYTES:
        raise EnvelopeRejected("too_large", f"{len(data)} bytes exceeds {MAX_ENVELOPE_BYTES}")
    if len(data) < _FIXED.size:
        raise EnvelopeRejected("malformed", f"{len(data)} bytes is shorter than the header")
    magic, version, kem_id, sender_len = _FIXED.unpack_from(data)
    if magic != MAGIC:
        raise EnvelopeRejected("malformed", f"bad magic {magic!r}")
    if version not in SUPPORTED_VERSIONS:
        raise EnvelopeRejected("unsupported_version", f"envelope version {version} is not supported")
    if kem_id not in _KEMS:
        raise EnvelopeRejected("malformed", f"unknown KEM id 0x{kem_id:04x}")
    pos = _FIXED.size
    sender = data[pos:pos + sender_len]
    pos += sender_len
    try:
        sender_id = sender.decode("ascii")
    except UnicodeDecodeError:
        sender_id = ""
    if len(sender) != sender_len or not SENDER_ID.fullmatch(sender_id):
        raise EnvelopeRejected("malformed", f"sender id {sender!r:.60} is not [A-Za-z0-9_.-]{{1,32}}")
    header = data[:pos]
    if len(data) < pos + 2:
        raise EnvelopeRejected("malformed", "truncated before the encapsulated key length")
    (enc_len,) = struct.unpack_from(">H", data, pos)
    pos += 2
    if enc_len != _KEMS[kem_id].enc_length():
        raise EnvelopeRejected("malformed", f"encapsulated key of {enc_len} bytes for {_KEM_NAMES[kem_id]}")
    if len(data) < pos + enc_len + 16 + 1 + SIG_LEN:
        raise EnvelopeRejected("malformed", "truncated ciphertext")
    key = _pick_private_key(recipient_private_key, kem_id)
    try:
        plaintext = _suite(kem_id).decrypt(data[pos:], key, info=header)
    except (InvalidTag, ValueError):
        raise EnvelopeRejected("decrypt_failed", "HPKE open failed (tampered or not for this key)") from None
    if len(plaintext) < 1 + SIG_LEN + 2:
        raise EnvelopeRejected("malformed", "plaintext too short for a message and signature")
    inner, alg, signature = plaintext[:-SIG_LEN - 1], plaintext[-SIG_LEN - 1], plaintext[-SIG_LEN:]

    verify_key = _lookup_key(verify_key_for, sender_id)
    _verify(verify_key, alg, signature, inner)

    msg = _parse_canonical(inner)
    if not isinstance(msg, dict) or set(msg) != _INNER_KEYS:
        found = sorted(msg) if isinstance(msg, dict) else type(msg).__name__
        raise EnvelopeRejected("malformed", f"inner message must have exactly {sorted(_INNER_KEYS)}, has {found}")
    v = msg["v"]
    if isinstance(v, bool) or not isinstance(v, int):
        raise EnvelopeRejected("malformed", f"inner version {v!r:.20} is not an integer")
    if v not in SUPPORTED_VERSIONS:
        raise EnvelopeRejected("unsupported_version", f"inner version {v} is not supported")
    if v != version:
        raise EnvelopeRejected("malformed", f"inner version {v} != header version {version}")
    if msg["sender"] != sender_id:
        raise EnvelopeRejected("sender_mismatch",
                               f"signed sender {msg['sender']!r:.40} != envelope sender {sender_id!r}")
    seq = msg["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= SEQ_MAX:
        raise EnvelopeRejected("malformed", f"seq {seq!r:.30} is not an integer in 0..2^63-1")
    sent_at = _parse_time(msg["time"])
    type_, body = msg["type"], msg["body"]
    try:
        mt = check_body(type_, body, v, schema)
    except EnvelopeRejected:  # pragma: no cover - check_body raises only EnvelopeError
        raise
    except EnvelopeError as exc:
        raise EnvelopeRejected("bad_body", str(exc)) from None
    if direction is not None and mt.direction != direction:
        raise EnvelopeRejected("bad_body", f"{type_} is a {mt.direction} message, not {direction}")

    if sent_at < now - timedelta(seconds=max_age_s):
        raise EnvelopeRejected("stale", f"sent {format_time(sent_at)}, more than {max_age_s} s ago")
    if sent_at > now + timedelta(seconds=max_skew_s):
        raise EnvelopeRejected("future", f"sent {format_time(sent_at)}, more than {max_skew_s} s ahead")
    last = last_seq_for(sender_id)
    if last is not None and seq <= last:
        raise EnvelopeRejected("replay", f"seq {seq} from {sender_id} is not after {last}")
    return Opened(sender_id, seq, sent_at, type_, body, v, _KEM_NAMES[kem_id])


# --- certificates -----------------------------------------------------------------------------

def key_from_certificate(cert: Any, sender_id: str) -> Any:
    """The signing public key of ``cert`` (an ``x509.Certificate``, or PEM/DER bytes) for ``sender_id``.

    Checks only what the envelope needs: exactly one subject CN, equal to ``sender_id``
    (``sender_mismatch`` otherwise), and an Ed25519 or P-256 key (``unknown_sender`` otherwise).
    Chain, validity period and revocation are the caller's (PKI's) job.
    """
    from cryptography.x509.oid import NameOID

    from egmproto import x509parse  # only here: the envelope itself stays free of X.509

    if isinstance(cert, (bytes, bytearray)):
        raw = bytes(cert)
        try:
            cert = x509parse.certificate(raw)
        except x509parse.PARSE_ERRORS as exc:
            raise EnvelopeRejected("unknown_sender", f"unreadable certificate: {exc}") from None
    cns = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    if len(cns) != 1 or cns[0].value != sender_id:
        found = [a.value for a in cns]
        raise EnvelopeRejected("sender_mismatch", f"certificate CN {found} is not sender {sender_id!r}")
    key = cert.public_key()
    if isinstance(key, ed25519.Ed25519PublicKey) or (
            isinstance(key, ec.EllipticCurvePublicKey) and isinstance(key.curve, ec.SECP256R1)):
        return key
    raise EnvelopeRejected("unknown_sender",
                           f"certificate key {type(key).__name__} cannot sign envelopes")
