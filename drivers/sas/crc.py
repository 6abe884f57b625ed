"""The CRC of SAS messages: CRC-16/KERMIT, with the seed the ROM signature poll (0x21) supplies.

SAS computes its CRC with the polynomial x^16 + x^12 + x^5 + 1 taken LSB first (0x1021 reflected,
0x8408), no final xor, and appends it low byte first. Messages start from 0; long poll 0x21 asks
for the same CRC over the software image started from the host's seed, which is why this module
keeps its own table instead of the fixed-init calculator in ``drivers/crc.py``.
"""

from __future__ import annotations


def _table() -> tuple[int, ...]:
    rows = []
    for byte in range(256):
        value = byte
        for _ in range(8):
            value = (value >> 1) ^ 0x8408 if value & 1 else value >> 1
        rows.append(value)
    return tuple(rows)


_TABLE = _table()


def sas_crc(data: bytes, seed: int = 0) -> int:
    """CRC-16/KERMIT of ``data`` started from ``seed`` (0 for messages)."""
    crc = seed & 0xFFFF
    for byte in data:
        crc = (crc >> 8) ^ _TABLE[(crc ^ byte) & 0xFF]
    return crc


def crc_bytes(data: bytes, seed: int = 0) -> bytes:
    """The two CRC bytes SAS appends to ``data``, low byte first."""
    return sas_crc(data, seed).to_bytes(2, "little")


def with_crc(data: bytes) -> bytes:
    return data + crc_bytes(data)
