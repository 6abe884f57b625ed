"""eSSP: the encryption layer of ITL SSP, sans-I/O, for both roles (``docs/protocols/ssp.md``).

Key (ITL's published description of eSSP): AES with a 128-bit key whose *lower* 64 bits are a
fixed key set by the machine maker (configuration, never code) and whose *upper* 64 bits are
negotiated at every start with a Diffie-Hellman exchange over plain SSP::

    host  -> SET_GENERATOR (0x4A) g           8 bytes, little-endian, a prime
    host  -> SET_MODULUS   (0x4B) m           8 bytes, little-endian, a prime
    host  -> REQUEST_KEY_EXCHANGE (0x4C) A    A = g ** a mod m  (a: the host's secret)
    device-> OK B                             B = g ** b mod m  (b: the device's secret)
    both:    k = B ** a mod m = A ** b mod m

AES key bytes: the fixed key then ``k``, each 8 bytes little-endian (this product's reading of
"lower/upper 64 bits"). Cipher mode: ECB, every 16-byte block alone.

An encrypted SSP packet's DATA is ``0x7E`` (STEX) followed by the ciphertext of::

    +---------+---------------+-------------+-----------+-------+-------+
    | eLENGTH | eCOUNT        | eDATA       | ePACKING  | eCRCL | eCRCH |
    | 1 byte  | 4 bytes, LE   | eLENGTH     | random    |       |       |
    +---------+---------------+-------------+-----------+-------+-------+
              total a multiple of 16 bytes; eCRC: SSP's CRC-16 over eLENGTH..ePACKING

eCOUNT is one counter per link, set to 0 by each key exchange, advanced once per exchange, by the
*command*: the host sends command ``n`` and counts to ``n + 1`` as it encrypts it; the device
expects ``n``, counts to ``n + 1`` as it decrypts it and answers with ``n + 1`` (encrypting a reply
does not count); the host expects ``n + 1`` in the reply (decrypting it does not count) and sends
its next command with ``n + 1``. That is what ITL's own C library does as a host
(``EncryptSSPPacket`` counts after encrypting, ``SSPSendCommand`` checks the reply's count against
it and does not count on decrypting) and what the npm library ``encrypted-smiley-secure-protocol``
implies (its next command carries the reply's count); ``docs/protocols/ssp.md``. A packet whose
counter is not the expected one is refused (:class:`ReplayError`): an old command replayed on the
wire carries a count the device has passed, an old reply one the host has passed. A packet resent
as a *repeat* (the SSP sequence flag unchanged) is the same bytes with the same counter; the device
resends its last reply unread and neither end counts it again.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from drivers.codec import LocalProtocolError, RemoteProtocolError, Role
from drivers.crc import crc16_ssp
from drivers.ssp.codec import ENCRYPTED, MAX_DATA

BLOCK = 16
#: eLENGTH + eCOUNT before the data, eCRC after it.
HEADER = 5
TRAILER = 2
#: The most plaintext one encrypted SSP packet carries (STEX + 15 blocks fit in 255 bytes).
MAX_PLAINTEXT = ((MAX_DATA - 1) // BLOCK) * BLOCK - HEADER - TRAILER
KEY_BITS = 64
_MASK64 = (1 << 64) - 1


class DecryptError(RemoteProtocolError):
    """An encrypted packet that does not decrypt to a well-formed block (wrong key, damage)."""


class ReplayError(RemoteProtocolError):
    """A well-formed encrypted packet whose counter is not the one expected: a replay or a stale
    packet."""


# --- numbers ------------------------------------------------------------------------------------
_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def is_prime(n: int) -> bool:
    """Miller-Rabin with the first 12 primes as witnesses: exact for every n < 3.3e24."""
    if n < 2:
        return False
    for p in _WITNESSES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def random_prime(rng: random.Random, bits: int = KEY_BITS) -> int:
    """A random prime of exactly ``bits`` bits."""
    while True:
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        if is_prime(n):
            return n


def u64(data: bytes) -> int:
    """An 8-byte little-endian number; ``ValueError`` if ``data`` is not 8 bytes."""
    if len(data) != 8:
        raise ValueError(f"an eSSP key number is 8 bytes, not {len(data)}")
    return int.from_bytes(data, "little")


def pack64(value: int) -> bytes:
    return (value & _MASK64).to_bytes(8, "little")


def parse_fixed_key(text: str) -> int:
    """The fixed key as configured: 16 hex digits, the 64-bit number (e.g. ``0123456701234567``)."""
    cleaned = text.strip().lower().removeprefix("0x").replace(" ", "")
    if len(cleaned) != 16:
        raise ValueError("the eSSP fixed key is 16 hex digits (a 64-bit number)")
    try:
        return int(cleaned, 16)
    except ValueError:
        raise ValueError("the eSSP fixed key is 16 hex digits (a 64-bit number)") from None


def aes_key(fixed_key: int, negotiated: int) -> bytes:
    """The AES-128 key: the fixed key in the lower 64 bits, the negotiated one in the upper."""
    return pack64(fixed_key) + pack64(negotiated)


# --- the key exchange ---------------------------------------------------------------------------
@dataclass(slots=True)
class KeyExchange:
    """One Diffie-Hellman exchange; the host builds it with :meth:`for_host`, the device from the
    host's generator and modulus."""

    generator: int
    modulus: int
    secret: int

    @classmethod
    def for_host(cls, rng: random.Random) -> KeyExchange:
        modulus = random_prime(rng)
        generator = random_prime(rng, KEY_BITS - 1)       # a prime below the modulus
        return cls(generator, modulus, rng.getrandbits(KEY_BITS) | 1)

    @property
    def intermediate(self) -> int:
        """What this end sends: generator ** secret mod modulus."""
        return pow(self.generator, self.secret, self.modulus)

    def key(self, peer_intermediate: int) -> int:
        return pow(peer_intermediate, self.secret, self.modulus)


