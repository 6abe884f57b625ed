"""NIST SP 800-22 rev. 1a statistical tests, on numpy bit arrays.

Each function takes one sequence as a 1-D ``numpy.uint8`` array of 0/1 values and returns its
P-value(s), computed exactly as SP 800-22 section 2 and the reference implementation (STS 2.1.2)
define them; ``igamc`` is ``scipy.special.gammaincc``. The reference examples of the standard
(sections 2.x.4 and 2.x.8) are tests in ``tests/rng/test_sp800_22.py``.

Parameters follow the standard's recommendations for the sequence length ``n``
(:func:`parameters`): block frequency ``M = 128`` (the STS default; needs ``n >= 100``), longest
run of ones by the standard's table (M = 8 / 128 / 10,000 for n >= 128 / 6,272 / 750,000), serial
``m = min(16, floor(log2 n) - 3)`` (section 2.11.7: ``m < floor(log2 n) - 2``), approximate
entropy ``m = min(10, floor(log2 n) - 6)`` (section 2.12.7: ``m < floor(log2 n) - 5``).

Overlapping m-bit patterns (serial, approximate entropy) are counted over the sequence extended by
its first ``m - 1`` bits, as the standard says; the counts of shorter patterns are the sums of the
longer ones' counts (on a cyclic sequence every (m-1)-bit window extends to exactly one m-bit
window), so one pass over the data serves both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy.special import erfc, gammaincc
from scipy.stats import norm

#: Longest run of ones (section 2.4.4): n threshold -> (block length M, class bounds v_0..v_K,
#: class probabilities pi_0..pi_K or None for the exact ones). As in the reference
#: implementation (STS 2.1.2), M = 8 and M = 128 use the exact probabilities
#: (:func:`longest_run_probabilities`; the standard's printed pi_3 = 0.2266 for M = 8 is a
#: misprint for 0.1875) and M = 10,000 the standard's four-digit values, which differ from the
#: exact ones by up to 0.0016. Worked example 2.4.8 and the results for the binary expansion of
#: e (appendix B) come out to the published six digits only this way, and a lab running STS on
#: ``egm rng dump`` output gets the battery's P-values.
_LONGEST_RUN_TABLE: tuple[tuple[int, int, tuple[int, ...], tuple[float, ...] | None], ...] = (
    (750_000, 10_000, (10, 11, 12, 13, 14, 15, 16),
     (0.0882, 0.2092, 0.2483, 0.1933, 0.1208, 0.0675, 0.0727)),
    (6_272, 128, (4, 5, 6, 7, 8, 9), None),
    (128, 8, (1, 2, 3, 4), None),
)

#: The shortest sequence every test of :func:`parameters` accepts.
MIN_BITS = 128


@dataclass(frozen=True, slots=True)
class Parameters:
    """Test parameters for one sequence length."""

    n: int
    block_frequency_m: int
    serial_m: int
    approximate_entropy_m: int


def parameters(n: int) -> Parameters:
    """The recommended parameters for sequences of ``n`` bits (``n >= MIN_BITS``)."""
    if n < MIN_BITS:
        raise ValueError(f"SP 800-22 tests need sequences of at least {MIN_BITS} bits, not {n}")
    log2n = int(math.floor(math.log2(n)))
    return Parameters(
        n=n,
        block_frequency_m=128 if n >= 12_800 else max(20, n // 100 + 1),
        serial_m=min(16, log2n - 3),
        approximate_entropy_m=min(10, log2n - 6),
    )


def bits_from_bytes(data: bytes) -> np.ndarray:
    """Bytes -> bits, most significant bit of each byte first (the order ``egm rng dump`` writes)."""
    return np.unpackbits(np.frombuffer(data, dtype=np.uint8))


def bits_from_text(text: str) -> np.ndarray:
    """``"1011..."`` -> a bit array (the standard's examples); anything but 0 and 1 is refused."""
    stripped = text.strip()
    if stripped.strip("01"):
        raise ValueError("a bit string holds only the characters 0 and 1")
    return np.frombuffer(stripped.encode("ascii"), dtype=np.uint8) - ord("0")


def _igamc(a: float, x: float) -> float:
    return float(gammaincc(a, x))


def frequency(bits: np.ndarray) -> float:
    """2.1 Frequency (monobit) test."""
    n = bits.size
    s = 2 * int(np.count_nonzero(bits)) - n
    return float(erfc(abs(s) / math.sqrt(n) / math.sqrt(2)))


def block_frequency(bits: np.ndarray, m: int) -> float:
    """2.2 Frequency test within a block of ``m`` bits."""
    blocks = bits.size // m
    ones = bits[: blocks * m].reshape(blocks, m).sum(axis=1, dtype=np.int64)
    pi = ones / m
    chi2 = 4.0 * m * float(np.sum((pi - 0.5) ** 2))
    return _igamc(blocks / 2, chi2 / 2)


def runs(bits: np.ndarray) -> float:
    """2.3 Runs test (0.0 when the frequency prerequisite fails, as the standard prescribes)."""
    n = bits.size
    pi = int(np.count_nonzero(bits)) / n
    if abs(pi - 0.5) >= 2 / math.sqrt(n):
        return 0.0
    v_obs = 1 + int(np.count_nonzero(bits[1:] != bits[:-1]))
    num = abs(v_obs - 2 * n * pi * (1 - pi))
    return float(erfc(num / (2 * math.sqrt(2 * n) * pi * (1 - pi))))


def _longest_runs(blocks: np.ndarray) -> np.ndarray:
    """Longest run of ones in each row of a 2-D 0/1 array."""
    rows, m = blocks.shape
    padded = np.zeros((rows, m + 2), dtype=np.uint8)
    padded[:, 1:-1] = blocks
    zeros = np.flatnonzero(padded.ravel() == 0)
    gaps = np.diff(zeros) - 1
    row_of_gap = zeros[:-1] // (m + 2)
    longest = np.zeros(rows, dtype=np.int64)
    np.maximum.at(longest, row_of_gap, gaps)
    return longest


def _at_most(m: int, k: int) -> float:
    """P(longest run of ones in m fair bits <= k), by dynamic programming over the current run."""
    state = np.zeros(k + 1)
    state[0] = 1.0
    for _ in range(m):
        nxt = np.empty_like(state)
        nxt[0] = state.sum() / 2          # a zero ends any run
        nxt[1:] = state[:-1] / 2          # a one extends a run that stays <= k
        state = nxt
    return float(state.sum())


@cache
def longest_run_probabilities(m: int, bounds: tuple[int, ...]) -> tuple[float, ...]:
    """Exact class probabilities pi_0..pi_K for blocks of ``m`` bits: <= v_0, = v_1, ..., >= v_K.

    The check on the table above: the standard's pi_3 = 0.2266 for M = 8 cannot be right (the
    four values must sum to 1; the exact value is 48/256 = 0.1875, which worked example 2.4.8
    needs).
    """
    cdf = [_at_most(m, v) for v in bounds[:-1]]
    return (cdf[0], *(b - a for a, b in zip(cdf, cdf[1:], strict=False)), 1.0 - cdf[-1])


def longest_run(bits: np.ndarray) -> float:
    """2.4 Test for the longest run of ones in a block."""
    n = bits.size
    row = next((row for row in _LONGEST_RUN_TABLE if n >= row[0]), None)
    if row is None:
        raise ValueError(f"the longest-run test needs at least 128 bits, not {n}")
    _, m, bounds, probabilities = row
    blocks = n // m
    longest = _longest_runs(bits[: blocks * m].reshape(blocks, m))
    clipped = np.clip(longest, bounds[0], bounds[-1]) - bounds[0]
    observed = np.bincount(clipped, minlength=len(bounds))
    if probabilities is None:
        probabilities = longest_run_probabilities(m, bounds)
    expected = blocks * np.asarray(probabilities)
    chi2 = float(np.sum((observed - expected) ** 2 / expected))
    return _igamc((len(bounds) - 1) / 2, chi2 / 2)


def pattern_counts(bits: np.ndarray, m: int) -> np.ndarray:
    """Counts of each overlapping m-bit pattern over the sequence extended by its first m-1 bits."""
    n = bits.size
    extended = np.concatenate((bits, bits[: m - 1])).astype(np.uint32)
    values = np.zeros(n, dtype=np.uint32)
    for j in range(m):
        values <<= 1
        values |= extended[j : j + n]
    return np.bincount(values, minlength=1 << m)


def _shorter(counts: np.ndarray) -> np.ndarray:
    """Counts of the (m-1)-bit cyclic patterns from those of the m-bit ones."""
    shorter: np.ndarray = counts[0::2] + counts[1::2]
    return shorter


def _psi2(counts: np.ndarray, n: int) -> float:
    if counts.size == 1:  # m = 0
        return 0.0
    return counts.size / n * float(np.sum(counts.astype(np.float64) ** 2)) - n


def serial(bits: np.ndarray, m: int) -> tuple[float, float]:
    """2.11 Serial test: the two P-values (del psi^2_m, del^2 psi^2_m)."""
    n = bits.size
    c_m = pattern_counts(bits, m)
    c_m1 = _shorter(c_m)
    c_m2 = _shorter(c_m1)
    psi_m, psi_m1, psi_m2 = _psi2(c_m, n), _psi2(c_m1, n), _psi2(c_m2, n)
    del1 = psi_m - psi_m1
    del2 = psi_m - 2 * psi_m1 + psi_m2
    return _igamc(2 ** (m - 2), del1 / 2), _igamc(2 ** (m - 3), del2 / 2)


def _phi(counts: np.ndarray, n: int) -> float:
    c = counts[counts > 0].astype(np.float64) / n
    return float(np.sum(c * np.log(c)))


def approximate_entropy(bits: np.ndarray, m: int) -> float:
    """2.12 Approximate entropy test."""
    n = bits.size
    c_m1 = pattern_counts(bits, m + 1)
    c_m = _shorter(c_m1)
    ap_en = _phi(c_m, n) - _phi(c_m1, n)
    chi2 = 2 * n * (math.log(2) - ap_en)
    return _igamc(2 ** (m - 1), chi2 / 2)


def _tdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero), as the reference implementation's bounds use."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cusum_p(z: int, n: int) -> float:
    if z == 0:
        return 1.0 if n == 0 else 0.0
    sqrt_n = math.sqrt(n)
    k1 = np.arange(_tdiv(_tdiv(-n, z) + 1, 4), _tdiv(_tdiv(n, z) - 1, 4) + 1)
    k2 = np.arange(_tdiv(_tdiv(-n, z) - 3, 4), _tdiv(_tdiv(n, z) - 1, 4) + 1)
    s1 = np.sum(norm.cdf((4 * k1 + 1) * z / sqrt_n) - norm.cdf((4 * k1 - 1) * z / sqrt_n))
    s2 = np.sum(norm.cdf((4 * k2 + 3) * z / sqrt_n) - norm.cdf((4 * k2 + 1) * z / sqrt_n))
    return float(min(1.0, max(0.0, 1.0 - s1 + s2)))


