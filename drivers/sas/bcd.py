"""Packed BCD, the number format of SAS meters, amounts, dates and game numbers.

Two decimal digits a byte, most significant first. A meter wider than its field rolls over the way
an electromechanical meter does: only the low ``2 * width`` digits are sent.
"""

from __future__ import annotations


def rollover(value: int, width: int) -> int:
    """``value`` as a ``width``-byte BCD field shows it (the low ``2 * width`` digits)."""
    if value < 0:
        raise ValueError(f"a BCD field holds no negative number ({value})")
    modulus: int = 100**width
    return value % modulus


def to_bcd(value: int, width: int) -> bytes:
    """``value`` in ``width`` bytes of packed BCD, rolled over at the width."""
    digits = f"{rollover(value, width):0{2 * width}d}"
    return bytes.fromhex(digits)


def from_bcd(data: bytes) -> int:
    """The number in packed BCD ``data``; ValueError if a nibble is not a decimal digit."""
    text = data.hex()
    if not text.isdigit():
        raise ValueError(f"not packed BCD: {text}")
    return int(text) if text else 0
