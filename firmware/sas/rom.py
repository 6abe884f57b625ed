"""Long poll 0x21, ROM signature verification: the SAS CRC of the installed software, started from
the host's seed (SAS 6.02 section 6).

Which bytes: every file of the installed software, the files ``egm software manifest`` lists and
``egm software verify`` checks, in manifest order (sorted relative paths), each file's bytes one
after the other with nothing between them (docs/protocols/sas.md, "ROM signature").

The image is megabytes; the reply must start within 20 ms. The CRC has no final xor, so it is
linear: the CRC of the image from seed ``s`` is the CRC of the image from 0 xor the CRC of as many
zero bytes from ``s``, itself linear in ``s``. :class:`SoftwareImage` gives the first (the
cabinet's adapter computes it again whenever a file changed); the second is the image of ``s``
under a 16 x 16 bit matrix computed once per image length.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Protocol

from drivers.sas.crc import sas_crc
from drivers.sas.messages import RomSignature, RomSignatureRequest
from firmware.sas.responder import Handler


class SoftwareImage(Protocol):
    """The installed software as the ROM signature reads it."""

    def crc(self) -> tuple[int, int]:
        """(the SAS CRC of the image from seed 0, the image's length in bytes), as installed now."""
        ...


def _apply(columns: tuple[int, ...], value: int) -> int:
    """The linear map whose images of the 16 bits are ``columns``, applied to ``value``."""
    out = 0
    for bit, column in enumerate(columns):
        if value >> bit & 1:
            out ^= column
    return out


@functools.lru_cache(maxsize=4)
def _zeros_map(length: int) -> tuple[int, ...]:
    """The map seed -> CRC of ``length`` zero bytes from that seed (linear: the CRC of one zero
    byte is), as the images of the 16 bits, by squaring: a few milliseconds for megabytes."""
    result = tuple(1 << bit for bit in range(16))
    power = tuple(sas_crc(b"\x00", 1 << bit) for bit in range(16))
    while length:
        if length & 1:
            result = tuple(_apply(power, column) for column in result)
        power = tuple(_apply(power, column) for column in power)
        length >>= 1
    return result


def rom_signature(image_crc: int, length: int, seed: int) -> int:
    """The SAS CRC from ``seed`` of an image of ``length`` bytes whose CRC from 0 is ``image_crc``."""
    return image_crc ^ _apply(_zeros_map(length), seed & 0xFFFF)


class RomSignaturePoll:
    """Long poll 0x21 over ``image``."""

    def __init__(self, image: SoftwareImage) -> None:
        self.image = image

    def handlers(self) -> Mapping[int, Handler]:
        return {0x21: self._signature}

    def _signature(self, data: bytes) -> bytes:
        seed = RomSignatureRequest.decode(data).seed
        image_crc, length = self.image.crc()
        return RomSignature(rom_signature(image_crc, length, seed)).encode()