def cumulative_sums(bits: np.ndarray) -> tuple[float, float]:
    """2.13 Cumulative sums test: (forward, backward) P-values."""
    n = bits.size
    steps = 2 * bits.astype(np.int64) - 1
    forward = np.cumsum(steps)
    z_forward = int(np.max(np.abs(forward)))
    total = int(forward[-1])
    # Backward partial sums S'_k = total - S_{n-k}, for k = 1..n (S_0 = 0).
    backward = total - np.concatenate(([0], forward[:-1]))
    z_backward = int(np.max(np.abs(backward)))
    return _cusum_p(z_forward, n), _cusum_p(z_backward, n)


#: The battery's P-value streams, in report order: name -> function of (bits, parameters).
TESTS: dict[str, Callable[[np.ndarray, Parameters], tuple[float, ...]]] = {
    "frequency": lambda b, p: (frequency(b),),
    "block_frequency": lambda b, p: (block_frequency(b, p.block_frequency_m),),
    "runs": lambda b, p: (runs(b),),
    "longest_run": lambda b, p: (longest_run(b),),
    "serial": lambda b, p: serial(b, p.serial_m),
    "approximate_entropy": lambda b, p: (approximate_entropy(b, p.approximate_entropy_m),),
    "cumulative_sums": lambda b, p: cumulative_sums(b),
}

#: Names of the P-value streams each test yields (serial and cumulative sums yield two).
STREAMS = {
    "frequency": ("frequency",),
    "block_frequency": ("block_frequency",),
    "runs": ("runs",),
    "longest_run": ("longest_run",),
    "serial": ("serial_1", "serial_2"),
    "approximate_entropy": ("approximate_entropy",),
    "cumulative_sums": ("cumulative_sums_forward", "cumulative_sums_backward"),
}


def all_p_values(bits: np.ndarray, params: Parameters | None = None) -> dict[str, float]:
    """Every stream's P-value for one sequence."""
    params = params or parameters(bits.size)
    out: dict[str, float] = {}
    for name, test in TESTS.items():
        for stream, p in zip(STREAMS[name], test(bits, params), strict=True):
            out[stream] = p
    return out
