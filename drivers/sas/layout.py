"""Message bodies described as field layouts, so one description encodes and decodes.

A body is a frozen dataclass whose ``layout`` lists, in wire order, each field's kind and size:

- ``bcd``: packed BCD of a fixed number of bytes (an ``int``; rolled over on encode);
- ``bin``: an unsigned binary number, least significant byte first as SAS sends them;
- ``ascii``: fixed-width text (the wrong width is refused rather than padded, so a mistake shows);
- ``raw``: a fixed number of bytes, as they are;
- ``lascii`` / ``lraw``: a length byte and that many bytes of text or raw data;
- ``lbcd``: a length byte and that many bytes of BCD (encoded at ``size`` bytes);
- ``rest``: whatever bytes remain.

Decoding a body of the wrong shape raises :class:`ValueError` (the caller reports it).
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from typing import Any, ClassVar, Self

from drivers.sas.bcd import from_bcd, to_bcd

Field = tuple[str, int]


def _take(data: bytes, at: int, size: int) -> bytes:
    if at + size > len(data):
        raise ValueError(f"body ends at {len(data)} bytes, field needs {at + size}")
    return data[at : at + size]


def _encode_field(kind: str, size: int, value: Any) -> bytes:
    if kind == "bcd":
        return to_bcd(value, size)
    if kind == "bin":
        return int(value).to_bytes(size, "little")
    if kind == "ascii":
        raw = str(value).encode("ascii")
        if len(raw) != size:
            raise ValueError(f"text {value!r} is not {size} characters")
        return raw
    if kind == "raw":
        if len(value) != size:
            raise ValueError(f"{size} bytes expected, not {len(value)}")
        return bytes(value)
    if kind == "lascii":
        raw = str(value).encode("ascii")
        return bytes((len(raw),)) + raw
    if kind == "lraw":
        return bytes((len(value),)) + bytes(value)
    if kind == "lbcd":
        return bytes((size,)) + to_bcd(value, size)
    if kind == "rest":
        return bytes(value)
    raise AssertionError(kind)


def _decode_field(kind: str, size: int, data: bytes, at: int) -> tuple[Any, int]:
    if kind in ("lascii", "lraw", "lbcd"):
        size = _take(data, at, 1)[0]
        at += 1
        raw = _take(data, at, size)
        value: Any = raw.decode("ascii") if kind == "lascii" else raw if kind == "lraw" else from_bcd(raw)
        return value, at + size
    if kind == "rest":
        return data[at:], len(data)
    raw = _take(data, at, size)
    if kind == "bcd":
        return from_bcd(raw), at + size
    if kind == "bin":
        return int.from_bytes(raw, "little"), at + size
    if kind == "raw":
        return raw, at + size
    return raw.decode("ascii"), at + size


@dataclass(frozen=True, slots=True)
class Body:
    """Base of the typed bodies: ``layout`` gives (kind, size) per dataclass field, in order."""

    layout: ClassVar[tuple[Field, ...]] = ()

    def encode(self) -> bytes:
        return b"".join(_encode_field(kind, size, value)
                        for (kind, size), value in zip(self.layout, astuple(self), strict=True))

    @classmethod
    def decode(cls, data: bytes) -> Self:
        body, at = cls.decode_prefix(data)
        if at != len(data):
            raise ValueError(f"{len(data) - at} bytes left over after {cls.__name__}")
        return body

    @classmethod
    def decode_prefix(cls, data: bytes) -> tuple[Self, int]:
        """The body at the start of ``data`` and where it ends (for a body followed by more)."""
        values = []
        at = 0
        for kind, size in cls.layout:
            value, at = _decode_field(kind, size, data, at)
            values.append(value)
        return cls(*values), at
