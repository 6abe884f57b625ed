"""The checksums of the wire protocols, from the ``crc`` library (pinned by golden frames)."""

from __future__ import annotations

from crc import Calculator, Configuration

#: CRC-16/KERMIT: poly 0x1021 reflected, init 0, no final xor (ID-003; the shoe and I/O board).
_KERMIT = Calculator(Configuration(width=16, polynomial=0x1021, init_value=0, final_xor_value=0,
                                   reverse_input=True, reverse_output=True), optimized=True)
#: CRC-16 poly 0x8005, init 0xFFFF, MSB first, no reflection, no final xor (ITL SSP).
_SSP = Calculator(Configuration(width=16, polynomial=0x8005, init_value=0xFFFF, final_xor_value=0,
                                reverse_input=False, reverse_output=False), optimized=True)


def crc16_kermit(data: bytes) -> int:
    return _KERMIT.checksum(data)


def crc16_ssp(data: bytes) -> int:
    return _SSP.checksum(data)
