"""The RNG self-test battery: NIST SP 800-22 on the raw stream, chi-square on what games consume.

Two families of tests, each judged as the lab would judge it:

* **SP 800-22** (:mod:`firmware.rng.sp800_22`) on ``sequences`` sequences of ``bits`` bits of the
  raw output stream (``random_bytes``, bits most significant first). Each of the nine P-value
  streams is judged by section 4.2: the *proportion* of sequences with ``p >= alpha`` must reach
  ``ceil(m (1 - alpha - 3 sqrt(alpha (1 - alpha) / m)))`` (97 of 100 at alpha = 0.01), and the
  P-values must be *uniform*: ten bins, chi-square with 9 degrees of freedom,
  ``P-value_T = igamc(9/2, chi2/2) >= 0.0001`` (judged only from 55 sequences up, as the standard
  says; fewer sequences report it but do not judge it). The reported ``p_value`` is
  ``P-value_T``, or the one sequence's P-value when ``sequences == 1``.
* **Distributions** of the scaled outputs that deal cards, at significance 0.001: card-by-position
  after ``shuffle`` of one 52-card deck and of an eight-deck shoe of 416 distinct cards, and
  ``randbelow(n)`` for small, card-sized and awkward ranges (``3 * 2^30`` is the range where a
  32-bit modulo reduction makes the lower third twice as likely).

  The card-by-position count matrix is a sum of ``s`` independent uniform permutation matrices.
  Their covariance is ``Q (x) Q / (n - 1)`` with ``Q`` the centring projection of rank ``n - 1``,
  so Pearson's statistic against ``E = s / n`` is ``n / (n - 1)`` times a chi-square with
  ``(n - 1)^2`` degrees of freedom; the battery divides that factor out. (Leaving it in biases the
  statistic upwards by ``n - 1``, 0.7 standard deviations, for both deck sizes.)

Repeat rule: a test that fails is run once more on fresh output and the test fails only if the
repeat fails too. This is the re-examination on a different sample that SP 800-22 section 4.2.1
prescribes for an out-of-range proportion; without it a sound generator would fail one of the
sixteen tests about one run in six by chance alone.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, MutableSequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from scipy.special import gammaincc
from scipy.stats import chi2 as chi2_dist

from firmware.rng import sp800_22

#: Significance level of each SP 800-22 P-value (the standard's recommendation).
SP800_22_ALPHA = 0.01
#: Threshold on the uniformity P-value_T (SP 800-22 section 4.2.2).
UNIFORMITY_THRESHOLD = 0.0001
#: Fewest sequences for which the uniformity of P-values is judged (section 4.2.2).
UNIFORMITY_MIN_SEQUENCES = 55
#: Significance level of the distribution tests.
DISTRIBUTION_ALPHA = 0.001

#: Ranges of the ``randbelow`` uniformity tests.
RANDBELOW_RANGES = (3, 7, 52, 416, 3 * 2**30)
#: Bins for ranges too large to count every outcome.
LARGE_RANGE_BINS = 1000


class BatterySource(Protocol):
    """What the battery needs of a generator (``RngService`` has all of it)."""

    def random_bytes(self, n: int) -> bytes: ...

    def randbelow(self, n: int) -> int: ...

    def shuffle(self, items: MutableSequence[Any]) -> None: ...


@dataclass(frozen=True, slots=True)
class BatteryConfig:
    """How much output each test consumes. The defaults are the lab-grade run."""

    sequences: int = 100
    bits: int = 1_000_000
    shuffles_52: int = 20_000
    shuffles_416: int = 4_000
    draws: int = 200_000

    def __post_init__(self) -> None:
        if self.sequences < 1:
            raise ValueError(f"the battery needs at least 1 sequence, not {self.sequences}")
        if self.bits < sp800_22.MIN_BITS or self.bits % 8:
            raise ValueError(f"sequences must be a multiple of 8 bits and at least "
                             f"{sp800_22.MIN_BITS}, not {self.bits}")
        for name in ("shuffles_52", "shuffles_416", "draws"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")

    def scaled(self, factor: float) -> BatteryConfig:
        """The same battery with the distribution tests' sample sizes scaled by ``factor``."""
        return BatteryConfig(self.sequences, self.bits,
                             max(1, round(self.shuffles_52 * factor)),
                             max(1, round(self.shuffles_416 * factor)),
                             max(1, round(self.draws * factor)))


