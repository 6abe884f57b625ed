"""The host link's message schema, as data: every message type, its direction and its body fields.

Protocol version 3 (docs/protocols/host-envelope.md; what changed from versions 1 and 2, and why,
in docs/protocols/host-session.md). A body is a JSON object; each type lists its
required and optional fields and each field has a *kind* (:data:`KINDS`). :func:`check_body` refuses a
body with a missing, extra or wrongly typed field, raising :class:`EnvelopeError` with the reason.

Rules shared by every kind: ``bool`` is never accepted as an integer; counts and amounts are integers
in ``0 .. 2**63 - 1``; floats are refused anywhere in a body (money is integer cents, and floats have
no single canonical JSON spelling); free-form objects (``event.data``, ``round.record``) hold only
strings, integers in the signed 64-bit range, booleans, null, lists and objects, at most
:data:`MAX_DEPTH` deep.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from egmproto.errors import EnvelopeError

PROTOCOL_VERSION = 3
SUPPORTED_VERSIONS: frozenset[int] = frozenset({PROTOCOL_VERSION})

TO_HOST = "to_host"            #: direction: terminal -> host
TO_TERMINAL = "to_terminal"    #: direction: host -> terminal

COUNT_MAX = 2**63 - 1
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
MAX_DEPTH = 8
MAX_STR = 4096                 #: longest string field of a named kind ("str", "url"...)

_VALIDATION = re.compile(r"[0-9]{18}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_EPOCH = re.compile(r"[0-9a-f]{16}")
_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True)
class MessageType:
    """One message type of one protocol version."""

    name: str
    direction: str
    required: Mapping[str, str]
    optional: Mapping[str, str] = field(default_factory=dict)
    doc: str = ""


def _mt(name: str, direction: str, doc: str, required: dict[str, str],
        optional: dict[str, str] | None = None) -> MessageType:
    return MessageType(name, direction, required, optional or {}, doc)


#: Every host command carries its number for this terminal (1, 2, 3...: the same number however
#: often it is sent again) and the highest number the host knows applied (docs/protocols/host-session.md).
_CMD = {"cmd": "command_number", "confirmed": "count"}
#: Every report carries the epoch of the terminal's critical memory (a random id made with the
#: ledger: a RAM clear starts a new one), so the host keys its duplicate check by (terminal, epoch,
#: seq) and a cleared terminal's reports, numbered from 1 again, are new (docs/protocols/host-session.md).
_EPOCH_FIELD = {"epoch": "epoch"}

#: version -> type name -> MessageType. The schema itself; docs/protocols/host-envelope.md mirrors it.
SCHEMA: dict[int, dict[str, MessageType]] = {
    3: {m.name: m for m in (
        # terminal -> host
        _mt("hello", TO_HOST, "at every start: the software, and this boot's X25519 key (base64) for host commands",
            {"software": "str", "last_host_seq": "count_or_null", "kem_public": "str", **_EPOCH_FIELD},
            {"at": "iso_time"}),
        _mt("meters", TO_HOST, "the `egm meters` document",
            {"meters": "meter_tree", "credits": "count", **_EPOCH_FIELD},
            {"credit_count": "count", "denomination": "count", "reason": "str", "at": "iso_time"}),
        _mt("event", TO_HOST, "one ledger event (door, tilt, bill in, ticket out, power...)",
            {"name": "name", "data": "object", **_EPOCH_FIELD}, {"at": "iso_time"}),
        _mt("round", TO_HOST, "one round record (`egm recall`)", {"record": "object", **_EPOCH_FIELD},
            {"at": "iso_time"}),
        _mt("voucher_redeem_request", TO_HOST, "may this voucher be paid here?",
            {"validation": "validation", **_EPOCH_FIELD}, {"at": "iso_time"}),
        # host -> terminal
        _mt("ack", TO_TERMINAL, "the terminal's message with this seq is stored; drop it from the outbox; "
            "to a hello, also the highest report number the host holds for this terminal and epoch; "
            "conflict: the host holds another report under this seq (the terminal's memory went back)",
            {"seq": "count", **_EPOCH_FIELD}, {"held": "count", "conflict": "bool"}),
        _mt("disable", TO_TERMINAL, "stop play", {**_CMD}, {"reason": "str"}),
        _mt("enable", TO_TERMINAL, "allow play again", {**_CMD}),
        _mt("send_meters", TO_TERMINAL, "send a `meters` message now", {**_CMD}),
        _mt("set_time", TO_TERMINAL, "set the terminal clock", {**_CMD, "iso": "iso_time"}),
        _mt("voucher_redeem_reply", TO_TERMINAL, "the answer to a voucher_redeem_request",
            {"validation": "validation", "approved": "bool", "amount_cents": "count"}),
        _mt("package_offer", TO_TERMINAL, "a signed game package is available",
            {**_CMD, "name": "name", "version": "name", "url": "url", "sha256": "sha256"}),
    )},
}


#: A protocol's message types by version (:data:`SCHEMA` is the host link's; the live table's is
#: ``egmproto.table_messages.TABLE_SCHEMA``).
Schema = Mapping[int, Mapping[str, MessageType]]


def message_type(type_: str, version: int = PROTOCOL_VERSION, schema: Schema | None = None) -> MessageType:
    """The schema entry for ``type_`` in ``version`` of ``schema`` (default: the host link's);
    :class:`EnvelopeError` if there is none."""
    types = (SCHEMA if schema is None else schema).get(version)
    if types is None:
        raise EnvelopeError(f"protocol version {version!r} is not supported")
    if not isinstance(type_, str) or type_ not in types:
        raise EnvelopeError(f"unknown message type {type_!r} in protocol version {version}")
    return types[type_]


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_json(value: Any, where: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise EnvelopeError(f"{where}: nested deeper than {MAX_DEPTH}")
    if value is None or isinstance(value, (bool, str)):
        return
    if _is_int(value):
        if not INT_MIN <= value <= INT_MAX:
            raise EnvelopeError(f"{where}: integer outside the signed 64-bit range")
        return
    if isinstance(value, float):
        raise EnvelopeError(f"{where}: floats are not allowed (use integer cents or a string)")
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]", depth + 1)
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise EnvelopeError(f"{where}: object key {k!r} is not a string")
            _check_json(item, f"{where}.{k}", depth + 1)
        return
    raise EnvelopeError(f"{where}: {type(value).__name__} is not a JSON value")


def _check_meter_tree(value: Any, where: str, depth: int) -> None:
    if not isinstance(value, dict):
        raise EnvelopeError(f"{where}: expected an object of meters")
    if depth > MAX_DEPTH:
        raise EnvelopeError(f"{where}: nested deeper than {MAX_DEPTH}")
    for k, v in value.items():
        if not isinstance(k, str) or not k:
            raise EnvelopeError(f"{where}: meter name {k!r} is not a non-empty string")
        if isinstance(v, dict):
            _check_meter_tree(v, f"{where}.{k}", depth + 1)
        elif not (_is_int(v) and 0 <= v <= COUNT_MAX):
            raise EnvelopeError(f"{where}.{k}: a meter must be an integer in 0..2^63-1")


def _check_iso(v: Any, where: str) -> None:
    if not isinstance(v, str) or len(v) > 64:
        raise EnvelopeError(f"{where}: expected an ISO 8601 time string")
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        raise EnvelopeError(f"{where}: {v!r} is not an ISO 8601 time") from None
    if t.tzinfo is None:
        raise EnvelopeError(f"{where}: {v!r} has no UTC offset")


def _check_kind(kind: str, v: Any, where: str) -> None:
    if kind == "count":
        if not (_is_int(v) and 0 <= v <= COUNT_MAX):
            raise EnvelopeError(f"{where}: expected an integer in 0..2^63-1, got {v!r:.40}")
    elif kind == "command_number":
        if not (_is_int(v) and 1 <= v <= COUNT_MAX):
            raise EnvelopeError(f"{where}: expected an integer in 1..2^63-1, got {v!r:.40}")
    elif kind == "count_or_null":
        if v is not None:
            _check_kind("count", v, where)
    elif kind == "bool":
        if not isinstance(v, bool):
            raise EnvelopeError(f"{where}: expected true or false, got {v!r:.40}")
    elif kind == "str":
        if not isinstance(v, str) or len(v) > MAX_STR:
            raise EnvelopeError(f"{where}: expected a string of at most {MAX_STR} characters")
    elif kind == "name":
        if not isinstance(v, str) or not _NAME.fullmatch(v):
            raise EnvelopeError(f"{where}: expected a name [A-Za-z0-9_.:-]{{1,64}}, got {v!r:.80}")
    elif kind == "validation":
        if not isinstance(v, str) or not _VALIDATION.fullmatch(v):
            raise EnvelopeError(f"{where}: expected 18 digits, got {v!r:.40}")
    elif kind == "epoch":
        if not isinstance(v, str) or not _EPOCH.fullmatch(v):
            raise EnvelopeError(f"{where}: expected 16 lower-case hex digits, got {v!r:.40}")
    elif kind == "sha256":
        if not isinstance(v, str) or not _SHA256.fullmatch(v):
            raise EnvelopeError(f"{where}: expected 64 lower-case hex digits")
    elif kind == "url":
        if not isinstance(v, str) or len(v) > MAX_STR or not v.startswith(("https://", "http://")):
            raise EnvelopeError(f"{where}: expected an http(s) URL")
    elif kind == "iso_time":
        _check_iso(v, where)
    elif kind == "object":
        if not isinstance(v, dict):
            raise EnvelopeError(f"{where}: expected an object")
        _check_json(v, where, 1)
    elif kind == "meter_tree":
        _check_meter_tree(v, where, 1)
    elif kind == "list":
        if not isinstance(v, list):
            raise EnvelopeError(f"{where}: expected a list")
        _check_json(v, where, 1)
    elif kind == "str_or_null":
        if v is not None:
            _check_kind("str", v, where)
    else:  # pragma: no cover - a schema typo
        raise AssertionError(f"schema kind {kind!r} has no checker")


#: every field kind the schema uses (docs/protocols/host-envelope.md describes each)
KINDS = ("count", "command_number", "count_or_null", "bool", "str", "name", "validation", "sha256", "url", "iso_time",
         "object", "meter_tree", "epoch", "list", "str_or_null")


def check_body(type_: str, body: Any, version: int = PROTOCOL_VERSION, schema: Schema | None = None) -> MessageType:
    """Check ``body`` against the schema of ``type_`` (in ``schema``, default the host link's); return
    the type, or raise :class:`EnvelopeError`."""
    mt = message_type(type_, version, schema)
    if not isinstance(body, dict):
        raise EnvelopeError(f"{type_}: the body must be an object")
    for k in body:
        if not isinstance(k, str):
            raise EnvelopeError(f"{type_}: field name {k!r} is not a string")
    missing = sorted(set(mt.required) - set(body))
    if missing:
        raise EnvelopeError(f"{type_}: missing field(s) {', '.join(missing)}")
    extra = sorted(set(body) - set(mt.required) - set(mt.optional))
    if extra:
        raise EnvelopeError(f"{type_}: unexpected field(s) {', '.join(extra)}")
    for name, value in body.items():
        kind = mt.required.get(name) or mt.optional[name]
        _check_kind(kind, value, f"{type_}.{name}")
    return mt
