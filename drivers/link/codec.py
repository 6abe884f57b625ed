"""The product link: this product's framing for its own devices (card-reading shoe, I/O board).

Specified in ``docs/protocols/link.md``. Frame::

    +------+-----+-------+-------+------+-------------+-------+-------+
    | STX  | LEN | SEQ_H | SEQ_L | TYPE | PAYLOAD ... | CRC_L | CRC_H |
    | 0x02 |     |       |       |      | LEN-3 bytes |       |       |
    +------+-----+-------+-------+------+-------------+-------+-------+

LEN counts SEQ_H..PAYLOAD (3..255). SEQ is the sender's 16-bit sequence number of a reliable
frame (1..65535, wrapping to 1), 0 for an unsequenced one (acknowledgements, status answers).
CRC-16/KERMIT over STX..PAYLOAD, low byte first. No byte stuffing: resynchronisation finds the next
STX whose LEN and CRC agree. Serial: 115200 baud 8N1.

This module only frames; :mod:`drivers.link.reliable` adds acknowledgement, re-sending and
de-duplication, and each device has its own message table (``drivers/shoe/messages.py``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.codec import Garbage, StreamDecoder, skip_to
from drivers.crc import crc16_kermit

STX = 0x02
HEADER = 2                      # STX, LEN
MIN_LEN = 3                     # SEQ_H, SEQ_L, TYPE
MAX_LEN = 255
MAX_PAYLOAD = MAX_LEN - MIN_LEN
MAX_SEQ = 0xFFFF
SERIAL = {"baudrate": 115200, "bytesize": 8, "parity": "N", "stopbits": 1}


class LinkType(enum.IntEnum):
    """Frame types every product-link device shares (0x01-0x0F)."""

    ACK = 0x01              #: payload: the 2-byte SEQ acknowledged (cumulative: all up to it)
    RESEND_FROM = 0x02      #: payload: the 2-byte SEQ to re-send from (a gap, or a reconnect)
    HELLO = 0x03            #: device -> host after power-up or reconnect: kind, version, next SEQ
    STATUS_REQUEST = 0x04
    STATUS = 0x05
    RESET = 0x06            #: host -> device: forget everything, start sequences at 1
    NAK = 0x07              #: payload: the 2-byte SEQ refused and a reason byte


@dataclass(frozen=True, slots=True)
class LinkFrame:
    seq: int
    type: int
    payload: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.seq <= MAX_SEQ:
            raise ValueError(f"a link SEQ is 0..{MAX_SEQ}, not {self.seq}")
        if not 0 <= self.type <= 0xFF:
            raise ValueError(f"a link TYPE is one byte, not {self.type}")
        if len(self.payload) > MAX_PAYLOAD:
            raise ValueError(f"a link payload holds at most {MAX_PAYLOAD} bytes")


def encode(frame: LinkFrame) -> bytes:
    body = bytes((STX, MIN_LEN + len(frame.payload), frame.seq >> 8, frame.seq & 0xFF,
                  frame.type)) + frame.payload
    crc = crc16_kermit(body)
    return body + bytes((crc & 0xFF, crc >> 8))


def seq_bytes(seq: int) -> bytes:
    return bytes((seq >> 8, seq & 0xFF))


def seq_of(payload: bytes) -> int | None:
    """The 2-byte SEQ at the start of an ACK / RESEND_FROM / NAK payload, or None if too short."""
    return payload[0] << 8 | payload[1] if len(payload) >= 2 else None


class LinkCodec(StreamDecoder):
    """Framing only: bytes in, :class:`LinkFrame` or :class:`Garbage` out; ``encode`` for out."""

    max_buffer = 4 * (HEADER + MAX_LEN + 2)

    def _decode(self, buffer: bytearray) -> tuple[int, LinkFrame | Garbage | None]:
        if buffer[0] != STX:
            return skip_to(buffer, STX, "bytes before STX")
        if len(buffer) < HEADER:
            return 0, None
        length = buffer[1]
        if length < MIN_LEN:
            return skip_to(buffer, STX, f"frame length {length} is below {MIN_LEN}")
        total = HEADER + length + 2
        if len(buffer) < total:
            return 0, None
        crc = buffer[total - 2] | buffer[total - 1] << 8
        if crc16_kermit(bytes(buffer[: total - 2])) != crc:
            return skip_to(buffer, STX, "bad CRC")
        seq = buffer[2] << 8 | buffer[3]
        return total, LinkFrame(seq, buffer[4], bytes(buffer[5 : total - 2]))
