"""The certified RNG: SP 800-90A HMAC_DRBG and CTR_DRBG, SP 800-90B health tests, unbiased integers,
shuffles.

``CtrDrbg`` is imported from ``firmware.rng.ctr_drbg`` itself (it loads AES from ``cryptography``,
which a terminal running the default HMAC_DRBG need not pay for at start).

Games never use this package directly: they draw through a card source
(``firmware.cards.source``) that holds the terminal's one :class:`RngService`.
"""

from firmware.rng.errors import (
    DrbgError,
    EntropyError,
    KatFileError,
    ReseedRequired,
    RngError,
    RngRangeError,
)
from firmware.rng.hmac_drbg import HmacDrbg
from firmware.rng.service import RngService

__all__ = [
    "DrbgError",
    "EntropyError",
    "HmacDrbg",
    "KatFileError",
    "ReseedRequired",
    "RngError",
    "RngRangeError",
    "RngService",
]
