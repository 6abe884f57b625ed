"""TCL (ticket printer) commands and status records: a sans-I/O codec for both ends.

Host -> printer (``docs/protocols/frames.md``, TCL)::

    ^<code>|<field>|<field>|...|^        printable ASCII; a field holds no ``^``, no ``|``
    ENQ (0x05)                           one byte, outside any command: "send your status"

Printer -> host, the answer to ENQ: a fixed-length status record (this product's reading of the
layout, ``docs/protocols/tcl.md``)::

    *S|<addr>|<version: 8 chars>|<F1>|<F2>|<F3>|<F4>|<F5>|*          25 bytes

Each flag byte F1..F5 is ``0x40`` plus five flag bits (so it is printable: ``@`` is "nothing set");
:class:`Flag` numbers them F1 bit 0 = bit 0 ... F5 bit 4 = bit 24.

Resynchronisation (no checksum exists in TCL, so structure is all there is to check):

* host role: bytes before a ``*S`` are garbage; 25 bytes from a ``*`` that are not a well-formed
  record are garbage up to the next ``*`` after the first byte (a record cut short by a power loss
  must not swallow the good record that follows);
* device role: bytes that are neither ENQ nor ``^`` are garbage up to the next ENQ or ``^``; a
  command that meets a byte that is not printable ASCII (ENQ included) before its closing ``^`` is
  garbage up to that byte, which is then decoded afresh; a closing ``^`` whose command does not end
  in ``|`` is garbage up to (not including) that ``^``, which may open the next command; a command
  longer than :data:`MAX_COMMAND` is garbage; an unknown code or malformed fields are garbage.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Final

from drivers.codec import Garbage, LocalProtocolError, Role, StreamDecoder, skip_to

ENQ: Final = 0x05
CARET: Final = ord("^")
BAR: Final = ord("|")
STAR: Final = ord("*")
#: The longest command accepted (a print job of a full voucher is ~330 bytes).
MAX_COMMAND: Final = 1024
#: pyserial settings of the line (this product's default: 9600 8N1).
SERIAL: Final = {"baudrate": 9600, "bytesize": 8, "parity": "N", "stopbits": 1}

#: Characters allowed in a field: printable ASCII without the two delimiters.
_FIELD = re.compile(r"[ -{}~]*")           # 0x20..0x7E minus '|' (0x7C); '^' (0x5E) checked apart
_ID = re.compile(r"[0-9A-Z]")
_VERSION = re.compile(r"[0-9A-Za-z.\- ]{8}")
VERSION_LENGTH: Final = 8
RECORD_LENGTH: Final = 25


def _check_field(value: str, what: str) -> None:
    if "^" in value or not _FIELD.fullmatch(value):
        raise ValueError(f"a TCL {what} is printable ASCII without '^' or '|', not {value!r}")


# --- status --------------------------------------------------------------------------------------
class Flag(enum.IntFlag):
    """The status flags: ``F<n>`` bit ``b`` is bit ``5 * (n - 1) + b``."""

    NONE = 0
    BUSY = 1 << 0                   #: F1: a job is printing
    SYSTEM_ERROR = 1 << 1
    CHASSIS_OPEN = 1 << 2           #: F1: platen up / print head open
    PAPER_OUT = 1 << 3
    HEAD_ERROR = 1 << 4
    VOLTAGE_ERROR = 1 << 5          #: F2
    TEMPERATURE_ERROR = 1 << 6
    LIBRARY_REF_ERROR = 1 << 7      #: F2: a print named a template or region not defined
    DATA_ERROR = 1 << 8             #: F2: a print's fields do not fit its template
    LIBRARY_LOAD_ERROR = 1 << 9     #: F2: a region or template definition was refused
    BUFFER_OVERFLOW = 1 << 10       #: F3
    JOB_MEMORY_OVERFLOW = 1 << 11
    COMMAND_ERROR = 1 << 12         #: F3: a command the printer could not read
    LIBRARY_CORRUPT = 1 << 13
    PAPER_IN_CHUTE = 1 << 14
    FLASH_ERROR = 1 << 15           #: F4
    OFFLINE = 1 << 16
    MISSING_SUPPLY_INDEX = 1 << 17
    JAM = 1 << 18                   #: F4: paper jam
    RESET = 1 << 19                 #: F4: powered up since the last clear (definitions are gone)
    JOURNAL = 1 << 20               #: F5
    RESERVED_F5_1 = 1 << 21
    TOP_OF_FORM = 1 << 22           #: F5: the paper waits at the start of the next ticket
    VALIDATION_DONE = 1 << 23       #: F5: the last job's validation number is on paper
    PAPER_LOW = 1 << 24


#: Flags ``^C|^`` clears (the latched errors, the reset mark and validation done).
CLEARABLE: Final = (Flag.SYSTEM_ERROR | Flag.LIBRARY_REF_ERROR | Flag.DATA_ERROR
                    | Flag.LIBRARY_LOAD_ERROR | Flag.BUFFER_OVERFLOW | Flag.JOB_MEMORY_OVERFLOW
                    | Flag.COMMAND_ERROR | Flag.RESET | Flag.VALIDATION_DONE)


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """ENQ: the host asks for a status record."""


@dataclass(frozen=True, slots=True)
class StatusRecord:
    """The printer's answer to ENQ."""

    flags: Flag = Flag.NONE
    version: str = "EGMTCL01"
    address: int = 0

    def __post_init__(self) -> None:
        if not _VERSION.fullmatch(self.version):
            raise ValueError(f"a TCL firmware version is 8 letters, digits, '.', '-' or spaces, "
                             f"not {self.version!r}")
        if not 0 <= self.address <= 9:
            raise ValueError(f"a TCL unit address is one digit, not {self.address}")
        if not 0 <= int(self.flags) < 1 << 25:
            raise ValueError(f"TCL status flags are 25 bits, not {int(self.flags):#x}")

    def has(self, flag: Flag) -> bool:
        return bool(self.flags & flag)


