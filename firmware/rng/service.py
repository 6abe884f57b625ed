"""The terminal's one random number service: DRBG output turned into unbiased integers.

The DRBG is one of the mechanisms of :mod:`firmware.rng.mechanisms`: HMAC_DRBG (SHA-256, the
default) or CTR_DRBG (AES-256 with the derivation function), chosen by ``[rng] mechanism``.

Layers, bottom up (each one is what a test lab reviews):

1. **Bytes.** The service's output is one byte stream: the concatenation of successive
   ``generate(block_bytes)`` outputs of its DRBG, consumed strictly in order and never reused;
   ``block_bytes`` is the mechanism's (:attr:`~firmware.rng.mechanisms.Mechanism.block_bytes`):
   ``HmacDrbg.generate(1024)`` (SP 800-90A 10.1.2.5) for HMAC_DRBG and ``CtrDrbg.generate(65536)``
   (10.2.1.5.2) for CTR_DRBG. :meth:`RngService.random_bytes` returns the next ``n`` bytes of it.
2. **Bits.** :meth:`RngService.randbits` ``(k)`` takes the next ``ceil(k / 8)`` bytes of the
   stream, reads them as one big-endian unsigned integer and keeps its low ``k`` bits (the
   ``8 * ceil(k / 8) - k`` high bits of the first byte are discarded). Every ``k``-bit value is
   equally likely because every byte value is.
3. **Integers in a range.** :func:`randbelow_from` ``(randbits, n)`` draws
   ``k = (n - 1).bit_length()`` bits and accepts the value if it is below ``n``, else draws again
   (rejection sampling; never ``%``, which would favour the low outcomes). Each accepted value
   ``0 .. n - 1`` comes from exactly one ``k``-bit pattern, so all are equally likely; the
   acceptance probability ``n / 2^k`` is above 1/2, so on average fewer than two draws are made.
   ``randbelow(1)`` is 0 and draws nothing.
4. **Permutations.** :meth:`RngService.shuffle` is Fisher-Yates (Knuth, TAOCP vol. 2, Algorithm
   3.4.2 P): for ``i`` from ``len - 1`` down to 1, swap item ``i`` with item ``randbelow(i + 1)``.
   :meth:`RngService.draw` is the same algorithm stopped after ``k`` steps on a copy.

Two ways to make one:

* :meth:`RngService.production`: entropy input and nonce from the health-tested OS entropy source
  (``firmware.rng.health``); the DRBG reseeds itself with fresh tested entropy every
  ``reseed_interval`` generate requests (default :data:`DEFAULT_RESEED_INTERVAL` = 2^20 requests:
  1 GiB of HMAC_DRBG output, 64 GiB of CTR_DRBG output), and :meth:`RngService.reseed` reseeds on
  demand.
* :meth:`RngService.seeded`: a deterministic DRBG for simulation, ``--seed`` replays and tests;
  it never touches the OS entropy source, and ``deterministic`` says so. The same seed gives
  different streams under the two mechanisms.

Buffering: output is generated ``block_bytes`` at a time, so up to that many not yet used
bytes wait in memory. :meth:`RngService.reseed` discards them, so that everything drawn after a
reseed comes from the reseeded state; :meth:`RngService.zeroize` overwrites them.

Thread safety: taking bytes from the buffer is serialised by a lock, so no byte of the stream is
ever handed out twice even if two threads share the service. A shuffle or a draw is not atomic
as a whole; the service has one owner (the game kernel, through its card source).
"""

from __future__ import annotations

import hashlib
import operator
import threading
from collections.abc import Callable, MutableSequence, Sequence
from typing import Any, TypeVar

from firmware.rng.errors import DrbgError, ReseedRequired, RngRangeError
from firmware.rng.health import ENTROPY_INPUT_BYTES, NONCE_BYTES, HealthTestedEntropy
from firmware.rng.mechanisms import DEFAULT_MECHANISM, Drbg
from firmware.rng.mechanisms import mechanism as _mechanism

#: Bytes asked of an HMAC_DRBG per generate request (the default mechanism's ``block_bytes``).
BLOCK_BYTES = 1024
#: Generate requests between automatic reseeds of a production service: 2^20 * 1 KiB = 1 GiB.
DEFAULT_RESEED_INTERVAL = 2**20
#: Personalization string of every seeded (deterministic) service.
SEEDED_PERSONALIZATION = b"egm seeded"

T = TypeVar("T")


