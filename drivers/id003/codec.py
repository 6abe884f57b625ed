"""JCM ID-003 (bill validator) framing and message codes: a sans-I/O codec for both ends.

Frame (``docs/protocols/frames.md``)::

    +------+-----+----------+-----------+-------+-------+
    | SYNC | LEN | CMD/STAT | DATA ...  | CRC_L | CRC_H |
    | 0xFC |     |          | LEN-5     |       |       |
    +------+-----+----------+-----------+-------+-------+

LEN counts the whole frame (5..255). The CRC is CRC-16/KERMIT over SYNC..last data byte, low byte
first. Serial line: 9600 baud, 8 data bits, even parity, 1 stop bit.

Resynchronisation: bytes before a SYNC, a LEN below 5 and a bad CRC are reported as
:class:`~drivers.codec.Garbage`; after a bad LEN or CRC only the SYNC byte is dropped and the
search for the next SYNC starts right after it (a corrupted LEN must not swallow the good frame
that follows).

The host role sends :class:`Command` codes and receives :class:`Status` codes (and the echoes and
read-back answers of setting commands); the device role the other way round. One table per
direction says which codes each role may send.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from drivers.codec import Garbage, LocalProtocolError, Role, StreamDecoder, skip_to
from drivers.crc import crc16_kermit

SYNC = 0xFC
#: Header (SYNC, LEN, code) plus CRC.
OVERHEAD = 5
MAX_FRAME = 255
#: pyserial settings of the line.
SERIAL = {"baudrate": 9600, "bytesize": 8, "parity": "E", "stopbits": 1}


class Command(enum.IntEnum):
    """Host -> validator."""

    STATUS_REQUEST = 0x11
    ACK = 0x50
    RESET = 0x40
    STACK_1 = 0x41
    STACK_2 = 0x42
    RETURN = 0x43
    HOLD = 0x44
    WAIT = 0x45
    SET_ENABLE = 0xC0              #: data: 2 bytes, a set bit *disables* that denomination
    SET_SECURITY = 0xC1
    SET_COMMUNICATION_MODE = 0xC2
    SET_INHIBIT = 0xC3             #: data: 0x00 accepting allowed, 0x01 inhibited
    SET_DIRECTION = 0xC4
    SET_OPTIONAL_FUNCTION = 0xC5
    SET_BARCODE_FUNCTION = 0xC6    #: data: type (0x01 Interleaved 2 of 5), length (0x12 = 18)
    SET_BARCODE_INHIBIT = 0xC7
    GET_ENABLE = 0x80
    GET_SECURITY = 0x81
    GET_COMMUNICATION_MODE = 0x82
    GET_INHIBIT = 0x83
    GET_DIRECTION = 0x84
    GET_OPTIONAL_FUNCTION = 0x85
    GET_BARCODE_FUNCTION = 0x86
    GET_BARCODE_INHIBIT = 0x87
    GET_VERSION = 0x88
    GET_BOOT_VERSION = 0x89
    GET_CURRENCY_ASSIGNMENT = 0x8A


class Status(enum.IntEnum):
    """Validator -> host."""

    IDLING = 0x11
    ACCEPTING = 0x12
    ESCROW = 0x13                  #: data: a note code 0x61-0x68, or 0x6F + ticket digits
    STACKING = 0x14
    VEND_VALID = 0x15              #: the host must ACK it
    STACKED = 0x16
    REJECTING = 0x17               #: data: reason 0x71-0x7E
    RETURNING = 0x18
    HOLDING = 0x19
    DISABLED = 0x1A
    INITIALIZE = 0x1B
    POWER_UP = 0x40
    POWER_UP_BILL_IN_ACCEPTOR = 0x41
    POWER_UP_BILL_IN_STACKER = 0x42
    STACKER_FULL = 0x43
    STACKER_OPEN = 0x44
    JAM_IN_ACCEPTOR = 0x45
    JAM_IN_STACKER = 0x46
    PAUSE = 0x47
    CHEATED = 0x48
    FAILURE = 0x49
    COMMUNICATION_ERROR = 0x4A
    INVALID_COMMAND = 0x4B
    ACK = 0x50                     #: the answer to an operation command (stack, return, ...)


#: Setting commands are answered by an echo of the same code and data; read-back (0x80-0x8A)
#: commands by the same code with the value.
SETTING_CODES = frozenset(c for c in Command if 0x80 <= c <= 0xC7)
#: Codes each role may send.
SENDS: dict[Role, frozenset[int]] = {
    Role.HOST: frozenset(Command),
    Role.DEVICE: frozenset(Status) | SETTING_CODES,
}

#: The first data byte of an escrowed ticket; note codes are 0x61-0x68.
TICKET_CODE = 0x6F
NOTE_CODES = range(0x61, 0x69)

#: Reject reasons (data of REJECTING).
REJECT_REASONS = {
    0x71: "insertion error", 0x72: "magnetic pattern error", 0x73: "return by remaining bill",
    0x74: "calibration or magnification error", 0x75: "conveying error",
    0x76: "denomination assessment error", 0x77: "photo pattern error", 0x78: "photo level error",
    0x79: "return by inhibit", 0x7A: "reserved", 0x7B: "operation error",
    0x7C: "return by stacker", 0x7D: "length error", 0x7E: "color pattern error",
}


@dataclass(frozen=True, slots=True)
class Frame:
    """One ID-003 message: the command or status code and its data bytes."""

    code: int
    data: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.code <= 0xFF:
            raise ValueError(f"an ID-003 code is one byte, not {self.code}")
        if len(self.data) > MAX_FRAME - OVERHEAD:
            raise ValueError(f"ID-003 data holds at most {MAX_FRAME - OVERHEAD} bytes")

    def name(self, sender: Role) -> str:
        table: Any = Command if sender is Role.HOST else Status
        try:
            return str(table(self.code).name)
        except ValueError:
            try:
                return Command(self.code).name     # a setting echo from the device
            except ValueError:
                return f"0x{self.code:02X}"


def encode(frame: Frame) -> bytes:
    """The bytes of ``frame`` on the wire."""
    body = bytes((SYNC, len(frame.data) + OVERHEAD, frame.code)) + frame.data
    crc = crc16_kermit(body)
    return body + bytes((crc & 0xFF, crc >> 8))


@dataclass(frozen=True, slots=True)
class Escrow:
    """What ESCROW holds: a note (its code) or a ticket (its barcode digits)."""

    note_code: int | None = None
    barcode: str | None = None


def parse_escrow(frame: Frame) -> Escrow | None:
    """The escrowed item of an ESCROW frame, or None if its data is malformed."""
    if frame.code != Status.ESCROW or not frame.data:
        return None
    first = frame.data[0]
    if first in NOTE_CODES and len(frame.data) == 1:
        return Escrow(note_code=first)
    if first == TICKET_CODE:
        digits = frame.data[1:]
        if digits and all(0x30 <= b <= 0x39 for b in digits):
            return Escrow(barcode=digits.decode("ascii"))
    return None


class Id003Codec(StreamDecoder):
    """Both ends of an ID-003 link. ``send`` checks the role; ``next_event`` yields frames."""

    max_buffer = 4 * MAX_FRAME

    def __init__(self, role: Role) -> None:
        super().__init__()
        self.role = role

    def send(self, frame: Frame) -> bytes:
        if frame.code not in SENDS[self.role]:
            raise LocalProtocolError(
                f"the {self.role.value} does not send code 0x{frame.code:02X} in ID-003")
        return encode(frame)

    def _decode(self, buffer: bytearray) -> tuple[int, Frame | Garbage | None]:
        if buffer[0] != SYNC:
            return skip_to(buffer, SYNC, "bytes before SYNC")
        if len(buffer) < 2:
            return 0, None
        length = buffer[1]
        if length < OVERHEAD:
            return skip_to(buffer, SYNC, f"frame length {length} is below {OVERHEAD}")
        if len(buffer) < length:
            return 0, None
        crc = buffer[length - 2] | buffer[length - 1] << 8
        if crc16_kermit(bytes(buffer[: length - 2])) != crc:
            return skip_to(buffer, SYNC, "bad CRC")
        return length, Frame(buffer[2], bytes(buffer[3 : length - 2]))