def encode_record(record: StatusRecord) -> bytes:
    value = int(record.flags)
    flag_bytes = "|".join(chr(0x40 | (value >> (5 * i)) & 0x1F) for i in range(5))
    return f"*S|{record.address}|{record.version}|{flag_bytes}|*".encode("ascii")


def parse_record(data: bytes) -> StatusRecord | None:
    """The record in exactly :data:`RECORD_LENGTH` bytes, or None if they are not one."""
    if len(data) != RECORD_LENGTH or data[:3] != b"*S|" or data[-1] != STAR:
        return None
    if data[4] != BAR or data[13] != BAR or any(data[i] != BAR for i in range(15, 25, 2)):
        return None
    address = data[3] - 0x30
    if not 0 <= address <= 9:
        return None
    try:
        version = data[5:13].decode("ascii")
    except UnicodeDecodeError:
        return None
    if not _VERSION.fullmatch(version):
        return None
    value = 0
    for i, at in enumerate(range(14, 24, 2)):
        byte = data[at]
        if byte & 0xE0 != 0x40:
            return None
        value |= (byte & 0x1F) << (5 * i)
    return StatusRecord(Flag(value), version, address)


# --- commands ------------------------------------------------------------------------------------
class Rotation(enum.IntEnum):
    NONE = 0
    CW_90 = 1
    UPSIDE_DOWN = 2
    CCW_90 = 3


class Justify(enum.StrEnum):
    LEFT = "L"
    CENTRE = "C"
    RIGHT = "R"


class RegionKind(enum.StrEnum):
    TEXT = "T"
    BARCODE_I2OF5 = "B"             #: Interleaved 2 of 5; the field is its digits