@dataclass(slots=True)
class TestResult:
    """One test's verdict with the figures it was judged on (the last attempt's)."""

    name: str
    family: str                      # "sp800-22" or "distribution"
    p_value: float
    passed: bool
    attempts: int = 1
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "p_value": self.p_value,
                "verdict": "PASS" if self.passed else "FAIL", "attempts": self.attempts,
                **self.detail}


@dataclass(slots=True)
class BatteryReport:
    config: BatteryConfig
    tests: list[TestResult]
    seconds: float

    @property
    def passed(self) -> bool:
        return all(t.passed for t in self.tests)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": "PASS" if self.passed else "FAIL",
            "sequences": self.config.sequences,
            "bits": self.config.bits,
            "alpha": SP800_22_ALPHA,
            "min_passing_sequences": min_passing(self.config.sequences),
            "distribution_alpha": DISTRIBUTION_ALPHA,
            "seconds": round(self.seconds, 3),
            "tests": [t.to_json() for t in self.tests],
        }


#: ``progress(phase, done, total)``: called as work completes.
Progress = Callable[[str, int, int], None]


def min_passing(sequences: int, alpha: float = SP800_22_ALPHA) -> int:
    """The fewest sequences that must pass for the proportion rule (SP 800-22 section 4.2.1)."""
    p_hat = 1 - alpha
    return math.ceil(sequences * (p_hat - 3 * math.sqrt(p_hat * alpha / sequences)))


def uniformity_p_value(p_values: np.ndarray) -> float:
    """P-value_T of section 4.2.2: ten equal bins over [0, 1], chi-square with 9 degrees of freedom."""
    counts = np.bincount(np.minimum((p_values * 10).astype(np.int64), 9), minlength=10)
    expected = p_values.size / 10
    chi2 = float(np.sum((counts - expected) ** 2) / expected)
    return float(gammaincc(9 / 2, chi2 / 2))


# --- SP 800-22 ---------------------------------------------------------------------------------


