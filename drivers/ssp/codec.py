"""ITL SSP (bill validator, second protocol): framing, byte stuffing and the sequence flag.

Frame (``shared/vectors/protocol-frames.md``)::

    +------+--------+-----+-----------+-------+-------+
    | STX  | SEQ/ID | LEN | DATA ...  | CRC_L | CRC_H |
    | 0x7F | b7 seq |     | LEN bytes |       |       |
    +------+--------+-----+-----------+-------+-------+

SEQ/ID: bit 7 is the sequence flag, bits 0-6 the slave address. LEN counts DATA only. The CRC is
CRC-16 poly 0x8005, init 0xFFFF, MSB first, no reflection (over SEQ/ID..DATA), sent low byte
first. Every 0x7F after the STX, CRC included, is sent twice (byte stuffing). Serial: 9600 8N2.

Sequence rule: the host toggles the flag for every new command and repeats a command with the
same flag when its reply was lost; the device answers with the command's flag and, seeing a
command whose flag equals the previous one's, resends its last reply instead of acting twice.
:class:`SspCodec` keeps that state for either role: the host's ``command`` toggles, ``repeat``
resends; the device's received packets say ``repeated`` and ``reply`` echoes the flag.

Resynchronisation: a lone 0x7F inside a frame can only be a new STX, so the frame before it is
reported as :class:`~drivers.codec.Garbage` and decoding restarts there; a bad CRC drops the STX
and searches for the next one.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.codec import Garbage, LocalProtocolError, Role, StreamDecoder, skip_to
from drivers.crc import crc16_ssp

STX = 0x7F
SEQ_FLAG = 0x80
MAX_DATA = 255
SERIAL = {"baudrate": 9600, "bytesize": 8, "parity": "N", "stopbits": 2}


class Command(enum.IntEnum):
    RESET = 0x01
    SET_CHANNEL_INHIBITS = 0x02
    SETUP_REQUEST = 0x05
    HOST_PROTOCOL_VERSION = 0x06
    POLL = 0x07
    REJECT_BANKNOTE = 0x08
    DISABLE = 0x09
    ENABLE = 0x0A
    GET_SERIAL_NUMBER = 0x0C
    SYNC = 0x11
    HOLD = 0x18
    SET_GENERATOR = 0x4A
    SET_MODULUS = 0x4B
    REQUEST_KEY_EXCHANGE = 0x4C


class Response(enum.IntEnum):
    OK = 0xF0
    UNKNOWN_COMMAND = 0xF2
    WRONG_PARAMETERS = 0xF3
    PARAMETER_OUT_OF_RANGE = 0xF4
    CANNOT_PROCESS = 0xF5
    SOFTWARE_ERROR = 0xF6
    FAIL = 0xF8
    KEY_NOT_SET = 0xFA


class PollEvent(enum.IntEnum):
    """Events in a POLL reply's data after OK (READ and CREDIT carry a channel byte)."""

    READ = 0xEF
    CREDIT = 0xEE
    REJECTING = 0xED
    REJECTED = 0xEC
    STACKING = 0xCC
    STACKED = 0xEB
    DISABLED = 0xE8
    STACKER_FULL = 0xE7


#: The first DATA byte of an eSSP-encrypted packet.
ENCRYPTED = 0x7E


@dataclass(frozen=True, slots=True)
class Packet:
    """One SSP packet: address, sequence flag and data; ``repeated`` on the device side when the
    host repeated its previous command's flag (resend the last reply, do not act again)."""

    address: int
    seq: bool
    data: bytes
    repeated: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.address <= 0x7F:
            raise ValueError(f"an SSP address is 0..127, not {self.address}")
        if len(self.data) > MAX_DATA:
            raise ValueError(f"SSP data holds at most {MAX_DATA} bytes")


def stuff(body: bytes) -> bytes:
    return body.replace(b"\x7f", b"\x7f\x7f")


def encode(address: int, seq: bool, data: bytes) -> bytes:
    Packet(address, seq, data)                       # validates
    body = bytes(((SEQ_FLAG if seq else 0) | address, len(data))) + data
    crc = crc16_ssp(body)
    return bytes((STX,)) + stuff(body + bytes((crc & 0xFF, crc >> 8)))


class SspCodec(StreamDecoder):
    """One end of an SSP link with its sequence state."""

    max_buffer = 2 * (3 + MAX_DATA + 2) + 1

    def __init__(self, role: Role, address: int = 0) -> None:
        super().__init__()
        if not 0 <= address <= 0x7F:
            raise LocalProtocolError(f"an SSP address is 0..127, not {address}")
        self.role = role
        self.address = address
        #: Host: the flag of the last command sent (the first command is sent with the flag set).
        self._seq = False
        #: Device: the flag of the last command received, and the last reply sent.
        self._last_seen: bool | None = None
        self.last_reply: bytes | None = None

    # --- sending ------------------------------------------------------------------------------
    def command(self, data: bytes) -> bytes:
        """Host: a new command (the sequence flag toggles)."""
        self._require(Role.HOST)
        self._seq = not self._seq
        return encode(self.address, self._seq, data)

    def repeat(self, data: bytes) -> bytes:
        """Host: the last command again, same flag (its reply was lost)."""
        self._require(Role.HOST)
        return encode(self.address, self._seq, data)

    def reply(self, data: bytes) -> bytes:
        """Device: the answer to the last command received, with its flag; kept for resending."""
        self._require(Role.DEVICE)
        if self._last_seen is None:
            raise LocalProtocolError("the device replies only to a command")
        self.last_reply = encode(self.address, self._last_seen, data)
        return self.last_reply

    @property
    def expected_seq(self) -> bool:
        """Host: the flag a reply to the last command must carry."""
        return self._seq

    def _require(self, role: Role) -> None:
        if self.role is not role:
            raise LocalProtocolError(f"only the {role.value} does that in SSP")

    # --- receiving ----------------------------------------------------------------------------
    def _decode(self, buffer: bytearray) -> tuple[int, Packet | Garbage | None]:
        if buffer[0] != STX:
            return skip_to(buffer, STX, "bytes before STX")
        body = bytearray()
        i, n = 1, len(buffer)
        while True:
            if len(body) >= 2 and len(body) == 2 + body[1] + 2:
                break
            if i >= n:
                return 0, None
            b = buffer[i]
            if b == STX:
                if i + 1 >= n:
                    return 0, None
                if buffer[i + 1] != STX:               # a lone 0x7F: a new frame starts here
                    return i, Garbage(bytes(buffer[:i]), "frame cut short by a new STX")
                i += 2
            else:
                i += 1
            body.append(b)
        crc = body[-2] | body[-1] << 8
        if crc16_ssp(bytes(body[:-2])) != crc:
            return skip_to(buffer, STX, "bad CRC")
        seq = bool(body[0] & SEQ_FLAG)
        address = body[0] & 0x7F
        data = bytes(body[2:-2])
        repeated = False
        if self.role is Role.DEVICE:
            repeated = self._last_seen is not None and seq == self._last_seen
            self._last_seen = seq
        return i, Packet(address, seq, data, repeated)
