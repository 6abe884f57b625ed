"""The SP 800-22 tests reproduce the standard's worked examples and its results for e.

Sections 2.x.4 give short example sequences, 2.x.8 the first 100 bits of pi and the first
1,000,000 bits of e (both computed here, exactly, from integer series); the expected P-values
are the published ones, to the six digits the standard prints.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from firmware.rng import sp800_22 as sts


def _pi_bits(n: int) -> np.ndarray:
    """The first ``n`` bits of pi's binary expansion ("11.0010 0100 ..."), by Machin's formula."""
    guard = 64
    scale = 1 << (n - 2 + guard)

    def arctan_inverse(x: int) -> int:
        total, term, k, sign = 0, scale // x, 1, 1
        while term:
            total += sign * (term // k)
            term //= x * x
            k += 2
            sign = -sign
        return total

    pi_scaled = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))
    return sts.bits_from_text(bin(pi_scaled >> guard)[2:])


def _e_bits(n: int) -> np.ndarray:
    """The first ``n`` bits of e ("10.1011 0111 ..."): sum of 1/k! by binary splitting."""

    def split(a: int, b: int) -> tuple[int, int]:
        # p/q = sum over k in (a, b] of a!/k!
        if b - a == 1:
            return 1, b
        mid = (a + b) // 2
        p1, q1 = split(a, mid)
        p2, q2 = split(mid, b)
        return p1 * q2 + p2, q1 * q2

    terms = 2
    while math.lgamma(terms + 1) / math.log(2) < n + 64:
        terms *= 2
    p, q = split(0, terms)                     # e = 1 + p/q
    return sts.bits_from_text(bin(((q + p) << (n - 2)) // q)[2:])


PI_100 = ("1100100100001111110110101010001000100001011010001100001000110100"
          "110001001100011001100010100010111000")


@pytest.fixture(scope="module")
def e_million() -> np.ndarray:
    bits = _e_bits(1_000_000)
    assert bits.size == 1_000_000
    return bits


def test_pi_bits_are_the_standards_example_string():
    assert "".join(map(str, _pi_bits(100))) == PI_100


# --- sections 2.x.4: the short examples -----------------------------------------------------


def test_short_examples():
    assert sts.frequency(sts.bits_from_text("1011010101")) == pytest.approx(0.527089, abs=1e-6)
    assert sts.block_frequency(sts.bits_from_text("0110011010"), 3) == pytest.approx(0.801252, abs=1e-6)
    assert sts.runs(sts.bits_from_text("1001101011")) == pytest.approx(0.147232, abs=1e-6)
    p1, p2 = sts.serial(sts.bits_from_text("0011011101"), 3)
    assert (p1, p2) == (pytest.approx(0.808792, abs=1e-6), pytest.approx(0.670320, abs=1e-6))
    assert sts.approximate_entropy(sts.bits_from_text("0100110101"), 3) == pytest.approx(
        0.261961, abs=1e-6)
    forward, _ = sts.cumulative_sums(sts.bits_from_text("1011010111"))
    assert forward == pytest.approx(0.4116588, abs=1e-6)


def test_longest_run_example_of_128_bits():
    bits = sts.bits_from_text(
        "11001100000101010110110001001100111000000000001001001101010100010001001111010110100000"
        "001101011111001100111001101101100010110010")
    assert sts.longest_run(bits) == pytest.approx(0.180609, abs=1e-6)


# --- sections 2.x.8: 100 bits of pi -----------------------------------------------------------


def test_pi_examples():
    bits = _pi_bits(100)
    assert sts.frequency(bits) == pytest.approx(0.109599, abs=1e-6)
    assert sts.block_frequency(bits, 10) == pytest.approx(0.706438, abs=1e-6)
    assert sts.runs(bits) == pytest.approx(0.500798, abs=1e-6)
    assert sts.approximate_entropy(bits, 2) == pytest.approx(0.235301, abs=1e-6)
    forward, backward = sts.cumulative_sums(bits)
    assert forward == pytest.approx(0.219194, abs=1e-6)
    assert backward == pytest.approx(0.114866, abs=1e-6)


# --- 1,000,000 bits of e ----------------------------------------------------------------------


def test_e_examples(e_million):
    bits = e_million
    assert sts.frequency(bits) == pytest.approx(0.953749, abs=1e-6)
    assert sts.block_frequency(bits, 128) == pytest.approx(0.211072, abs=1e-6)
    assert sts.runs(bits) == pytest.approx(0.561917, abs=1e-6)
    assert sts.longest_run(bits) == pytest.approx(0.718945, abs=1e-6)
    assert sts.serial(bits, 2) == (pytest.approx(0.843764, abs=1e-6), pytest.approx(0.561915, abs=1e-6))
    assert sts.serial(bits, 16) == (pytest.approx(0.766182, abs=1e-6),
                                    pytest.approx(0.462921, abs=1e-6))
    assert sts.approximate_entropy(bits, 10) == pytest.approx(0.700073, abs=1e-6)
    assert sts.cumulative_sums(bits) == (pytest.approx(0.669887, abs=1e-6),
                                         pytest.approx(0.724266, abs=1e-6))


def test_the_battery_parameters_for_a_million_bits_are_the_appendix_ones(e_million):
    params = sts.parameters(1_000_000)
    assert (params.block_frequency_m, params.serial_m, params.approximate_entropy_m) == (128, 16, 10)
    p = sts.all_p_values(e_million)
    assert list(p) == [s for streams in sts.STREAMS.values() for s in streams]
    assert p["serial_1"] == pytest.approx(0.766182, abs=1e-6)
    assert p["approximate_entropy"] == pytest.approx(0.700073, abs=1e-6)


# --- the probabilities behind the longest-run test -------------------------------------------


def test_exact_longest_run_probabilities_by_enumeration():
    """The DP agrees with counting all 256 blocks of 8 bits; pi_3 is 48/256, not 0.2266."""
    longest = [max(len(r) for r in format(v, "08b").split("0")) for v in range(256)]
    classes = [min(max(x, 1), 4) - 1 for x in longest]
    expected = tuple(classes.count(c) / 256 for c in range(4))
    assert sts.longest_run_probabilities(8, (1, 2, 3, 4)) == pytest.approx(expected, abs=1e-15)
    assert expected[3] == 0.1875


# --- refusals ---------------------------------------------------------------------------------


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="0 and 1"):
        sts.bits_from_text("01012")
    with pytest.raises(ValueError, match="at least 128"):
        sts.parameters(100)
    with pytest.raises(ValueError, match="128 bits"):
        sts.longest_run(sts.bits_from_text("01" * 50))


def test_a_constant_sequence_fails_everything():
    bits = np.ones(20_000, dtype=np.uint8)
    assert all(p < 0.01 for p in sts.all_p_values(bits).values())
