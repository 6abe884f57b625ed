"""SSP bill validator values both ends share: the SETUP_REQUEST answer, channel inhibits, reject codes.

SETUP_REQUEST (0x05) answer after OK, a note validator (ITL SSP manual GA138, "Setup Request")::

    unit type (1, 0x00 validator) | firmware version (4 ASCII) | country code (3 ASCII)
    | value multiplier (3, big-endian) | channels n (1) | channel values (n) | channel security (n)
    | real value multiplier (3, big-endian) | protocol version (1)
    [protocol >= 6: channel currencies (3n ASCII) | expanded channel values (4n, little-endian)]

A note's value in the currency's minor unit (cents) is its channel value times the real value
multiplier (this product's reading; the simulator sends multiplier 100 and channel values in whole
dollars). The driver reads the fixed part only.

SET_CHANNEL_INHIBITS (0x02): two bytes, bit ``i`` of the little-endian number is channel ``i + 1``;
a *set* bit *enables* the channel (all zero: nothing accepted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

UNIT_VALIDATOR = 0x00
MAX_CHANNELS = 16
#: The protocol version the driver asks for (HOST_PROTOCOL_VERSION 0x06).
PROTOCOL_VERSION = 6


@dataclass(frozen=True, slots=True)
class Setup:
    """A validator's SETUP_REQUEST answer (the fixed part)."""

    firmware: str
    country: str
    channel_values: tuple[int, ...]          #: channel 1 first, in whole units; 0: unused
    real_multiplier: int = 100
    protocol: int = PROTOCOL_VERSION
    unit_type: int = UNIT_VALIDATOR

    def __post_init__(self) -> None:
        if not 1 <= len(self.channel_values) <= MAX_CHANNELS:
            raise ValueError(f"a validator has 1..{MAX_CHANNELS} channels")
        if not all(0 <= v <= 0xFF for v in self.channel_values):
            raise ValueError("a channel value is one byte")
        if len(self.firmware) != 4 or len(self.country) != 3:
            raise ValueError("firmware is 4 characters, the country code 3")

    @property
    def notes(self) -> dict[int, int]:
        """Channel -> value in cents (unused channels left out)."""
        return {ch: v * self.real_multiplier for ch, v in enumerate(self.channel_values, 1) if v}


def encode_setup(setup: Setup, *, expanded: bool) -> bytes:
    n = len(setup.channel_values)
    out = bytes((setup.unit_type,)) + setup.firmware.encode("ascii") + setup.country.encode("ascii")
    out += (1).to_bytes(3, "big") + bytes((n,)) + bytes(setup.channel_values) + bytes([2] * n)
    out += setup.real_multiplier.to_bytes(3, "big") + bytes((setup.protocol,))
    if expanded:
        out += setup.country.encode("ascii") * n
        out += b"".join(v.to_bytes(4, "little") for v in setup.channel_values)
    return out


def parse_setup(data: bytes) -> Setup:
    """The fixed part of a SETUP_REQUEST answer; ``ValueError`` if it is malformed."""
    if len(data) < 12:
        raise ValueError(f"a setup answer is at least 12 bytes, not {len(data)}")
    n = data[11]
    end = 12 + 2 * n + 4
    if not 1 <= n <= MAX_CHANNELS or len(data) < end:
        raise ValueError(f"a setup answer for {n} channels is at least {end} bytes, not {len(data)}")
    try:
        firmware, country = data[1:5].decode("ascii"), data[5:8].decode("ascii")
    except UnicodeDecodeError:
        raise ValueError("firmware version or country code is not ASCII") from None
    return Setup(firmware=firmware, country=country, channel_values=tuple(data[12:12 + n]),
                 real_multiplier=int.from_bytes(data[12 + 2 * n:15 + 2 * n], "big"),
                 protocol=data[15 + 2 * n], unit_type=data[0])


#: The simulator's notes: US dollars on channels 1..7.
USD_SETUP = Setup(firmware="0100", country="USD", channel_values=(1, 2, 5, 10, 20, 50, 100))


def inhibit_mask(channels: Iterable[int]) -> bytes:
    """SET_CHANNEL_INHIBITS data enabling exactly ``channels`` (1..16)."""
    mask = 0
    for ch in channels:
        if not 1 <= ch <= MAX_CHANNELS:
            raise ValueError(f"an SSP channel is 1..{MAX_CHANNELS}, not {ch}")
        mask |= 1 << (ch - 1)
    return mask.to_bytes(2, "little")


def enabled_channels(mask: bytes) -> frozenset[int]:
    value = int.from_bytes(mask, "little")
    return frozenset(ch for ch in range(1, MAX_CHANNELS + 1) if value >> (ch - 1) & 1)


def channels_for_cents(notes: Mapping[int, int], denominations_cents: Iterable[int]) -> set[int]:
    """The channels of the notes worth ``denominations_cents``; ``ValueError`` if one is missing."""
    wanted = set(denominations_cents)
    missing = sorted(wanted - set(notes.values()))
    if missing:
        known = ", ".join(str(c) for c in sorted(set(notes.values())))
        raise ValueError(f"no note of {missing} cents in the validator's table ({known})")
    return {ch for ch, cents in notes.items() if cents in wanted}


#: LAST_REJECT_CODE (0x17) answers, numbered as ITL's "Reject Codes" table (GA138), as the public
#: hosts carry it: the npm package encrypted-smiley-secure-protocol (``src/reject_note.js``) and
#: ingonoka/cba9-driver (``RejectCode.kt``) agree on 0x00-0x1D. The labels are this product's.
REJECT_CODES: dict[int, str] = {
    0x00: "note accepted",
    0x01: "note length incorrect",
    0x02: "invalid note",                  # average fail: not recognised
    0x03: "invalid note",                  # coastline fail
    0x04: "invalid note",                  # graph fail
    0x05: "invalid note",                  # buried fail
    0x06: "channel inhibited",
    0x07: "second note inserted",
    0x08: "host rejected note",
    0x09: "cross channel detected",        # the note matches two channels of the dataset
    0x0A: "rear sensor error",
    0x0B: "note too long",
    0x0C: "disabled by host",
    0x0D: "mechanism slow or stalled",
    0x0E: "strimming attempt",
    0x0F: "fraud channel reject",
    0x10: "no notes inserted",
    0x11: "peak detect fail",
    0x12: "twisted note detected",
    0x13: "escrow time-out",
    0x14: "bar code scan fail",
    0x15: "note did not reach the note path",
    0x16: "slot fail 1",
    0x17: "slot fail 2",
    0x18: "lens oversample",
    0x19: "width detection fail",
    0x1A: "short note detected",
    0x1B: "payout note",
    0x1C: "double note detected",
    0x1D: "unable to stack",
}
