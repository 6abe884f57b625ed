"""What the two SP 800-90A mechanisms share (``hmac_drbg.py``, ``ctr_drbg.py``).

The limits that Rev. 1 gives both HMAC_DRBG (table 2, SHA-256) and CTR_DRBG (table 3, AES-256 with
a derivation function) the same value, the length checks on every input, the reseed counter and
interval, the checks that open a generate request (step 1 of 10.1.2.5 and 10.2.1.5.2), and
Uninstantiate (9.4): every violation raises :class:`~firmware.rng.errors.DrbgError` (the spec's
ERROR_FLAG), a request past the reseed interval :class:`~firmware.rng.errors.ReseedRequired`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from firmware.rng.errors import DrbgError, ReseedRequired

#: Security strength of both instantiations, in bits.
SECURITY_STRENGTH_BITS = 256
#: Minimum entropy input: the security strength.
MIN_ENTROPY_BYTES = SECURITY_STRENGTH_BITS // 8
#: Minimum nonce: half the security strength (8.6.7).
MIN_NONCE_BYTES = SECURITY_STRENGTH_BITS // 16
#: Maximum entropy input, personalization string and additional input: 2^35 bits.
MAX_INPUT_BYTES = 2**35 // 8
#: Maximum number of bytes one generate request may return: 2^19 bits.
MAX_REQUEST_BYTES = 2**19 // 8
#: Largest reseed interval SP 800-90A allows both mechanisms: 2^48 generate requests.
MAX_RESEED_INTERVAL = 2**48


def checked_input(value: bytes | bytearray | memoryview, what: str, minimum: int = 0) -> bytes:
    """``value`` as bytes, after the SP 800-90A length checks for ``what``."""
    data = bytes(value)
    if len(data) > MAX_INPUT_BYTES:
        raise DrbgError(f"{what} is {len(data)} bytes, more than the maximum {MAX_INPUT_BYTES}")
    if len(data) < minimum:
        raise DrbgError(f"{what} is {len(data)} bytes, less than the minimum {minimum}")
    return data


def checked_seed(entropy: bytes, nonce: bytes, personalization: bytes) -> tuple[bytes, bytes, bytes]:
    """The instantiate inputs after their length checks (entropy input and nonce have minimums)."""
    return (
        checked_input(entropy, "entropy input", MIN_ENTROPY_BYTES),
        checked_input(nonce, "nonce", MIN_NONCE_BYTES),
        checked_input(personalization, "personalization string"),
    )


class DrbgState(ABC):
    """The reseed counter and interval, the generate preamble and zeroisation of one DRBG.

    A mechanism subclasses it, keeps its secret state in ``bytearray`` objects that
    :meth:`_secrets` returns, and sets ``_reseed_counter`` to 1 when it is instantiated.
    """

    __slots__ = ("_reseed_counter", "_reseed_interval", "_zeroized")

    def __init__(self, reseed_interval: int) -> None:
        if not 1 <= reseed_interval <= MAX_RESEED_INTERVAL:
            raise DrbgError(f"reseed_interval must be between 1 and 2**48, not {reseed_interval}")
        self._reseed_interval = reseed_interval
        self._reseed_counter = 1
        self._zeroized = False

    @property
    def reseed_counter(self) -> int:
        """Generate requests since instantiation or the last reseed, plus one."""
        return self._reseed_counter

    @property
    def reseed_interval(self) -> int:
        """The most generate requests allowed between reseeds."""
        return self._reseed_interval

    @abstractmethod
    def _secrets(self) -> tuple[bytearray, ...]:
        """The working state's secret buffers (overwritten by zeroize)."""

    def _check_usable(self) -> None:
        if self._zeroized:
            raise DrbgError("the DRBG has been zeroised and cannot be used any more")

    def _start_generate(self, nbytes: int, additional_input: bytes) -> bytes:
        """The checks before a generate request; the checked additional input.

        :class:`DrbgError` after :meth:`zeroize` or for a request over :data:`MAX_REQUEST_BYTES`;
        :class:`ReseedRequired` when ``reseed_counter > reseed_interval`` (step 1).
        """
        self._check_usable()
        if not 0 <= nbytes <= MAX_REQUEST_BYTES:
            raise DrbgError(
                f"a request must be between 0 and {MAX_REQUEST_BYTES} bytes, not {nbytes}"
            )
        additional_input = checked_input(additional_input, "additional input")
        if self._reseed_counter > self._reseed_interval:
            raise ReseedRequired(
                f"the DRBG needs a reseed after {self._reseed_interval} generate requests"
            )
        return additional_input

    def zeroize(self) -> None:
        """Uninstantiate (9.4): overwrite the secret state with zeros; every later call raises."""
        for secret in self._secrets():
            secret[:] = bytes(len(secret))
        self._zeroized = True
