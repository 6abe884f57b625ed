"""The shoe's unsequenced link messages: the HELLO and STATUS payloads (``docs/protocols/shoe.md``).

The product link leaves both payloads to each device. The shoe's, all big-endian::

    HELLO   +------+-------+-------+--------+--------+-------+
            | KIND | MAJOR | MINOR | NEXT_H | NEXT_L | CAUSE |      6 bytes
            +------+-------+-------+--------+--------+-------+
    STATUS  +-------+--------+--------+--------+--------+---------+
            | FLAGS | LEFT_H | LEFT_L | NEXT_H | NEXT_L | PENDING |  6 bytes
            +-------+--------+--------+--------+--------+---------+

KIND 0x01 is a card-reading shoe. NEXT is the SEQ the shoe's next reliable frame will carry.
CAUSE says why the HELLO was sent: 0 power-up (the shoe lost its state: sequences restart at 1 and
frames it had not had acknowledged are gone), 1 reconnect (state kept: the host asks RESEND_FROM its
next expected SEQ), 2 the answer to the host's RESET. FLAGS: bit 0 door open, bit 1 empty, bit 2
the cut card is out, bit 3 the window is full (the shoe refuses to report another card; its lamp
is lit). LEFT: cards still in the shoe; PENDING: reliable frames awaiting acknowledgement.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.link.codec import MAX_SEQ

SHOE_KIND = 0x01
HELLO_SIZE = 6
STATUS_SIZE = 6


class HelloCause(enum.IntEnum):
    POWER_UP = 0          #: state lost: the host treats the shoe as a new shoe
    RECONNECT = 1         #: state kept: the host asks for everything from its next expected SEQ
    RESET = 2             #: the answer to the host's RESET: both sides start at SEQ 1


@dataclass(frozen=True, slots=True)
class Hello:
    kind: int
    version: tuple[int, int]
    next_seq: int
    cause: HelloCause

    def __post_init__(self) -> None:
        if not 0 <= self.kind <= 0xFF or not all(0 <= v <= 0xFF for v in self.version):
            raise ValueError(f"HELLO: kind and version are bytes, not {self.kind}, {self.version}")
        if not 1 <= self.next_seq <= MAX_SEQ:
            raise ValueError(f"HELLO: next SEQ is 1..{MAX_SEQ}, not {self.next_seq}")

    @property
    def state_lost(self) -> bool:
        return self.cause is not HelloCause.RECONNECT

    def encode(self) -> bytes:
        return bytes((self.kind, *self.version, self.next_seq >> 8, self.next_seq & 0xFF,
                      self.cause))

    @classmethod
    def decode(cls, payload: bytes) -> Hello:
        """A HELLO from its payload; ``ValueError`` for a malformed one."""
        if len(payload) != HELLO_SIZE:
            raise ValueError(f"HELLO: expected {HELLO_SIZE} bytes, not {payload.hex(' ')!r}")
        try:
            cause = HelloCause(payload[5])
        except ValueError:
            raise ValueError(f"HELLO: unknown cause {payload[5]}") from None
        return cls(payload[0], (payload[1], payload[2]), payload[3] << 8 | payload[4], cause)


_DOOR, _EMPTY, _CUT, _FULL = 0x01, 0x02, 0x04, 0x08


@dataclass(frozen=True, slots=True)
class ShoeState:
    """What a STATUS frame says."""

    door_open: bool = False
    empty: bool = False
    cut_card: bool = False
    window_full: bool = False
    left: int = 0
    next_seq: int = 1
    pending: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.left <= 0xFFFF or not 0 <= self.pending <= 0xFF:
            raise ValueError(f"STATUS: bad counts left={self.left} pending={self.pending}")
        if not 1 <= self.next_seq <= MAX_SEQ:
            raise ValueError(f"STATUS: next SEQ is 1..{MAX_SEQ}, not {self.next_seq}")

    def encode(self) -> bytes:
        flags = ((_DOOR if self.door_open else 0) | (_EMPTY if self.empty else 0)
                 | (_CUT if self.cut_card else 0) | (_FULL if self.window_full else 0))
        return bytes((flags, self.left >> 8, self.left & 0xFF, self.next_seq >> 8,
                      self.next_seq & 0xFF, self.pending))

    @classmethod
    def decode(cls, payload: bytes) -> ShoeState:
        """A status from its payload; ``ValueError`` for a malformed one."""
        if len(payload) != STATUS_SIZE:
            raise ValueError(f"STATUS: expected {STATUS_SIZE} bytes, not {payload.hex(' ')!r}")
        flags = payload[0]
        if flags & ~(_DOOR | _EMPTY | _CUT | _FULL):
            raise ValueError(f"STATUS: unknown flags 0x{flags:02X}")
        return cls(bool(flags & _DOOR), bool(flags & _EMPTY), bool(flags & _CUT),
                   bool(flags & _FULL), payload[1] << 8 | payload[2], payload[3] << 8 | payload[4],
                   payload[5])
