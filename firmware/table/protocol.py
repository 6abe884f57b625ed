"""The live table's wire format, without I/O: frames, and the bodies that need more than the schema.

A frame is a 4-byte big-endian length then one envelope (``egmproto.envelope``, schema
``egmproto.table_messages.TABLE_SCHEMA``) of that many bytes, 1 to ``MAX_FRAME`` (docs/protocols/
table.md, "Framing"). The envelope refuses floats, so the snapshot's seconds travel as integer
milliseconds (``*_left_s`` -> ``*_left_ms``) and the controller's close stamp as integer
nanoseconds: :func:`snapshot_to_wire` and :func:`snapshot_from_wire` convert.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from egmproto.envelope import MAX_ENVELOPE_BYTES
from firmware.table.errors import TableProtocolError

HEADER = struct.Struct(">I")
MAX_FRAME = MAX_ENVELOPE_BYTES
#: The snapshot's fields in seconds (floats), sent as integer milliseconds.
SECONDS_FIELDS = ("betting_left_s", "decision_left_s")
#: Longest bet or decision id.
MAX_ID = 128


def encode_frame(envelope: bytes) -> bytes:
    if not 0 < len(envelope) <= MAX_FRAME:
        raise TableProtocolError("oversize", f"a frame of {len(envelope)} bytes (1 to {MAX_FRAME})")
    return HEADER.pack(len(envelope)) + envelope


class FrameReader:
    """Cuts a byte stream into envelopes; refuses a length of 0 or above ``MAX_FRAME`` as soon as
    the header arrives (before buffering the body)."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer += data
        out: list[bytes] = []
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if not 0 < length <= MAX_FRAME:
                raise TableProtocolError("oversize", f"a frame announces {length} bytes (1 to {MAX_FRAME})")
            if len(self._buffer) < HEADER.size + length:
                break
            out.append(bytes(self._buffer[HEADER.size:HEADER.size + length]))
            del self._buffer[:HEADER.size + length]
        return out

    def end(self) -> None:
        """The stream ended: a partial frame left is truncated input."""
        if self._buffer:
            raise TableProtocolError("truncated", f"the connection ended inside a frame ({len(self._buffer)} bytes)")


def snapshot_to_wire(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(snapshot)
    for name in SECONDS_FIELDS:
        value = out.pop(name, None)
        out[name[:-2] + "_ms"] = None if value is None else max(0, round(value * 1000))
    return out


def snapshot_from_wire(wire: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(wire)
    for name in SECONDS_FIELDS:
        value = out.pop(name[:-2] + "_ms", None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise TableProtocolError("bad_body", f"snapshot {name[:-2]}_ms is not a count of milliseconds")
        out[name] = None if value is None else value / 1000
    return out


def check_id(value: Any, what: str) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= MAX_ID or not value.isprintable():
        raise TableProtocolError("bad_body", f"{what} must be 1-{MAX_ID} printable characters")
    return value


def check_wagers(wagers: Any, *, allow_empty: bool = False) -> dict[str, int]:
    """A bet's wagers: wager name -> a positive whole number of credits, at least one (none allowed
    with ``allow_empty``: a player banker's bet may be its cover alone)."""
    if not isinstance(wagers, dict) or (not wagers and not allow_empty):
        raise TableProtocolError("bad_body", "a bet needs its wagers: {name: credits}")
    out: dict[str, int] = {}
    for name, amount in wagers.items():
        if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
            raise TableProtocolError("bad_body", f"wager {name!r:.40}: {amount!r:.20} is not a positive number of credits")
        out[name] = amount
    return out


def wire_body(type_: str, body: dict[str, Any]) -> dict[str, Any]:
    """A message's body as it travels: a snapshot's seconds in milliseconds."""
    return {"snapshot": snapshot_to_wire(body)} if type_ == "snapshot" else body


def body_from_wire(type_: str, body: dict[str, Any]) -> dict[str, Any]:
    """A message's body as the station's rounds take it (TableEvents): seconds again."""
    if type_ == "snapshot":
        return snapshot_from_wire(body["snapshot"])
    if type_ == "decision_request":
        out = dict(body)
        left = out.pop("time_left_ms")
        out["time_left_s"] = None if left is None else left / 1000
        return out
    return body