def sp800_22_p_values(source: BatterySource, config: BatteryConfig,
                      progress: Progress | None = None) -> dict[str, np.ndarray]:
    """Each stream's P-values over ``config.sequences`` fresh sequences of the raw stream."""
    params = sp800_22.parameters(config.bits)
    streams: dict[str, list[float]] = {}
    for i in range(config.sequences):
        bits = np.unpackbits(np.frombuffer(source.random_bytes(config.bits // 8), dtype=np.uint8))
        for stream, p in sp800_22.all_p_values(bits, params).items():
            streams.setdefault(stream, []).append(p)
        if progress:
            progress("sp800-22", i + 1, config.sequences)
    return {name: np.asarray(values) for name, values in streams.items()}


def judge_stream(name: str, p_values: np.ndarray) -> TestResult:
    m = p_values.size
    passing = int(np.count_nonzero(p_values >= SP800_22_ALPHA))
    needed = min_passing(m)
    if m == 1:
        p_value, uniform_judged, uniform_ok = float(p_values[0]), False, True
    else:
        p_value = uniformity_p_value(p_values)
        uniform_judged = m >= UNIFORMITY_MIN_SEQUENCES
        uniform_ok = not uniform_judged or p_value >= UNIFORMITY_THRESHOLD
    return TestResult(name, "sp800-22", p_value, passing >= needed and uniform_ok, detail={
        "passing_sequences": passing, "sequences": m, "uniformity_judged": uniform_judged,
        "min_p_value": float(p_values.min()),
    })


# --- distributions ----------------------------------------------------------------------------


def card_position_test(source: BatterySource, cards: int, shuffles: int,
                       progress: Progress | None = None) -> tuple[float, dict[str, Any]]:
    """Chi-square of card-by-position counts over ``shuffles`` shuffles of ``cards`` distinct cards."""
    positions = np.empty((shuffles, cards), dtype=np.int64)
    ordered = list(range(cards))
    step = max(1, shuffles // 50)
    for s in range(shuffles):
        # Every shuffle starts from the same order: shuffling the previous result would hide
        # a biased shuffle behind the randomness of its starting order.
        deck = ordered.copy()
        source.shuffle(deck)
        positions[s] = deck
        if progress and (s + 1) % step == 0:
            progress(f"shuffle_{cards}", s + 1, shuffles)
    # counts[card, position]
    flat = positions * cards + np.arange(cards)
    counts = np.bincount(flat.ravel(), minlength=cards * cards)
    expected = shuffles / cards
    pearson = float(np.sum((counts - expected) ** 2) / expected)
    statistic = pearson * (cards - 1) / cards
    dof = (cards - 1) ** 2
    return float(chi2_dist.sf(statistic, dof)), {
        "statistic": round(statistic, 3), "dof": dof, "samples": shuffles}


def _bin_edges(n: int, bins: int) -> np.ndarray:
    """Value ``v`` of ``[0, n)`` goes to bin ``v * bins // n``; edges[b] is the first value of bin b."""
    return np.array([-(-b * n // bins) for b in range(bins + 1)], dtype=np.float64)


def randbelow_test(source: BatterySource, n: int, draws: int,
                   progress: Progress | None = None) -> tuple[float, dict[str, Any]]:
    """Chi-square of ``randbelow(n)`` outcomes against the uniform distribution (binned when large)."""
    randbelow = source.randbelow
    step = max(1, draws // 20)
    values = np.empty(draws, dtype=np.int64)
    for i in range(draws):
        values[i] = randbelow(n)
        if progress and (i + 1) % step == 0:
            progress(f"randbelow_{n}", i + 1, draws)
    if values.min() < 0 or values.max() >= n:
        return 0.0, {"statistic": None, "dof": None, "samples": draws,
                     "error": f"outcome outside [0, {n})"}
    if n <= LARGE_RANGE_BINS:
        observed = np.bincount(values, minlength=n)
        expected = np.full(n, draws / n)
    else:
        bins = LARGE_RANGE_BINS
        observed = np.bincount(values * bins // n, minlength=bins)
        expected = np.diff(_bin_edges(n, bins)) * (draws / n)
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    dof = observed.size - 1
    return float(chi2_dist.sf(statistic, dof)), {
        "statistic": round(statistic, 3), "dof": dof, "samples": draws}


# --- the battery -------------------------------------------------------------------------------


def _distribution_tests(config: BatteryConfig) -> list[tuple[str, Callable[..., Any]]]:
    tests: list[tuple[str, Callable[..., Any]]] = [
        ("shuffle_52", lambda src, pr: card_position_test(src, 52, config.shuffles_52, pr)),
        ("shuffle_416", lambda src, pr: card_position_test(src, 416, config.shuffles_416, pr)),
    ]
    for n in RANDBELOW_RANGES:
        tests.append((f"randbelow_{n}",
                      lambda src, pr, n=n: randbelow_test(src, n, config.draws, pr)))
    return tests


def run_battery(source: BatterySource, config: BatteryConfig | None = None,
                progress: Progress | None = None) -> BatteryReport:
    """Run every test on ``source``, repeating a failed one once on fresh output."""
    config = config or BatteryConfig()
    started = time.perf_counter()
    results: list[TestResult] = []

    first = {name: judge_stream(name, p)
             for name, p in sp800_22_p_values(source, config, progress).items()}
    if not all(r.passed for r in first.values()):
        second = sp800_22_p_values(source, config, progress)
        for name, result in first.items():
            if not result.passed:
                retry = judge_stream(name, second[name])
                retry.attempts = 2
                retry.detail["first_attempt"] = {"p_value": result.p_value, **result.detail}
                first[name] = retry
    results.extend(first.values())

    for name, test in _distribution_tests(config):
        p_value, detail = test(source, progress)
        result = TestResult(name, "distribution", p_value, p_value >= DISTRIBUTION_ALPHA, 1, detail)
        if not result.passed:
            p_value, detail = test(source, progress)
            detail["first_attempt"] = {"p_value": result.p_value, **result.detail}
            result = TestResult(name, "distribution", p_value, p_value >= DISTRIBUTION_ALPHA, 2,
                                detail)
        results.append(result)

    return BatteryReport(config, results, time.perf_counter() - started)