# --- the session --------------------------------------------------------------------------------
class EsspSession:
    """One end's eSSP state: the key (None until exchanged) and the packet counter.

    ``counter`` is the count the next packet this end encrypts carries (host: its next command;
    device: its next reply) and the count it expects in the next one it decrypts (host: the reply
    to its last command; device: the next command). Only commands move it: the host's
    :meth:`wrap` and the device's :meth:`unwrap`.
    """

    def __init__(self, role: Role, fixed_key: int, *, rng: random.Random | None = None) -> None:
        if not 0 <= fixed_key <= _MASK64:
            raise LocalProtocolError("the eSSP fixed key is a 64-bit number")
        self.role = role
        #: The host counts the commands it sends, the device the commands it receives.
        self._count_on_wrap = role is Role.HOST
        self._fixed = fixed_key
        self._rng = rng if rng is not None else secrets.SystemRandom()
        self._cipher: Cipher[modes.ECB] | None = None
        self.counter = 0

    @property
    def keyed(self) -> bool:
        return self._cipher is not None

    def set_key(self, negotiated: int) -> None:
        """Start encrypting with the negotiated 64-bit key; the counter restarts at 0."""
        self._cipher = Cipher(algorithms.AES(aes_key(self._fixed, negotiated)), modes.ECB())
        self.counter = 0

    def clear(self) -> None:
        """Forget the key (power-up, reset, a new generator or modulus)."""
        self._cipher = None
        self.counter = 0

    def wrap(self, data: bytes) -> bytes:
        """SSP DATA for ``data`` encrypted: STEX + ciphertext, carrying the counter; the host's
        counter then advances (a command), the device's does not (a reply)."""
        cipher = self._require()
        if len(data) > MAX_PLAINTEXT:
            raise LocalProtocolError(f"eSSP carries at most {MAX_PLAINTEXT} bytes per packet")
        body = bytes((len(data),)) + self.counter.to_bytes(4, "little") + data
        padding = -(len(body) + TRAILER) % BLOCK
        body += self._rng.randbytes(padding)
        crc = crc16_ssp(body)
        block = body + bytes((crc & 0xFF, crc >> 8))
        encryptor = cipher.encryptor()
        if self._count_on_wrap:
            self._advance()
        return bytes((ENCRYPTED,)) + encryptor.update(block) + encryptor.finalize()

    def unwrap(self, data: bytes) -> bytes:
        """The plaintext of an encrypted SSP DATA carrying the expected counter; the device's
        counter then advances (a command), the host's does not (a reply).

        :class:`DecryptError` for a packet that is not well formed, :class:`ReplayError` for one
        whose counter is not the expected one.
        """
        cipher = self._require()
        if not data or data[0] != ENCRYPTED:
            raise DecryptError("not an encrypted packet (no STEX 0x7E)")
        sealed = data[1:]
        if not sealed or len(sealed) % BLOCK:
            raise DecryptError(f"{len(sealed)} encrypted bytes are not whole 16-byte blocks")
        decryptor = cipher.decryptor()
        block = decryptor.update(sealed) + decryptor.finalize()
        if crc16_ssp(block[:-TRAILER]) != block[-2] | block[-1] << 8:
            raise DecryptError("the decrypted CRC does not match (wrong key or damaged)")
        length = block[0]
        if HEADER + length + TRAILER > len(block):
            raise DecryptError(f"eLENGTH {length} is longer than the block")
        count = int.from_bytes(block[1:5], "little")
        if count != self.counter:
            raise ReplayError(f"eCOUNT {count}, expected {self.counter}")
        if not self._count_on_wrap:
            self._advance()
        return bytes(block[HEADER:HEADER + length])

    def _advance(self) -> None:
        self.counter = (self.counter + 1) & 0xFFFFFFFF

    def _require(self) -> Cipher[modes.ECB]:
        if self._cipher is None:
            raise LocalProtocolError("no eSSP key yet: exchange one first")
        return self._cipher


def is_encrypted(data: bytes) -> bool:
    return bool(data) and data[0] == ENCRYPTED


__all__ = [
    "DecryptError", "EsspSession", "KeyExchange", "ReplayError", "aes_key",
    "is_encrypted", "is_prime", "pack64", "parse_fixed_key", "random_prime", "u64",
]
