"""Continuous health tests on the raw entropy input (NIST SP 800-90B, section 4.4).

Every byte the DRBG receives as entropy input or nonce passes through :class:`HealthTestedEntropy`,
which runs the two approved continuous tests over 8-bit samples:

* Repetition Count Test (RCT, 4.4.1): a run of ``C`` identical consecutive samples is a failure,
  with ``C = 1 + ceil(-log2(alpha) / H)``.
* Adaptive Proportion Test (APT, 4.4.2): within each window of ``W = 512`` samples (the
  non-binary window), the first sample of the window occurring ``C`` or more times is a failure,
  with ``C = 1 + CRITBINOM(W, 2^-H, 1 - alpha)``: the smallest ``c`` with
  ``P(X >= c) <= alpha`` for ``X ~ Binomial(W, 2^-H)``.

Both cutoffs are computed here from ``alpha`` and ``H`` (see :func:`rct_cutoff`,
:func:`apt_cutoff`), never typed in; the APT critical value is an exact rational computation of
the binomial tail. They reproduce SP 800-90B Table 2 (W = 512: 410, 311, 177, 62, 13 for
H = 0.5, 1, 2, 4, 8).

Startup test (4.3, item 2): before the first byte is released, and again after every
:meth:`HealthTestedEntropy.reset`, :data:`STARTUP_SAMPLES` = 1024 consecutive samples are drawn,
run through both tests and discarded.

A failure raises :class:`~firmware.rng.errors.EntropyError` and *latches*: every later request
raises again, whatever the source does, until a technician clears it with
:meth:`HealthTestedEntropy.reset` (the cabinet shows the failure as a tilt meanwhile).

Assessed min-entropy per sample, ``H`` = :data:`ASSESSED_MIN_ENTROPY_BITS` = 4 bits per byte
-------------------------------------------------------------------------------------------------
``os.urandom`` is not a raw noise source: it is the output of the kernel's CSPRNG (ChaCha20 keyed
from the kernel's entropy pool), so its bytes are, by design, computationally indistinguishable
from 8 bits of entropy each. The terminal cannot, however, vouch for how well the kernel was
seeded on a given board, so it does not credit the full 8 bits. The choice of H sets both the
entropy accounting and the cutoffs, with alpha = 2^-20 fixed:

* H = 8 (full entropy): RCT cutoff 4 and APT cutoff 13. A healthy source sets them off by
  chance: three repeats follow a byte with probability 2^-24, so a 1 MB test would false-alarm
  about one time in sixteen, and the credited entropy rests entirely on the kernel.
* H = 1 (the generic non-binary figure): RCT cutoff 21 and APT cutoff 311 of 512. The RCT still
  catches a stuck source, but the APT only notices one byte value reaching 61% of a window: a
  source emitting 0x00 40% of the time passes. That is too weak a test, and crediting 1 bit per
  byte would demand 256 bytes of entropy input per seed for no gain in assurance.
* H = 4 (chosen): RCT cutoff 6 and APT cutoff 62 of 512 (12%). For a healthy source the false
  alarm rate is about 2^-40 per sample for the RCT and far below that for the APT: none in the
  lifetime of a terminal. A stuck source is caught within 6 bytes, and one value taking more
  than about 12% of a window is caught within one window. Half of the byte is credited as
  entropy, so the seeding sizes follow from it: :data:`ENTROPY_INPUT_BYTES` = 256 / H = 64 bytes
  of entropy input and :data:`NONCE_BYTES` = 128 / H = 32 bytes of nonce, so the DRBG's
  256-bit security strength is met by the *claimed* entropy alone.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from fractions import Fraction
from functools import cache

from firmware.rng.errors import EntropyError, RngRangeError
from firmware.rng.hmac_drbg import MIN_NONCE_BYTES, SECURITY_STRENGTH_BITS

#: Assessed min-entropy per 8-bit sample of ``os.urandom``, in bits (see the module docstring).
ASSESSED_MIN_ENTROPY_BITS = 4
#: False-positive probability the cutoffs are computed for (SP 800-90B 4.4: 2^-20 <= alpha <= 2^-40).
ALPHA = Fraction(1, 2**20)
#: APT window for non-binary samples (SP 800-90B 4.4.2).
APT_WINDOW = 512
#: Samples tested and discarded by the startup test (SP 800-90B 4.3).
STARTUP_SAMPLES = 1024
#: Entropy input bytes whose claimed entropy (H bits each) reaches the DRBG's security strength.
ENTROPY_INPUT_BYTES = math.ceil(SECURITY_STRENGTH_BITS / ASSESSED_MIN_ENTROPY_BITS)
#: Nonce bytes whose claimed entropy reaches half the security strength (SP 800-90A 8.6.7).
NONCE_BYTES = math.ceil(MIN_NONCE_BYTES * 8 / ASSESSED_MIN_ENTROPY_BITS)


@cache
def rct_cutoff(h: float = ASSESSED_MIN_ENTROPY_BITS, alpha: Fraction = ALPHA) -> int:
    """Repetition Count Test cutoff, SP 800-90B 4.4.1: ``C = 1 + ceil(-log2(alpha) / H)``."""
    return 1 + math.ceil(-math.log2(alpha) / h)


@cache
def apt_cutoff(
    h: float = ASSESSED_MIN_ENTROPY_BITS, window: int = APT_WINDOW, alpha: Fraction = ALPHA
) -> int:
    """Adaptive Proportion Test cutoff, SP 800-90B 4.4.2: ``C = 1 + CRITBINOM(W, 2^-H, 1 - alpha)``.

    CRITBINOM(W, p, 1 - alpha) is the smallest ``k`` with ``P(X <= k) >= 1 - alpha``, i.e. with
    ``P(X >= k + 1) <= alpha``; so ``C`` is the smallest ``c`` with ``P(X >= c) <= alpha``. The
    tail is summed exactly in rational arithmetic, from ``c = W`` downwards.
    """
    p = Fraction(2) ** -h if isinstance(h, int) else Fraction(2.0**-h)
    q = 1 - p
    tail = Fraction(0)  # P(X >= c + 1)
    for c in range(window, -1, -1):
        tail += math.comb(window, c) * p**c * q ** (window - c)  # now P(X >= c)
        if tail > alpha:
            return c + 1
    raise AssertionError("unreachable: P(X >= 0) = 1 > alpha")


class HealthTestedEntropy:
    """An entropy source whose every byte has passed the SP 800-90B continuous health tests.

    ``source(n)`` must return ``n`` bytes (``os.urandom`` by default; tests pass a broken one).
    The first :meth:`get` (and the first after :meth:`reset`) runs the startup test first.
    """

    def __init__(self, source: Callable[[int], bytes] = os.urandom) -> None:
        self._source = source
        self._rct_cutoff = rct_cutoff()
        self._apt_cutoff = apt_cutoff()
        self._failure: str | None = None
        self._clear_state()

    def _clear_state(self) -> None:
        self._started = False
        self._rct_value = -1  # no sample seen yet: the first one starts a run
        self._rct_count = 0
        self._apt_value = -1
        self._apt_count = 0
        self._apt_seen = 0  # samples of the current window seen so far, 0 = start a new window

    @property
    def rct_cutoff(self) -> int:
        """Run length of identical samples that fails the Repetition Count Test."""
        return self._rct_cutoff

    @property
    def apt_cutoff(self) -> int:
        """Count of the window's first value, within a window of 512, that fails the APT."""
        return self._apt_cutoff

    @property
    def failed(self) -> bool:
        """True once a health test has failed, until :meth:`reset`."""
        return self._failure is not None

    @property
    def failure(self) -> str | None:
        """What failed, for the tilt message and the event log; ``None`` while healthy."""
        return self._failure

    def reset(self) -> None:
        """Technician clear: forget the failure and the test state; the startup test runs again."""
        self._failure = None
        self._clear_state()

    def startup_test(self) -> None:
        """Draw, test and discard :data:`STARTUP_SAMPLES` samples (SP 800-90B 4.3)."""
        self._check_not_failed()
        self._test(self._read(STARTUP_SAMPLES))
        self._started = True

    def get(self, n: int) -> bytes:
        """``n`` bytes from the source, each one tested; :class:`EntropyError` on any failure."""
        if n < 0:
            raise RngRangeError(f"cannot get {n} bytes of entropy")
        self._check_not_failed()
        if not self._started:
            self.startup_test()
        data = self._read(n)
        self._test(data)
        return data

    def _check_not_failed(self) -> None:
        if self._failure is not None:
            raise EntropyError(
                f"the entropy source has failed ({self._failure}) and stays disabled "
                "until a technician reset"
            )

    def _fail(self, reason: str) -> EntropyError:
        self._failure = reason
        return EntropyError(f"entropy source health test failed: {reason}")

    def _read(self, n: int) -> bytes:
        try:
            data = self._source(n)
        except OSError as exc:
            raise self._fail(f"the source could not be read: {exc}") from exc
        if not isinstance(data, bytes | bytearray) or len(data) != n:
            got = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
            raise self._fail(f"the source returned {got} instead of {n} bytes")
        return bytes(data)

    def _test(self, data: bytes) -> None:
        """Run every sample of ``data`` through the RCT (4.4.1) and the APT (4.4.2)."""
        rct_cutoff, apt_cutoff, window = self._rct_cutoff, self._apt_cutoff, APT_WINDOW
        rct_value, rct_count = self._rct_value, self._rct_count
        apt_value, apt_count, apt_seen = self._apt_value, self._apt_count, self._apt_seen
        for x in data:
            # 4.4.1: A = the current run's value, B = its length so far.
            if x == rct_value:
                rct_count += 1
                if rct_count >= rct_cutoff:
                    raise self._fail(
                        f"repetition count test (SP 800-90B 4.4.1): byte 0x{x:02x} repeated "
                        f"{rct_count} times in a row, cutoff {rct_cutoff}"
                    )
            else:
                rct_value, rct_count = x, 1
            # 4.4.2: A = the window's first sample, B = how often A occurred in the window.
            if apt_seen == 0:
                apt_value, apt_count = x, 1
            elif x == apt_value:
                apt_count += 1
                if apt_count >= apt_cutoff:
                    raise self._fail(
                        f"adaptive proportion test (SP 800-90B 4.4.2): byte 0x{x:02x} occurred "
                        f"{apt_count} times in a window of {window} samples, cutoff {apt_cutoff}"
                    )
            apt_seen += 1
            if apt_seen == window:
                apt_seen = 0
        self._rct_value, self._rct_count = rct_value, rct_count
        self._apt_value, self._apt_count, self._apt_seen = apt_value, apt_count, apt_seen
