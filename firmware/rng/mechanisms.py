"""The DRBG mechanisms the terminal can run, by configuration name.

==============  ================================================  ==========================
name            mechanism (SP 800-90A Rev. 1)                     service request (bytes)
==============  ================================================  ==========================
``hmac-drbg``   HMAC_DRBG, SHA-256 (10.1.2), the default          1,024
``ctr-drbg``    CTR_DRBG, AES-256 with the derivation function    65,536 (the maximum request)
                (10.2.1)
==============  ================================================  ==========================

Both offer the same interface (:class:`Drbg`), the same 256-bit security strength, the same
entropy input and nonce sizes from the health-tested source, and a reseed interval of at most
2^48 generate requests. The service asks each mechanism for :attr:`Mechanism.block_bytes` per
generate request: HMAC_DRBG keeps its 1 KiB requests (so every seeded stream and replay stays as
it was); CTR_DRBG asks for its largest request, one AES-CTR keystream of 4,099 blocks, which is
what makes it fast.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from firmware.rng import drbg_common, hmac_drbg
from firmware.rng.errors import RngError


class Drbg(Protocol):
    """What :class:`~firmware.rng.service.RngService` and the KAT runner ask of a DRBG."""

    @property
    def reseed_counter(self) -> int: ...

    @property
    def reseed_interval(self) -> int: ...

    def reseed(self, entropy: bytes, additional_input: bytes = b"") -> None: ...

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes: ...

    def zeroize(self) -> None: ...


@dataclass(frozen=True)
class Mechanism:
    """One DRBG mechanism: how to instantiate it and how the service drives it."""

    name: str
    title: str
    #: ``factory(entropy, nonce, personalization, reseed_interval=...)`` instantiates it.
    factory: Callable[..., Drbg]
    #: Bytes the service asks for per generate request.
    block_bytes: int
    #: Largest reseed interval SP 800-90A allows (generate requests).
    max_reseed_interval: int


def _ctr_drbg(*args: Any, **kwargs: Any) -> Drbg:
    """A ``CtrDrbg``, imported when first used (``cryptography``'s AES costs about 10 ms to load)."""
    from firmware.rng.ctr_drbg import CtrDrbg

    return CtrDrbg(*args, **kwargs)


HMAC_DRBG = Mechanism("hmac-drbg", "HMAC_DRBG (SHA-256)", hmac_drbg.HmacDrbg, 1024,
                      hmac_drbg.MAX_RESEED_INTERVAL)
CTR_DRBG = Mechanism("ctr-drbg", "CTR_DRBG (AES-256, derivation function)", _ctr_drbg,
                     drbg_common.MAX_REQUEST_BYTES, drbg_common.MAX_RESEED_INTERVAL)

#: Every mechanism by name, the default first.
MECHANISMS: dict[str, Mechanism] = {m.name: m for m in (HMAC_DRBG, CTR_DRBG)}
#: The mechanism used when the configuration does not say.
DEFAULT_MECHANISM = HMAC_DRBG.name


class UnknownMechanism(RngError, ValueError):
    """A mechanism name that is not one of :data:`MECHANISMS`."""


def mechanism(name: str) -> Mechanism:
    """The mechanism called ``name``; :class:`UnknownMechanism` (one line) otherwise."""
    try:
        return MECHANISMS[name]
    except (KeyError, TypeError):
        raise UnknownMechanism(
            f"unknown RNG mechanism {name!r}: choose {' or '.join(MECHANISMS)}"
        ) from None