def randbelow_from(randbits: Callable[[int], int], n: int) -> int:
    """A uniform integer in ``[0, n)`` by rejection sampling over ``randbits``.

    Draws ``k = (n - 1).bit_length()`` bits; a value ``< n`` is returned as it is, any other is
    rejected and a fresh ``k``-bit value drawn. ``n == 1`` returns 0 without drawing; ``n < 1``
    raises :class:`RngRangeError`. ``randbits(k)`` must return a uniform integer in ``[0, 2^k)``.
    """
    if type(n) is not int:
        n = operator.index(n)
    if n <= 1:
        if n == 1:
            return 0
        raise RngRangeError(f"randbelow needs n >= 1, not {n}")
    k = (n - 1).bit_length()
    r = randbits(k)
    while r >= n:
        r = randbits(k)
    return r


def _seed_bytes(seed: int | str | bytes) -> bytes:
    """The canonical bytes of a seed: bytes as given, str as UTF-8, int as its decimal text."""
    if isinstance(seed, bytes | bytearray):
        return bytes(seed)
    if isinstance(seed, str):
        return seed.encode("utf-8")
    if isinstance(seed, int) and not isinstance(seed, bool):
        return str(seed).encode("ascii")
    raise TypeError(f"a seed is an int, str or bytes, not {type(seed).__name__}")


