"""The CRC of SAS messages: CRC-16/KERMIT, with the seed the ROM signature poll (0x21) supplies.

SAS computes its CRC with the polynomial x^16 + x^12 + x^5 + 1 taken LSB first (0x1021 reflected,
0x8408), no final xor, and appends it low byte first. Messages start from 0; long poll 0x21 asks
for the same CRC over the software image started from the host's seed, which is why this module
keeps its own calculation instead of the fixed-init calculator in ``drivers/crc.py``.
"""

from __future__ import annotations

import binascii

#: Each byte with its bits in reverse order.
_REVERSED = bytes(int(f"{byte:08b}"[::-1], 2) for byte in range(256))


def _reverse16(value: int) -> int:
    return int(f"{value & 0xFFFF:016b}"[::-1], 2)


def sas_crc(data: bytes, seed: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` started from ``seed`` (0 for messages).

    KERMIT is the CCITT polynomial taken LSB first; it equals the MSB-first CCITT CRC
    (``binascii.crc_hqx``, in C) of the bit-reversed bytes from the bit-reversed seed, bit-reversed
    (the ROM signature runs over megabytes, which a Python loop takes a tenth of a second for).
    """
    return _reverse16(binascii.crc_hqx(bytes(data).translate(_REVERSED), _reverse16(seed)))


def crc_bytes(data: bytes, seed: int = 0) -> bytes:
    """The two CRC bytes SAS appends to ``data``, low byte first."""
    return sas_crc(data, seed).to_bytes(2, "little")


def with_crc(data: bytes) -> bytes:
    return data + crc_bytes(data)
