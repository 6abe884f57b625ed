"""CTR_DRBG with AES-256 and the derivation function, exactly as NIST SP 800-90A Rev. 1, 10.2.1.

Like :mod:`firmware.rng.hmac_drbg` this module is pure and deterministic: entropy input and nonce
are handed in by the caller. The block cipher is AES-256 from ``cryptography`` (OpenSSL); this
module implements the DRBG around it: Update (10.2.1.2), Instantiate (10.2.1.3.2), Reseed
(10.2.1.4.2) and Generate (10.2.1.5.2), all *using* the derivation function Block_Cipher_df
(10.3.2) with BCC (10.3.3). With the df, entropy input need not be full entropy, a nonce is
required, and the personalization string and additional input may have any length; this is
also the variant the NIST CAVP "use df" vectors test (``firmware/rng/vectors/``). Prediction
resistance is not offered (the service reseeds explicitly), as for HMAC_DRBG.

Parameters (SP 800-90A Rev. 1, Table 3, CTR_DRBG with AES-256 and a derivation function):

============================================  ==========================================
highest supported security strength           256 bits
blocklen (= outlen), keylen, seedlen          128, 256, 384 bits (16, 32, 48 bytes)
ctr_len (counter field of V)                  128 bits = blocklen (the whole of V)
min entropy input length                      security strength = 256 bits (32 bytes)
max entropy input length                      2^35 bits
nonce (8.6.7)                                  at least security_strength / 2 = 128 bits
max personalization string, additional input  2^35 bits
max number of bits per request                2^19 bits (65,536 bytes; B = 2^(ctr_len-4))
max reseed interval (generate requests)       2^48
============================================  ==========================================

Violations raise :class:`~firmware.rng.errors.DrbgError`; a generate request past the reseed
interval raises :class:`~firmware.rng.errors.ReseedRequired`.

How the output is computed fast, and why it is still 10.2.1.5.2
----------------------------------------------------------------
The spec's generate loop is ``V = (V + 1) mod 2^blocklen; output_block = Block_Encrypt(Key, V)``
(ctr_len = blocklen, so the increment covers all 128 bits of V), repeated until enough bits are
made; the Update that follows (step 6) runs the same loop three more times (seedlen / blocklen
= 3 blocks) with the same Key before it changes Key and V. That is exactly the keystream of
AES-256 in CTR mode with the initial counter block ``V + 1``: OpenSSL's CTR mode treats the
whole 16-byte counter block as one big-endian 128-bit integer, adds one per block and wraps
modulo 2^128 (``CRYPTO_ctr128_encrypt``). So one generate request is *one* CTR keystream of
``ceil(n / 16) + 3`` blocks: the first ``n`` bytes are the output, the last 48 bytes are Update's
``temp`` (before its XOR with the additional input), from which Update sets the new Key and V.
``tests/rng/test_ctr_drbg.py`` checks this against a block-by-block reference of 10.2.1.5.2
(AES-ECB, one block per loop turn) over random inputs, including V at the 2^64 and 2^128
wrap points, and the CAVP vectors check the whole.

Zeroisation (SP 800-90A 9.4): Key and V are ``bytearray`` objects overwritten in place by
:meth:`CtrDrbg.zeroize`. The ``cryptography`` cipher contexts that hold the expanded key live only
for one call; Python cannot wipe them or the immutable ``bytes`` a call returns.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from firmware.rng.drbg_common import (
    MAX_REQUEST_BYTES,
    MAX_RESEED_INTERVAL,
    MIN_ENTROPY_BYTES,
    DrbgState,
    checked_seed,
)
from firmware.rng.drbg_common import checked_input as _check_input
from firmware.rng.errors import DrbgError

__all__ = ["MAX_REQUEST_BYTES", "MAX_RESEED_INTERVAL", "CtrDrbg", "block_cipher_df", "keystream"]

#: AES block length (blocklen = outlen), bytes.
BLOCK_BYTES = 16
#: AES-256 key length (keylen), bytes.
KEY_BYTES = 32
#: seedlen = outlen + keylen, bytes.
SEED_BYTES = BLOCK_BYTES + KEY_BYTES
_MOD = 1 << (8 * BLOCK_BYTES)
#: The df's fixed key: leftmost(0x00 01 02 ... 1F, keylen) (10.3.2 step 8).
_DF_KEY = bytes(range(KEY_BYTES))
#: Zero bytes encrypted in CTR mode to get the keystream (largest request plus Update's 3 blocks).
_ZEROS = bytes(MAX_REQUEST_BYTES + SEED_BYTES)


def keystream(key: bytes | bytearray, v: bytes | bytearray, nbytes: int) -> bytes:
    """``nbytes`` of ``Block_Encrypt(Key, V+1) || Block_Encrypt(Key, V+2) || ...``.

    V is incremented modulo 2^128 before each block, as in 10.2.1.2 step 2.1 and 10.2.1.5.2 step
    4.1 with ctr_len = blocklen: the AES-CTR keystream whose first counter block is V + 1.
    """
    start = ((int.from_bytes(v, "big") + 1) % _MOD).to_bytes(BLOCK_BYTES, "big")
    encryptor = Cipher(algorithms.AES(bytes(key)), modes.CTR(start)).encryptor()
    if nbytes <= len(_ZEROS):
        return encryptor.update(memoryview(_ZEROS)[:nbytes])
    return encryptor.update(bytes(nbytes))


def bcc(key: bytes, data: bytes) -> bytes:
    """BCC (10.3.3): CBC-MAC of ``data`` (a multiple of 16 bytes) under ``key``, zero IV.

    chaining_value = 0; for each block: chaining_value = Block_Encrypt(Key, chaining_value XOR
    block). That is the last block of AES-CBC encryption with an all-zero IV.
    """
    encryptor = Cipher(algorithms.AES(key), modes.CBC(bytes(BLOCK_BYTES))).encryptor()
    return encryptor.update(data)[-BLOCK_BYTES:]


def block_cipher_df(input_string: bytes, nbytes: int = SEED_BYTES) -> bytes:
    """Block_Cipher_df (10.3.2): ``nbytes`` derived from ``input_string``.

    S = L || N || input_string || 0x80, zero-padded to a multiple of outlen (L, N 32-bit
    big-endian: the input length and ``nbytes``); temp = BCC(K, IV_i || S) for i = 0, 1, ...
    (IV_i = i as 32 bits, zero-padded to outlen) until keylen + outlen bytes, with K the fixed
    key 00 01 .. 1F; K = leftmost(temp, keylen), X = the next outlen bytes; then X =
    Block_Encrypt(K, X) repeatedly, concatenated, leftmost ``nbytes``.
    """
    if len(input_string) >= 2**32:
        raise DrbgError("the derivation function's input is longer than 2^32 - 1 bytes")
    s = len(input_string).to_bytes(4, "big") + nbytes.to_bytes(4, "big") + input_string + b"\x80"
    s += bytes(-len(s) % BLOCK_BYTES)
    temp = b""
    i = 0
    while len(temp) < KEY_BYTES + BLOCK_BYTES:
        iv = i.to_bytes(4, "big") + bytes(BLOCK_BYTES - 4)
        temp += bcc(_DF_KEY, iv + s)
        i += 1
    k, x = temp[:KEY_BYTES], temp[KEY_BYTES : KEY_BYTES + BLOCK_BYTES]
    encryptor = Cipher(algorithms.AES(k), modes.ECB()).encryptor()
    out = b""
    while len(out) < nbytes:
        x = encryptor.update(x)
        out += x
    return out[:nbytes]


def _xor(a: bytes, b: bytes) -> bytes:
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(len(a), "big")


class CtrDrbg(DrbgState):
    """One instantiation of CTR_DRBG (AES-256, derivation function) per SP 800-90A 10.2.1.

    The constructor is CTR_DRBG_Instantiate_algorithm (10.2.1.3.2); :meth:`reseed` is
    CTR_DRBG_Reseed_algorithm (10.2.1.4.2); :meth:`generate` is CTR_DRBG_Generate_algorithm
    (10.2.1.5.2); :meth:`zeroize` is Uninstantiate (9.4). Same interface as
    :class:`~firmware.rng.hmac_drbg.HmacDrbg`; an empty ``bytes`` is the spec's *Null*.
    """

    __slots__ = ("_key", "_v")

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
        # 10.2.1.3.2: seed_material = df(entropy_input || nonce || personalization_string, seedlen);
        # Key = 0^keylen; V = 0^blocklen; (Key, V) = Update(seed_material, Key, V); counter = 1.
        self._key = bytearray(KEY_BYTES)
        self._v = bytearray(BLOCK_BYTES)
        self._update(block_cipher_df(entropy + nonce + personalization))
        self._reseed_counter = 1

    def _secrets(self) -> tuple[bytearray, ...]:
        return (self._key, self._v)

    def _update(self, provided_data: bytes, temp: bytes | None = None) -> None:
        """CTR_DRBG_Update (10.2.1.2) in place on Key and V.

        temp = Block_Encrypt(Key, V+1) || (V+2) || (V+3) (seedlen bits), XOR provided_data;
        Key = leftmost(temp, keylen); V = rightmost(temp, blocklen). ``temp`` may be passed in
        when the caller already has those three keystream blocks (the generate path).
        """
        if temp is None:
            temp = keystream(self._key, self._v, SEED_BYTES)
        temp = _xor(temp, provided_data)
        self._key[:] = temp[:KEY_BYTES]
        self._v[:] = temp[KEY_BYTES:]

    def reseed(self, entropy: bytes, additional_input: bytes = b"") -> None:
        """CTR_DRBG_Reseed_algorithm using df (10.2.1.4.2).

        seed_material = df(entropy_input || additional_input, seedlen);
        (Key, V) = Update(seed_material, Key, V); reseed_counter = 1.
        """
        self._check_usable()
        entropy = _check_input(entropy, "entropy input", MIN_ENTROPY_BYTES)
        additional_input = _check_input(additional_input, "additional input")
        self._update(block_cipher_df(entropy + additional_input))
        self._reseed_counter = 1

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes:
        """CTR_DRBG_Generate_algorithm using df (10.2.1.5.2): ``nbytes`` pseudorandom bytes.

        Raises :class:`ReseedRequired` when ``reseed_counter > reseed_interval`` (step 1), and
        :class:`DrbgError` for a request over :data:`MAX_REQUEST_BYTES` or after :meth:`zeroize`.
        """
        additional_input = self._start_generate(nbytes, additional_input)  # 1.
        # 2. If additional_input != Null: additional_input = df(additional_input, seedlen);
        #    (Key, V) = Update(additional_input, Key, V). Else additional_input = 0^seedlen.
        if additional_input:
            additional_input = block_cipher_df(additional_input)
            self._update(additional_input)
        else:
            additional_input = bytes(SEED_BYTES)
        # 3.-5. temp = Null; while len(temp) < requested: V = V + 1; temp ||= Block_Encrypt(Key, V);
        #       returned_bits = leftmost(temp, requested). 6. Update(additional_input, Key, V)
        #       encrypts V + 1 .. V + 3 with the same Key: one CTR keystream covers both.
        blocks = -(-nbytes // BLOCK_BYTES)
        stream = keystream(self._key, self._v, blocks * BLOCK_BYTES + SEED_BYTES)
        output = stream[:nbytes]
        # 6. (V after step 4 is V + blocks; Update sets Key and V from its temp alone.)
        self._update(additional_input, stream[blocks * BLOCK_BYTES :])
        self._reseed_counter += 1  # 7.
        return output
