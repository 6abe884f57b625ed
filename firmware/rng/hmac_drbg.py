"""HMAC_DRBG with SHA-256, exactly as NIST SP 800-90A Rev. 1, section 10.1.2.

This module is pure and deterministic: it never reads the clock, the OS or a file. Entropy input
and nonce are handed in by the caller (``firmware.rng.service`` takes them from the health-tested
OS entropy source). Prediction resistance is not offered (the terminal reseeds explicitly, see
``RngService.reseed``); this matches the CAVP ``PredictionResistance = False`` vectors the KAT
runner checks (``firmware.rng.kat``).

Parameters (SP 800-90A Rev. 1, Table 2, HMAC_DRBG with SHA-256; security strength 256 bits):

============================================  ==========================================
highest supported security strength           256 bits
outlen (HMAC output = length of K and V)      256 bits (32 bytes)
min entropy input length                      security strength = 256 bits (32 bytes)
max entropy input length                      2^35 bits (2^32 bytes)
nonce (8.6.7)                                  at least security_strength / 2 = 128 bits (16 bytes)
max personalization string length             2^35 bits
max additional input length                   2^35 bits
max number of bits per request                2^19 bits (65,536 bytes)
max reseed interval (generate requests)       2^48
============================================  ==========================================

Every violation raises :class:`~firmware.rng.errors.DrbgError` (the spec's ERROR_FLAG); a
generate request past the reseed interval raises :class:`~firmware.rng.errors.ReseedRequired`
(the spec's "reseed required" indication).

Zeroisation (SP 800-90A 8.3, 9.4 Uninstantiate): K and V are held in ``bytearray`` objects and
overwritten in place by :meth:`HmacDrbg.zeroize`. Python cannot wipe the short-lived immutable
``bytes`` objects that HMAC returns inside a call; those are released as soon as the call ends.
"""

from __future__ import annotations

import hmac

from firmware.rng.drbg_common import (
    MAX_INPUT_BYTES,
    MAX_REQUEST_BYTES,
    MAX_RESEED_INTERVAL,
    MIN_ENTROPY_BYTES,
    MIN_NONCE_BYTES,
    SECURITY_STRENGTH_BITS,
    DrbgState,
    checked_seed,
)
from firmware.rng.drbg_common import checked_input as _as_bytes

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_REQUEST_BYTES",
    "MAX_RESEED_INTERVAL",
    "MIN_ENTROPY_BYTES",
    "MIN_NONCE_BYTES",
    "OUTLEN_BYTES",
    "SECURITY_STRENGTH_BITS",
    "HmacDrbg",
]

#: Length of the HMAC-SHA-256 output, of K and of V (SP 800-90A 10.1: outlen).
OUTLEN_BYTES = 32

_ZERO_BYTE = b"\x00"
_ONE_BYTE = b"\x01"


class HmacDrbg(DrbgState):
    """One instantiation of HMAC_DRBG (SHA-256) per SP 800-90A Rev. 1, 10.1.2.

    The constructor is HMAC_DRBG_Instantiate_algorithm (10.1.2.3); :meth:`reseed` is
    HMAC_DRBG_Reseed_algorithm (10.1.2.4); :meth:`generate` is HMAC_DRBG_Generate_algorithm
    (10.1.2.5); :meth:`zeroize` is Uninstantiate (9.4). An empty ``bytes`` stands for the spec's
    *Null* input.
    """

    __slots__ = ("_k", "_v")

    def __init__(
        self,
        entropy: bytes,
        nonce: bytes,
        personalization: bytes = b"",
        *,
        reseed_interval: int = MAX_RESEED_INTERVAL,
    ) -> None:
        super().__init__(reseed_interval)
        entropy, nonce, personalization = checked_seed(entropy, nonce, personalization)
        # 10.1.2.3: seed_material = entropy_input || nonce || personalization_string;
        # Key = 0x00 00...00; V = 0x01 01...01; (Key, V) = Update(seed_material, Key, V);
        # reseed_counter = 1.
        self._k = bytearray(OUTLEN_BYTES)
        self._v = bytearray(_ONE_BYTE * OUTLEN_BYTES)
        self._update(entropy + nonce + personalization)
        self._reseed_counter = 1

    def _secrets(self) -> tuple[bytearray, ...]:
        return (self._k, self._v)

    def _update(self, provided_data: bytes) -> None:
        """HMAC_DRBG_Update (10.1.2.2), in place on K and V."""
        k, v = self._k, self._v
        # 1. K = HMAC(K, V || 0x00 || provided_data)
        k[:] = hmac.digest(k, v + _ZERO_BYTE + provided_data, "sha256")
        # 2. V = HMAC(K, V)
        v[:] = hmac.digest(k, v, "sha256")
        # 3. If provided_data = Null, return K and V.
        if not provided_data:
            return
        # 4. K = HMAC(K, V || 0x01 || provided_data)
        k[:] = hmac.digest(k, v + _ONE_BYTE + provided_data, "sha256")
        # 5. V = HMAC(K, V)
        v[:] = hmac.digest(k, v, "sha256")

    def reseed(self, entropy: bytes, additional_input: bytes = b"") -> None:
        """HMAC_DRBG_Reseed_algorithm (10.1.2.4): mix fresh entropy into K and V.

        seed_material = entropy_input || additional_input; (Key, V) = Update(seed_material, Key, V);
        reseed_counter = 1.
        """
        self._check_usable()
        entropy = _as_bytes(entropy, "entropy input", MIN_ENTROPY_BYTES)
        additional_input = _as_bytes(additional_input, "additional input")
        self._update(entropy + additional_input)
        self._reseed_counter = 1

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes:
        """HMAC_DRBG_Generate_algorithm (10.1.2.5): ``nbytes`` pseudorandom bytes.

        Raises :class:`ReseedRequired` when ``reseed_counter > reseed_interval`` (step 1), and
        :class:`DrbgError` for a request over :data:`MAX_REQUEST_BYTES` or after :meth:`zeroize`.
        """
        additional_input = self._start_generate(nbytes, additional_input)  # 1.
        if additional_input:  # 2. if additional_input != Null, (Key, V) = Update(add, Key, V)
            self._update(additional_input)
        # 3.-4. temp = Null; while len(temp) < requested_number_of_bits: V = HMAC(Key, V);
        # temp = temp || V.  K does not change inside the loop, V is carried as bytes.
        k = self._k
        v = bytes(self._v)
        digest = hmac.digest
        blocks = []
        for _ in range(-(-nbytes // OUTLEN_BYTES)):
            v = digest(k, v, "sha256")
            blocks.append(v)
        self._v[:] = v
        output = b"".join(blocks)[:nbytes]  # 5. returned_bits = leftmost(temp, requested bits)
        self._update(additional_input)  # 6. (Key, V) = Update(additional_input, Key, V)
        self._reseed_counter += 1  # 7.
        return output
