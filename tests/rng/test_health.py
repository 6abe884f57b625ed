"""SP 800-90B continuous health tests (repetition count, adaptive proportion) and the startup test."""

from __future__ import annotations

import itertools
import os

import pytest
from scipy.stats import binom

from firmware.rng.errors import EntropyError, RngRangeError
from firmware.rng.health import (
    APT_WINDOW,
    ASSESSED_MIN_ENTROPY_BITS,
    ENTROPY_INPUT_BYTES,
    NONCE_BYTES,
    STARTUP_SAMPLES,
    HealthTestedEntropy,
    apt_cutoff,
    rct_cutoff,
)


class Scripted:
    """An entropy source that plays an endless byte pattern and counts what it was asked for."""

    def __init__(self, pattern: bytes) -> None:
        self._bytes = itertools.cycle(pattern)
        self.requests: list[int] = []

    def __call__(self, n: int) -> bytes:
        self.requests.append(n)
        return bytes(itertools.islice(self._bytes, n))


def _no_runs_filler(n: int) -> list[int]:
    """``n`` non-zero bytes with no two equal neighbours and no value twice within 255."""
    return [1 + i % 255 for i in range(n)]


def _window_with_zeros(zeros: int) -> bytes:
    """One APT window (512 samples) starting with 0x00, holding ``zeros`` zeros, none adjacent."""
    filler = iter(_no_runs_filler(APT_WINDOW))
    window = []
    for i in range(APT_WINDOW):
        window.append(0 if i % 2 == 0 and i // 2 < zeros else next(filler))
    return bytes(window)


# --- cutoffs -------------------------------------------------------------------------------------


def test_cutoffs_reproduce_sp800_90b_table_2():
    assert [apt_cutoff(h) for h in (0.5, 1, 2, 4, 8)] == [410, 311, 177, 62, 13]


@pytest.mark.parametrize("h", [1, 2, 3, 4, 5, 6, 7, 8])
def test_apt_cutoff_is_the_binomial_critical_value(h):
    assert apt_cutoff(h) == 1 + int(binom.isf(2.0**-20, APT_WINDOW, 2.0**-h))


def test_rct_cutoff_formula():
    assert [rct_cutoff(h) for h in (1, 2, 4, 8)] == [21, 11, 6, 4]


def test_chosen_h_and_seeding_sizes():
    source = HealthTestedEntropy(os.urandom)
    assert ASSESSED_MIN_ENTROPY_BITS == 4
    assert (source.rct_cutoff, source.apt_cutoff) == (6, 62)
    # The claimed entropy alone reaches the DRBG's 256-bit strength and the nonce's 128 bits.
    assert ENTROPY_INPUT_BYTES * ASSESSED_MIN_ENTROPY_BITS >= 256
    assert NONCE_BYTES * ASSESSED_MIN_ENTROPY_BITS >= 128


# --- the tests trip on bad sources ---------------------------------------------------------------


def test_stuck_source_trips_the_repetition_count_test_and_latches():
    source = HealthTestedEntropy(lambda n: bytes(n))
    with pytest.raises(EntropyError, match="repetition count test"):
        source.get(32)
    assert source.failed
    assert "0x00 repeated 6 times" in source.failure


def test_repetition_count_boundary():
    runs_of = lambda length: bytes(v for v in range(1, 256) for _ in range(length))  # noqa: E731
    healthy = HealthTestedEntropy(Scripted(runs_of(rct_cutoff() - 1)))
    assert len(healthy.get(10_000)) == 10_000
    with pytest.raises(EntropyError, match="repetition count"):
        HealthTestedEntropy(Scripted(runs_of(rct_cutoff()))).get(1)


def test_value_emitted_40_percent_of_the_time_trips_the_adaptive_proportion_test():
    # 0x00 as 2 of every 5 bytes, never twice in a row: the RCT alone would not notice.
    filler = iter(_no_runs_filler(3 * 1000))
    pattern = bytes(
        b for _ in range(1000) for b in (0, next(filler), 0, next(filler), next(filler))
    )
    source = HealthTestedEntropy(Scripted(pattern))
    with pytest.raises(EntropyError, match="adaptive proportion test"):
        source.get(32)
    assert source.failed


def test_adaptive_proportion_boundary():
    healthy = HealthTestedEntropy(Scripted(_window_with_zeros(apt_cutoff() - 1)))
    assert len(healthy.get(20 * APT_WINDOW)) == 20 * APT_WINDOW
    assert not healthy.failed
    with pytest.raises(EntropyError, match="adaptive proportion"):
        HealthTestedEntropy(Scripted(_window_with_zeros(apt_cutoff()))).get(1)


def test_failure_is_latched_until_reset():
    healthy = os.urandom
    broken = [True]
    source = HealthTestedEntropy(lambda n: bytes(n) if broken[0] else healthy(n))
    with pytest.raises(EntropyError):
        source.get(16)
    broken[0] = False  # the source recovers by itself ...
    with pytest.raises(EntropyError, match="until a technician reset"):
        source.get(16)  # ... but stays failed
    assert source.failed
    source.reset()
    assert not source.failed and source.failure is None
    assert len(source.get(16)) == 16


def test_short_read_and_os_error_are_failures():
    short = HealthTestedEntropy(lambda n: os.urandom(n - 1))
    with pytest.raises(EntropyError, match="instead of"):
        short.get(8)
    assert short.failed

    def unreadable(n: int) -> bytes:
        raise OSError("getrandom failed")

    failing = HealthTestedEntropy(unreadable)
    with pytest.raises(EntropyError, match="getrandom failed"):
        failing.get(8)
    assert failing.failed


# --- startup and healthy operation ---------------------------------------------------------------


def test_startup_test_draws_1024_samples_and_discards_them():
    counter = Scripted(bytes(_no_runs_filler(255)))
    source = HealthTestedEntropy(counter)
    first = source.get(10)
    assert counter.requests == [STARTUP_SAMPLES, 10]
    assert first == bytes(_no_runs_filler(STARTUP_SAMPLES + 10)[STARTUP_SAMPLES:])
    source.get(5)
    assert counter.requests == [STARTUP_SAMPLES, 10, 5]
    source.reset()
    source.get(5)
    assert counter.requests[-2:] == [STARTUP_SAMPLES, 5]  # a reset runs the startup test again


def test_startup_test_catches_a_broken_source_before_any_byte_is_released():
    source = HealthTestedEntropy(lambda n: bytes(n))
    with pytest.raises(EntropyError):
        source.startup_test()
    assert source.failed


def test_os_urandom_passes_one_megabyte_without_a_false_alarm():
    source = HealthTestedEntropy()
    for _ in range(16):
        assert len(source.get(65536)) == 65536
    assert not source.failed


def test_negative_request_is_refused():
    with pytest.raises(RngRangeError):
        HealthTestedEntropy().get(-1)