class RngService:
    """The one RNG of a terminal (satisfies :class:`firmware.rng.interface.RandomSource`).

    Build it with :meth:`production` or :meth:`seeded`. The constructor takes an instantiated
    DRBG and, for a production service, the entropy source its reseeds come from; ``block_bytes``
    and ``mechanism`` must be those of the DRBG's mechanism (``firmware.rng.mechanisms``), which
    the two builders take care of.
    """

    def __init__(
        self,
        drbg: Drbg,
        entropy: HealthTestedEntropy | None = None,
        *,
        block_bytes: int = BLOCK_BYTES,
        mechanism: str = DEFAULT_MECHANISM,
    ) -> None:
        self._drbg = drbg
        self._entropy = entropy
        self._block_bytes = block_bytes
        self._mechanism = mechanism
        self._buffer = bytearray()
        self._pos = 0  # next unread byte of _buffer
        self._lock = threading.Lock()

    @classmethod
    def production(
        cls,
        personalization: bytes = b"egm",
        *,
        reseed_interval: int = DEFAULT_RESEED_INTERVAL,
        entropy: HealthTestedEntropy | None = None,
        mechanism: str = DEFAULT_MECHANISM,
    ) -> RngService:
        """The production service: DRBG instantiated from health-tested OS entropy.

        ``mechanism`` names the DRBG (``"hmac-drbg"`` or ``"ctr-drbg"``; an unknown name raises
        :class:`~firmware.rng.mechanisms.UnknownMechanism` before any entropy is read).

        Entropy input (:data:`~firmware.rng.health.ENTROPY_INPUT_BYTES`) and nonce
        (:data:`~firmware.rng.health.NONCE_BYTES`) are read from ``entropy``
        (default: a new ``HealthTestedEntropy(os.urandom)``, whose startup test runs first).
        Raises :class:`~firmware.rng.errors.EntropyError` if the source fails a health test.
        Pass ``entropy`` to keep a handle on the source: the cabinet reads its ``failed`` state
        and resets it when a technician clears the tilt.
        """
        chosen = _mechanism(mechanism)
        source = entropy if entropy is not None else HealthTestedEntropy()
        drbg = chosen.factory(
            source.get(ENTROPY_INPUT_BYTES),
            source.get(NONCE_BYTES),
            personalization,
            reseed_interval=reseed_interval,
        )
        return cls(drbg, source, block_bytes=chosen.block_bytes, mechanism=chosen.name)

    @classmethod
    def seeded(cls, seed: int | str | bytes, *, mechanism: str = DEFAULT_MECHANISM) -> RngService:
        """A deterministic service: the same seed (and mechanism) always gives the same stream.

        With ``s`` the seed's canonical bytes (bytes as given, str as UTF-8, int as its decimal
        text, so ``42``, ``"42"`` and ``b"42"`` are the same seed): entropy input =
        SHA-256(``b"egm seed entropy:" || s``), nonce = SHA-256(``b"egm seed nonce:" || s``),
        personalization = :data:`SEEDED_PERSONALIZATION`, reseed interval 2^48 (never reached).
        It has no entropy source: :meth:`reseed` refuses.
        """
        chosen = _mechanism(mechanism)
        material = _seed_bytes(seed)
        drbg = chosen.factory(
            hashlib.sha256(b"egm seed entropy:" + material).digest(),
            hashlib.sha256(b"egm seed nonce:" + material).digest(),
            SEEDED_PERSONALIZATION,
            reseed_interval=chosen.max_reseed_interval,
        )
        return cls(drbg, block_bytes=chosen.block_bytes, mechanism=chosen.name)

    @property
    def mechanism(self) -> str:
        """The DRBG mechanism's name (``"hmac-drbg"`` or ``"ctr-drbg"``)."""
        return self._mechanism

    @property
    def block_bytes(self) -> int:
        """Bytes the service asks of its DRBG per generate request."""
        return self._block_bytes

    @property
    def deterministic(self) -> bool:
        """True for a seeded service (no OS entropy), False for a production one."""
        return self._entropy is None

    def reseed(self) -> None:
        """Reseed now with fresh health-tested entropy and drop the buffered output.

        Raises :class:`DrbgError` on a seeded service (it has no entropy source) and
        :class:`~firmware.rng.errors.EntropyError` if the entropy source fails.
        """
        if self._entropy is None:
            raise DrbgError("a seeded (deterministic) RNG service has no entropy to reseed from")
        with self._lock:
            self._discard_buffer()
            self._drbg.reseed(self._entropy.get(ENTROPY_INPUT_BYTES))

    def zeroize(self) -> None:
        """Overwrite the buffered output and the DRBG state; the service is unusable afterwards."""
        with self._lock:
            self._discard_buffer()
            self._drbg.zeroize()

    def _discard_buffer(self) -> None:
        buffer = self._buffer
        buffer[:] = bytes(len(buffer))
        del buffer[:]
        self._pos = 0

    def _next_block(self) -> bytes:
        """The next DRBG block; a production service reseeds itself when the DRBG asks for it."""
        try:
            return self._drbg.generate(self._block_bytes)
        except ReseedRequired:
            if self._entropy is None:
                raise
            self._drbg.reseed(self._entropy.get(ENTROPY_INPUT_BYTES))
            return self._drbg.generate(self._block_bytes)

    def _refill(self, need: int) -> None:
        """Keep the unread bytes, append blocks until at least ``need`` bytes are unread."""
        buffer = self._buffer
        del buffer[: self._pos]
        self._pos = 0
        while len(buffer) < need:
            buffer += self._next_block()

    def random_bytes(self, n: int) -> bytes:
        """The next ``n`` bytes of the output stream."""
        if n < 0:
            raise RngRangeError(f"cannot return {n} bytes")
        with self._lock:
            pos = self._pos
            end = pos + n
            if end > len(self._buffer):
                self._refill(n)
                pos, end = 0, n
            self._pos = end
            return bytes(self._buffer[pos:end])

    def randbits(self, k: int) -> int:
        """A uniform integer in ``[0, 2^k)``, ``k >= 1``.

        Exact mapping: the next ``ceil(k / 8)`` bytes of the stream, as a big-endian unsigned
        integer, masked to its low ``k`` bits.
        """
        if k < 1:
            raise RngRangeError(f"randbits needs k >= 1, not {k}")
        nbytes = (k + 7) >> 3
        with self._lock:
            pos = self._pos
            end = pos + nbytes
            if end > len(self._buffer):
                self._refill(nbytes)
                pos, end = 0, nbytes
            self._pos = end
            chunk = self._buffer[pos:end]
        return int.from_bytes(chunk, "big") & ((1 << k) - 1)

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, ``n >= 1``: :func:`randbelow_from` over :meth:`randbits`."""
        return randbelow_from(self.randbits, n)

    def shuffle(self, items: MutableSequence[Any]) -> None:
        """Shuffle ``items`` in place: Fisher-Yates, ``j = randbelow(i + 1)`` for ``i = len-1 .. 1``."""
        randbits = self.randbits
        for i in range(len(items) - 1, 0, -1):
            j = randbelow_from(randbits, i + 1)
            items[i], items[j] = items[j], items[i]

    def draw(self, seq: Sequence[T], k: int) -> list[T]:
        """``k`` items from ``k`` distinct positions of ``seq``, in draw order; ``seq`` is unchanged.

        Fisher-Yates stopped after ``k`` steps on a copy: step ``i`` swaps position ``i`` with
        ``i + randbelow(len - i)``. Every ordered choice of ``k`` distinct positions has
        probability ``(len - k)! / len!``, as for any ``k`` positions of a full shuffle.
        """
        pool = list(seq)
        n = len(pool)
        if not 0 <= k <= n:
            raise RngRangeError(f"cannot draw {k} items from {n}")
        randbits = self.randbits
        for i in range(k):
            j = i + randbelow_from(randbits, n - i)
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k]
