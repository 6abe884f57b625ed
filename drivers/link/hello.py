"""The link's HELLO payload (``docs/protocols/link.md``, type 0x03): who the device is and why it
says HELLO. Every product-link device sends the same six bytes, all big-endian::

    +------+-------+-------+--------+--------+-------+
    | KIND | MAJOR | MINOR | NEXT_H | NEXT_L | CAUSE |      6 bytes
    +------+-------+-------+--------+--------+-------+

KIND names the device (0x01 the card-reading shoe, 0x02 the I/O board). NEXT is the SEQ the device's
next reliable frame will carry. CAUSE says why the HELLO was sent: 0 power-up (the device lost its
state: sequences restart at 1 and frames it had not had acknowledged are gone), 1 reconnect (state
kept: the host asks RESEND_FROM its next expected SEQ), 2 the answer to the host's RESET.

The link endpoint (``drivers/link/endpoint.py``) handles HELLO for every device, so it lives with the
link, not with one device on it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.link.codec import MAX_SEQ

HELLO_SIZE = 6


class HelloCause(enum.IntEnum):
    POWER_UP = 0          #: state lost: the host treats the device as a new one
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
