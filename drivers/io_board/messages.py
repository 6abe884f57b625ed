"""The I/O board's messages on the product link (``docs/protocols/io-board.md``): types 0x40-0x5F.

Inputs are numbered by their bit in :data:`INPUTS` (0 main door .. 10 service button); the same
order gives the 16-bit input mask of SNAPSHOT and STATUS. All multi-byte fields are big-endian::

    INPUT        (0x40, board -> host, reliable)  | INPUT | STATE |         1 open / on / pressed
    SNAPSHOT     (0x41, board -> host, reliable)  | MASK_H | MASK_L |      every input, bit = INPUT
    TOWER        (0x50, host -> board, reliable)  | TIER | PATTERN |
    METER_PULSE  (0x51, host -> board, reliable)  | METER | COUNT_H | COUNT_L |
    BUTTON_LAMPS (0x52, host -> board, reliable)  | LAMPS |          bit = button's INPUT - 5

The board acknowledges METER_PULSE only once it has pulsed the meter COUNT times, and takes no
other host frame meanwhile, so an acknowledged pulse command is on the meter and an unacknowledged
one is re-sent and recognised as a duplicate: never lost, never doubled.

HELLO and STATUS (the link's common types) carry the board's payloads: HELLO as the shoe's
(:class:`drivers.link.hello.Hello`, KIND 0x02); STATUS in :class:`IoState`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from drivers.link.codec import MAX_SEQ
from hal.devices.io_board import TIERS, TowerPattern
from hal.events import Button, Door, KeySwitch

IO_KIND = 0x02
STATUS_SIZE = 7
MAX_PULSES = 0xFFFF
METERS = 16


class IoType(enum.IntEnum):
    # board -> host, reliable
    INPUT = 0x40
    SNAPSHOT = 0x41
    # host -> board, reliable
    TOWER = 0x50
    METER_PULSE = 0x51
    BUTTON_LAMPS = 0x52


HOST_COMMANDS = frozenset({IoType.TOWER, IoType.METER_PULSE, IoType.BUTTON_LAMPS})
BOARD_EVENTS = frozenset({IoType.INPUT, IoType.SNAPSHOT})

#: Every input of the board, in wire order (the input number is the index).
INPUTS: tuple[Door | KeySwitch | Button, ...] = (
    Door.MAIN, Door.CASH_BOX, Door.LOGIC,
    KeySwitch.AUDIT, KeySwitch.JACKPOT_RESET,
    Button.DEAL, Button.BET, Button.REPEAT, Button.CASH_OUT, Button.HELP, Button.SERVICE,
)
INPUT_NUMBER = {name: i for i, name in enumerate(INPUTS)}
BUTTONS: tuple[Button, ...] = tuple(i for i in INPUTS if isinstance(i, Button))
FIRST_BUTTON = INPUT_NUMBER[Button.DEAL]
ALL_INPUTS_MASK = (1 << len(INPUTS)) - 1


class Meter(enum.IntEnum):
    """The cabinet's electromechanical meters (METER numbers 0..15; these are fitted)."""

    COIN_IN = 0
    COIN_OUT = 1
    DROP = 2
    JACKPOT = 3
    GAMES_PLAYED = 4


@dataclass(frozen=True, slots=True)
class IoMessage:
    """One decoded message; the fields that apply to its type are set."""

    type: IoType
    input: Door | KeySwitch | Button | None = None
    state: bool = False
    mask: int = 0              #: SNAPSHOT inputs; BUTTON_LAMPS lamps
    tier: int = 0
    pattern: TowerPattern = TowerPattern.OFF
    meter: int = 0
    count: int = 0


def mask_of(states: dict[Door | KeySwitch | Button, bool]) -> int:
    return sum(1 << INPUT_NUMBER[name] for name, on in states.items() if on)


def states_of(mask: int) -> dict[Door | KeySwitch | Button, bool]:
    return {name: bool(mask >> i & 1) for i, name in enumerate(INPUTS)}


def lamps_mask(lit: frozenset[Button] | set[Button]) -> int:
    return sum(1 << (INPUT_NUMBER[b] - FIRST_BUTTON) for b in lit)


def lamps_of(mask: int) -> frozenset[Button]:
    return frozenset(b for i, b in enumerate(BUTTONS) if mask >> i & 1)


# --- encoding ---------------------------------------------------------------------------------
def input_payload(name: Door | KeySwitch | Button, state: bool) -> bytes:
    return bytes((INPUT_NUMBER[name], 1 if state else 0))


def snapshot_payload(mask: int) -> bytes:
    if not 0 <= mask <= ALL_INPUTS_MASK:
        raise ValueError(f"SNAPSHOT: input mask 0x{mask:X} names unknown inputs")
    return mask.to_bytes(2, "big")


