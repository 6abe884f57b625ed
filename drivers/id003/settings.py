"""ID-003 setting values both ends agree on: the currency table, the enable mask, the inhibits.

These are the data of the setting commands (0xC0-0xC7, read back with 0x80-0x8A). The driver
encodes them, the simulator decodes them, so both sides use this one module.

Currency assignment (answer to 0x8A, ``GET_CURRENCY_ASSIGNMENT``): four bytes per denomination::

    +-------------+--------------+------+----------+
    | escrow code | country code | base | exponent |     value = base * 10 ** exponent
    +-------------+--------------+------+----------+     (whole units of the currency)

The simulator's table is US dollars (country code 0x01):

    ====  ======      ====  ======
    code  value       code  value
    ====  ======      ====  ======
    0x61  $1          0x65  $20
    0x62  $2          0x66  $50
    0x63  $5          0x67  $100
    0x64  $10
    ====  ======      ====  ======

Enable mask (0xC0, ``SET_ENABLE``): two bytes, little-endian; bit ``i`` stands for escrow code
``0x61 + i`` and a *set* bit *disables* that denomination (all zero: every note accepted).

Inhibit (0xC3): 0x00 accepting allowed (the validator idles), 0x01 inhibited (DISABLED).

Barcode function (0xC6): type 0x01 (Interleaved 2 of 5), length 0x12 (18 digits); type 0x00
means no tickets. Barcode inhibit (0xC7): bit 0 set inhibits notes, bit 1 set inhibits tickets,
the other bits are set (0xFC: notes and tickets, 0xFE: notes only, 0xFD: tickets only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from drivers.id003.codec import NOTE_CODES


@dataclass(frozen=True, slots=True)
class Denomination:
    """One row of the currency assignment table."""

    code: int
    country: int
    base: int
    exponent: int

    def __post_init__(self) -> None:
        if self.code not in NOTE_CODES:
            raise ValueError(f"a note escrow code is 0x61-0x68, not 0x{self.code:02X}")
        if not (0 <= self.country <= 0xFF and 1 <= self.base <= 0xFF and 0 <= self.exponent <= 6):
            raise ValueError(f"bad currency table row {self}")

    @property
    def value(self) -> int:
        """Whole units of the currency (dollars)."""
        return self.base * int(10 ** self.exponent)    # 0 <= exponent: a whole number

    @property
    def cents(self) -> int:
        return self.value * 100


COUNTRY_USA = 0x01

#: The simulator's currency table (US dollars).
USD_TABLE: tuple[Denomination, ...] = (
    Denomination(0x61, COUNTRY_USA, 1, 0),
    Denomination(0x62, COUNTRY_USA, 2, 0),
    Denomination(0x63, COUNTRY_USA, 5, 0),
    Denomination(0x64, COUNTRY_USA, 1, 1),
    Denomination(0x65, COUNTRY_USA, 2, 1),
    Denomination(0x66, COUNTRY_USA, 5, 1),
    Denomination(0x67, COUNTRY_USA, 1, 2),
)


def encode_assignment(table: Iterable[Denomination]) -> bytes:
    return b"".join(bytes((d.code, d.country, d.base, d.exponent)) for d in table)


def parse_assignment(data: bytes) -> tuple[Denomination, ...]:
    """The rows of a 0x8A answer; ``ValueError`` if it is malformed."""
    if not data or len(data) % 4:
        raise ValueError(f"a currency assignment is 4 bytes per note, not {len(data)} bytes")
    rows = tuple(Denomination(*data[i:i + 4]) for i in range(0, len(data), 4))
    if len({r.code for r in rows}) != len(rows):
        raise ValueError("a currency assignment lists an escrow code twice")
    return rows


def notes_in_cents(table: Iterable[Denomination]) -> dict[int, int]:
    """Escrow code -> value in cents."""
    return {d.code: d.cents for d in table}


#: Every note enabled.
ALL_ENABLED = b"\x00\x00"


def enable_mask(enabled_codes: Iterable[int]) -> bytes:
    """The SET_ENABLE data that accepts exactly ``enabled_codes`` (a set bit disables)."""
    enabled = set(enabled_codes)
    unknown = enabled - set(NOTE_CODES)
    if unknown:
        raise ValueError(f"not note escrow codes: {sorted(unknown)}")
    disabled = 0
    for i, code in enumerate(NOTE_CODES):
        if code not in enabled:
            disabled |= 1 << i
    return disabled.to_bytes(2, "little")


def enabled_codes(mask: bytes) -> frozenset[int]:
    """The escrow codes a SET_ENABLE mask accepts."""
    disabled = int.from_bytes(mask, "little")
    return frozenset(code for i, code in enumerate(NOTE_CODES) if not disabled >> i & 1)


def codes_for_cents(notes: Mapping[int, int], denominations_cents: Iterable[int]) -> set[int]:
    """The escrow codes of the notes worth ``denominations_cents``; ``ValueError`` if one is missing."""
    by_value = {cents: code for code, cents in notes.items()}
    wanted = set(denominations_cents)
    missing = sorted(wanted - set(by_value))
    if missing:
        known = ", ".join(str(c) for c in sorted(by_value))
        raise ValueError(f"no note of {missing} cents in the validator's table ({known})")
    return {by_value[cents] for cents in wanted}


INHIBIT_OFF = b"\x00"
INHIBIT_ON = b"\x01"

BARCODE_TYPE_INTERLEAVED_2_OF_5 = 0x01
TICKET_DIGITS = 18
#: SET_BARCODE_FUNCTION data the driver sends: Interleaved 2 of 5, 18 digits.
BARCODE_FUNCTION = bytes((BARCODE_TYPE_INTERLEAVED_2_OF_5, TICKET_DIGITS))
#: No ticket reading (the simulator's power-up value).
BARCODE_OFF = b"\x00\x00"

_INHIBIT_NOTES = 0x01
_INHIBIT_TICKETS = 0x02


def barcode_inhibit(*, notes: bool, tickets: bool) -> bytes:
    """SET_BARCODE_INHIBIT data accepting ``notes`` and/or ``tickets``."""
    value = 0xFC | (0 if notes else _INHIBIT_NOTES) | (0 if tickets else _INHIBIT_TICKETS)
    return bytes((value,))


def accepts_notes(barcode_inhibit_data: bytes) -> bool:
    return not barcode_inhibit_data[0] & _INHIBIT_NOTES


def accepts_tickets(barcode_inhibit_data: bytes) -> bool:
    return not barcode_inhibit_data[0] & _INHIBIT_TICKETS


#: FAILURE (0x49) data: what failed.
FAILURE_CODES = {
    0xA2: "stack motor failure",
    0xA5: "transport motor speed failure",
    0xA6: "transport motor failure",
    0xAB: "cash box not ready",
    0xAF: "validator head removed",
    0xB0: "boot ROM failure",
    0xB1: "external ROM failure",
    0xB2: "ROM failure",
    0xB3: "external ROM write failure",
}