@dataclass(frozen=True, slots=True)
class Region:
    """``^R|<id>|<x>|<y>|<width>|<height>|<rotation>|<justify>|<font>|<kind>|<length>|^``.

    Position and size in printer dots (203 dpi), ``length`` the most characters (digits for a
    barcode) a print job may put in it.
    """

    id: str
    x: int
    y: int
    width: int
    height: int
    rotation: Rotation = Rotation.NONE
    justify: Justify = Justify.LEFT
    font: int = 1
    kind: RegionKind = RegionKind.TEXT
    length: int = 40

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"a TCL region id is one of 0-9, A-Z, not {self.id!r}")
        for name in ("x", "y", "width", "height"):
            if not 0 <= getattr(self, name) <= 9999:
                raise ValueError(f"region {self.id}: {name} is 0..9999 dots")
        if not 0 <= self.font <= 99 or not 1 <= self.length <= 99:
            raise ValueError(f"region {self.id}: font 0..99 and length 1..99")

    def fields(self) -> tuple[str, ...]:
        return (self.id, str(self.x), str(self.y), str(self.width), str(self.height),
                str(int(self.rotation)), self.justify.value, str(self.font), self.kind.value,
                str(self.length))


@dataclass(frozen=True, slots=True)
class DefineRegion:
    region: Region


@dataclass(frozen=True, slots=True)
class Template:
    """``^T|<id>|<length>|<width>|<region id>|...|^``: a ticket ``length`` x ``width`` dots whose
    regions a print job's fields fill, in this order."""

    id: str
    length: int
    width: int
    regions: tuple[str, ...]

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"a TCL template id is one of 0-9, A-Z, not {self.id!r}")
        if not (1 <= self.length <= 9999 and 1 <= self.width <= 9999):
            raise ValueError(f"template {self.id}: length and width are 1..9999 dots")
        if not self.regions or not all(_ID.fullmatch(r) for r in self.regions):
            raise ValueError(f"template {self.id}: one or more region ids (0-9, A-Z)")

    def fields(self) -> tuple[str, ...]:
        return (self.id, str(self.length), str(self.width), *self.regions)


@dataclass(frozen=True, slots=True)
class DefineTemplate:
    template: Template


@dataclass(frozen=True, slots=True)
class Print:
    """``^P|<template>|<copies>|f1|f2|...|^``: print ``copies`` tickets of ``template``."""

    template: str
    copies: int = 1
    fields: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.template):
            raise ValueError(f"a TCL template id is one of 0-9, A-Z, not {self.template!r}")
        if not 1 <= self.copies <= 9:
            raise ValueError(f"copies are 1..9, not {self.copies}")
        for value in self.fields:
            _check_field(value, "print field")


@dataclass(frozen=True, slots=True)
class ClearErrors:
    """``^C|^``: clear the latched errors, the reset mark and validation done."""


@dataclass(frozen=True, slots=True)
class FormFeed:
    """``^f|I|^``: feed to the top of the next form."""


Command = DefineRegion | DefineTemplate | Print | ClearErrors | FormFeed
HostMessage = Command | StatusRequest
DeviceMessage = StatusRecord

#: Which role sends which message.
SENDS: dict[Role, tuple[type, ...]] = {
    Role.HOST: (DefineRegion, DefineTemplate, Print, ClearErrors, FormFeed, StatusRequest),
    Role.DEVICE: (StatusRecord,),
}


def _frame(code: str, fields: tuple[str, ...]) -> bytes:
    for value in fields:
        _check_field(value, "field")
    body = "|".join((code, *fields))
    data = f"^{body}|^".encode("ascii")
    if len(data) > MAX_COMMAND:
        raise LocalProtocolError(f"a TCL command is at most {MAX_COMMAND} bytes, not {len(data)}")
    return data


def encode(message: HostMessage | DeviceMessage) -> bytes:
    """The bytes of ``message`` on the wire."""
    match message:
        case StatusRequest():
            return bytes((ENQ,))
        case StatusRecord():
            return encode_record(message)
        case Print(template=template, copies=copies, fields=fields):
            return _frame("P", (template, str(copies), *fields))
        case DefineRegion(region=region):
            return _frame("R", region.fields())
        case DefineTemplate(template=template):
            return _frame("T", template.fields())
        case ClearErrors():
            return _frame("C", ())
        case FormFeed():
            return _frame("f", ("I",))
    raise LocalProtocolError(f"not a TCL message: {message!r}")


