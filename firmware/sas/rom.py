"""Long poll 0x21, ROM signature verification: the SAS CRC of the installed software, started from
the host's seed (SAS 6.02 section 6).

Which bytes: every file of the installed software, the files ``egm software manifest`` lists and
``egm software verify`` checks, in manifest order (sorted relative paths), each file's bytes one
after the other with nothing between them (docs/protocols/sas.md, "ROM signature").

The image is megabytes; the reply must start within 20 ms. The CRC has no final xor, so it is
linear: the CRC of the image from seed ``s`` is the CRC of the image from 0 xor the CRC of as many
zero bytes from ``s``. :class:`SoftwareImage` gives the first (the cabinet's adapter computes it
again whenever a file changed); the second is one pass over zeros per poll.
"""

from __future__ import annotations

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


def rom_signature(image_crc: int, length: int, seed: int) -> int:
    """The SAS CRC from ``seed`` of an image of ``length`` bytes whose CRC from 0 is ``image_crc``."""
    return image_crc ^ sas_crc(bytes(length), seed)


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