def tower_payload(tier: int, pattern: TowerPattern) -> bytes:
    if not 0 <= tier < TIERS:
        raise ValueError(f"TOWER: tier is 0..{TIERS - 1}, not {tier}")
    return bytes((tier, TowerPattern(pattern)))


def meter_payload(meter: int, count: int) -> bytes:
    if not 0 <= meter < METERS:
        raise ValueError(f"METER_PULSE: meter is 0..{METERS - 1}, not {meter}")
    if not 1 <= count <= MAX_PULSES:
        raise ValueError(f"METER_PULSE: count is 1..{MAX_PULSES}, not {count}")
    return bytes((meter,)) + count.to_bytes(2, "big")


def lamps_payload(lit: frozenset[Button] | set[Button]) -> bytes:
    return bytes((lamps_mask(lit),))


# --- decoding ---------------------------------------------------------------------------------
def _size(kind: IoType, payload: bytes, size: int) -> None:
    if len(payload) != size:
        raise ValueError(f"{kind.name}: expected {size} bytes, not {payload.hex(' ')!r}")


def decode(type_: int, payload: bytes) -> IoMessage:
    """An I/O board message from a frame's type and payload; ValueError for a malformed one."""
    try:
        kind = IoType(type_)
    except ValueError:
        raise ValueError(f"unknown I/O board message type 0x{type_:02X}") from None
    if kind is IoType.INPUT:
        _size(kind, payload, 2)
        if payload[0] >= len(INPUTS) or payload[1] > 1:
            raise ValueError(f"INPUT: bad input {payload[0]} or state {payload[1]}")
        return IoMessage(kind, input=INPUTS[payload[0]], state=bool(payload[1]))
    if kind is IoType.SNAPSHOT:
        _size(kind, payload, 2)
        mask = int.from_bytes(payload, "big")
        if mask & ~ALL_INPUTS_MASK:
            raise ValueError(f"SNAPSHOT: mask 0x{mask:04X} names unknown inputs")
        return IoMessage(kind, mask=mask)
    if kind is IoType.TOWER:
        _size(kind, payload, 2)
        if payload[0] >= TIERS or payload[1] not in TowerPattern._value2member_map_:
            raise ValueError(f"TOWER: bad tier {payload[0]} or pattern {payload[1]}")
        return IoMessage(kind, tier=payload[0], pattern=TowerPattern(payload[1]))
    if kind is IoType.METER_PULSE:
        _size(kind, payload, 3)
        count = payload[1] << 8 | payload[2]
        if payload[0] >= METERS or count == 0:
            raise ValueError(f"METER_PULSE: bad meter {payload[0]} or count {count}")
        return IoMessage(kind, meter=payload[0], count=count)
    _size(kind, payload, 1)
    if payload[0] >> len(BUTTONS):
        raise ValueError(f"BUTTON_LAMPS: mask 0x{payload[0]:02X} names unknown buttons")
    return IoMessage(kind, mask=payload[0])


@dataclass(frozen=True, slots=True)
class IoState:
    """What a STATUS frame says: | MASK_H | MASK_L | NEXT_H | NEXT_L | PENDING | LEFT_H | LEFT_L |
    (inputs, the board's next SEQ, its unacknowledged frames, pulses left of the current meter
    command)."""

    inputs: int = 0
    next_seq: int = 1
    pending: int = 0
    pulses_left: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.inputs <= ALL_INPUTS_MASK:
            raise ValueError(f"STATUS: input mask 0x{self.inputs:X} names unknown inputs")
        if not 1 <= self.next_seq <= MAX_SEQ:
            raise ValueError(f"STATUS: next SEQ is 1..{MAX_SEQ}, not {self.next_seq}")
        if not 0 <= self.pending <= 0xFF or not 0 <= self.pulses_left <= MAX_PULSES:
            raise ValueError(f"STATUS: bad counts {self.pending}, {self.pulses_left}")

    def is_on(self, name: Door | KeySwitch | Button) -> bool:
        return bool(self.inputs >> INPUT_NUMBER[name] & 1)

    def encode(self) -> bytes:
        return (self.inputs.to_bytes(2, "big") + self.next_seq.to_bytes(2, "big")
                + bytes((self.pending,)) + self.pulses_left.to_bytes(2, "big"))

    @classmethod
    def decode(cls, payload: bytes) -> IoState:
        if len(payload) != STATUS_SIZE:
            raise ValueError(f"STATUS: expected {STATUS_SIZE} bytes, not {payload.hex(' ')!r}")
        return cls(payload[0] << 8 | payload[1], payload[2] << 8 | payload[3], payload[4],
                   payload[5] << 8 | payload[6])