def _number(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 4:
        raise ValueError(f"not a number: {text!r}")
    return int(text)


def parse_command(body: str) -> Command:
    """The command between ``^`` and ``^`` (its trailing ``|`` included); ``ValueError`` if none."""
    parts = body.split("|")
    if len(parts) < 2 or parts[-1] != "":
        raise ValueError("a command ends with '|'")
    code, fields = parts[0], parts[1:-1]
    if code == "P":
        if len(fields) < 2:
            raise ValueError("a print names a template and copies")
        return Print(fields[0], _number(fields[1]), tuple(fields[2:]))
    if code == "R":
        if len(fields) != 10:
            raise ValueError(f"a region has 10 fields, not {len(fields)}")
        rid, x, y, w, h, rot, just, font, kind, length = fields
        return DefineRegion(Region(rid, _number(x), _number(y), _number(w), _number(h),
                                   Rotation(_number(rot)), Justify(just), _number(font),
                                   RegionKind(kind), _number(length)))
    if code == "T":
        if len(fields) < 4:
            raise ValueError("a template has an id, a length, a width and regions")
        return DefineTemplate(Template(fields[0], _number(fields[1]), _number(fields[2]),
                                       tuple(fields[3:])))
    if code == "C" and not fields:
        return ClearErrors()
    if code == "f" and fields == ["I"]:
        return FormFeed()
    raise ValueError(f"unknown command {code!r} with {len(fields)} field(s)")


class TclCodec(StreamDecoder):
    """Both ends of a TCL link. ``send`` checks the role; ``next_event`` yields messages/garbage."""

    max_buffer = 2 * MAX_COMMAND

    def __init__(self, role: Role) -> None:
        super().__init__()
        self.role = role

    def send(self, message: HostMessage | DeviceMessage) -> bytes:
        if not isinstance(message, SENDS[self.role]):
            raise LocalProtocolError(
                f"the {self.role.value} does not send {type(message).__name__} in TCL")
        return encode(message)

    def _decode(self, buffer: bytearray) -> tuple[int, object]:
        if self.role is Role.HOST:
            return self._decode_record(buffer)
        return self._decode_command(buffer)

    # printer -> host
    @staticmethod
    def _decode_record(buffer: bytearray) -> tuple[int, object]:
        if buffer[0] != STAR or (len(buffer) > 1 and buffer[1] != ord("S")):
            return skip_to(buffer, STAR, "bytes before '*'")
        # A '*' inside the first bytes of a candidate (other than the last) means it was cut.
        if len(buffer) < RECORD_LENGTH:
            inner = buffer.find(STAR, 1)
            if 0 < inner < RECORD_LENGTH - 1:
                return skip_to(buffer, STAR, "status record cut short")
            return 0, None
        record = parse_record(bytes(buffer[:RECORD_LENGTH]))
        if record is None:
            return skip_to(buffer, STAR, "malformed status record")
        return RECORD_LENGTH, record

    # host -> printer
    @staticmethod
    def _decode_command(buffer: bytearray) -> tuple[int, object]:
        first = buffer[0]
        if first == ENQ:
            return 1, StatusRequest()
        if first != CARET:
            at = next((i for i, b in enumerate(buffer) if b in (ENQ, CARET)), len(buffer))
            return at, Garbage(bytes(buffer[:at]), "bytes before '^' or ENQ")
        for i in range(1, min(len(buffer), MAX_COMMAND)):
            byte = buffer[i]
            if byte == CARET:
                body = bytes(buffer[1:i]).decode("ascii")
                if not body.endswith("|"):
                    return i, Garbage(bytes(buffer[:i]), "command without closing '|'")
                try:
                    return i + 1, parse_command(body)
                except ValueError as exc:
                    return i + 1, Garbage(bytes(buffer[: i + 1]), f"bad command: {exc}")
            if not 0x20 <= byte <= 0x7E:
                return i, Garbage(bytes(buffer[:i]), "command cut short")
        if len(buffer) >= MAX_COMMAND:
            return skip_to(buffer, CARET, f"command longer than {MAX_COMMAND} bytes")
        return 0, None
