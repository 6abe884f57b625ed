"""The shoe's unsequenced link messages: its HELLO kind and the STATUS payload (``docs/protocols/shoe.md``).

HELLO is the link's (:mod:`drivers.link.hello`, the same six bytes for every device); the shoe's
KIND is 0x01. The shoe's STATUS,
big-endian::

    STATUS  +-------+--------+--------+--------+--------+---------+
            | FLAGS | LEFT_H | LEFT_L | NEXT_H | NEXT_L | PENDING |  6 bytes
            +-------+--------+--------+--------+--------+---------+

NEXT is the SEQ the shoe's next reliable frame will carry. FLAGS: bit 0 door open, bit 1 empty,
bit 2 the cut card is out, bit 3 the window is full (the shoe refuses to report another card; its
lamp is lit). LEFT: cards still in the shoe; PENDING: reliable frames awaiting acknowledgement.
"""

from __future__ import annotations

from dataclasses import dataclass

from drivers.link.codec import MAX_SEQ
from drivers.link.hello import HELLO_SIZE

SHOE_KIND = 0x01
STATUS_SIZE = 6


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


__all__ = ["HELLO_SIZE", "SHOE_KIND", "STATUS_SIZE", "ShoeState"]
