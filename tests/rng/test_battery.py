"""The self-test battery passes the certified generator and catches the classic RNG faults."""

from __future__ import annotations

import json

import numpy as np
import pytest

from firmware.cli import main
from firmware.rng import battery
from firmware.rng.battery import BatteryConfig, min_passing, run_battery, uniformity_p_value
from firmware.rng.service import RngService

#: Small enough for the default suite, large enough that every fault below is caught.
QUICK = BatteryConfig(sequences=100, bits=20_000, shuffles_52=10_000, shuffles_416=1_000,
                      draws=50_000)

SP800_22_STREAMS = ["frequency", "block_frequency", "runs", "longest_run", "serial_1", "serial_2",
                    "approximate_entropy", "cumulative_sums_forward", "cumulative_sums_backward"]
DISTRIBUTION_TESTS = ["shuffle_52", "shuffle_416", "randbelow_3", "randbelow_7", "randbelow_52",
                      "randbelow_416", "randbelow_3221225472"]


class Faulty:
    """A good RngService with one part replaced by a classic fault."""

    def __init__(self, seed: str) -> None:
        self.good = RngService.seeded(seed)

    def random_bytes(self, n: int) -> bytes:
        return self.good.random_bytes(n)

    def randbelow(self, n: int) -> int:
        return self.good.randbelow(n)

    def shuffle(self, items) -> None:
        self.good.shuffle(items)


class BiasedBits(Faulty):
    """Raw output whose bits are 1 with probability 0.52."""

    def __init__(self, seed: str) -> None:
        super().__init__(seed)
        self.np = np.random.default_rng(7)

    def random_bytes(self, n: int) -> bytes:
        return np.packbits(self.np.random(n * 8) < 0.52).tobytes()


class NaiveShuffle(Faulty):
    """Swaps every position with *any* position: n^n paths onto n! orders."""

    def shuffle(self, items) -> None:
        for i in range(len(items)):
            j = self.good.randbelow(len(items))
            items[i], items[j] = items[j], items[i]


class ModuloRandbelow(Faulty):
    """``randbits(32) % n``: for n = 3 * 2^30 the lowest third of the range is twice as likely."""

    def randbelow(self, n: int) -> int:
        return self.good.randbits(32) % n


class FlakyStart(Faulty):
    """Stuck at zero for the first 100 requests of raw output, then sound."""

    def __init__(self, seed: str) -> None:
        super().__init__(seed)
        self.requests = 0

    def random_bytes(self, n: int) -> bytes:
        self.requests += 1
        return bytes(n) if self.requests <= 100 else self.good.random_bytes(n)


def _by_name(report) -> dict:
    return {t.name: t for t in report.tests}


def test_the_certified_generator_passes_every_test():
    report = run_battery(RngService.seeded("battery"), QUICK)
    assert [t.name for t in report.tests] == SP800_22_STREAMS + DISTRIBUTION_TESTS
    assert report.passed, [t.to_json() for t in report.tests if not t.passed]
    doc = report.to_json()
    assert doc["verdict"] == "PASS" and doc["min_passing_sequences"] == 97
    for t in doc["tests"]:
        assert 0.0 <= t["p_value"] <= 1.0
        assert t["verdict"] == "PASS"


def test_biased_bits_fail_the_frequency_tests():
    tests = _by_name(run_battery(BiasedBits("b"), QUICK))
    for name in ("frequency", "block_frequency", "runs", "cumulative_sums_forward",
                 "cumulative_sums_backward"):
        assert not tests[name].passed and tests[name].attempts == 2, name
    # The dealing path is sound in this source, and the battery says so.
    assert all(tests[name].passed for name in DISTRIBUTION_TESTS)


def test_the_naive_shuffle_fails_both_card_position_tests():
    tests = _by_name(run_battery(NaiveShuffle("n"), QUICK))
    assert not tests["shuffle_52"].passed and not tests["shuffle_416"].passed
    assert tests["shuffle_52"].p_value < 1e-6 and tests["shuffle_52"].attempts == 2
    assert all(tests[name].passed for name in SP800_22_STREAMS)


def test_modulo_reduction_fails_the_awkward_range():
    tests = _by_name(run_battery(ModuloRandbelow("m"), QUICK))
    assert not tests["randbelow_3221225472"].passed
    assert tests["randbelow_3221225472"].p_value < 1e-12
    # 2^32 mod 3 = 1: a bias of 2^-32 that no sample can show; the battery does not invent one.
    assert tests["randbelow_3"].passed


def test_a_failure_is_repeated_once_on_fresh_output():
    source = FlakyStart("f")
    tests = _by_name(run_battery(source, QUICK))
    frequency = tests["frequency"]
    assert frequency.passed and frequency.attempts == 2
    assert frequency.detail["first_attempt"]["passing_sequences"] == 0
    assert frequency.detail["passing_sequences"] >= 97
    assert source.requests == 200                 # two batches of 100 sequences


def test_proportion_rule_and_uniformity():
    # SP 800-22 section 4.2.1: 1000 sequences at alpha 0.01 -> proportion >= 0.9805607.
    assert min_passing(1000) == 981
    assert min_passing(100) == 97
    assert min_passing(1) == 1
    assert uniformity_p_value(np.full(100, 0.55)) < 1e-30
    assert uniformity_p_value(np.arange(100) / 100 + 0.005) == pytest.approx(1.0)


def test_one_sequence_is_judged_on_its_own_p_value():
    report = run_battery(RngService.seeded("one"), BatteryConfig(
        sequences=1, bits=1_000_000, shuffles_52=100, shuffles_416=10, draws=1_000))
    frequency = _by_name(report)["frequency"]
    assert frequency.detail["sequences"] == 1 and frequency.detail["uniformity_judged"] is False
    assert frequency.p_value == frequency.detail["min_p_value"]


def test_card_position_statistic_is_calibrated():
    """Over many seeds, the scaled statistic has the chi-square mean (n-1)^2, not n(n-1)."""
    statistics = [battery.card_position_test(RngService.seeded(i), 52, 500)[1]["statistic"]
                  for i in range(40)]
    # mean of 40 draws of chi2(2601): sd of the mean = sqrt(2 * 2601 / 40) = 11.4
    assert abs(np.mean(statistics) - 51**2) < 4 * 11.4


def test_impossible_configurations_are_refused():
    with pytest.raises(ValueError, match="multiple of 8"):
        BatteryConfig(bits=1001)
    with pytest.raises(ValueError, match="at least 1 sequence"):
        BatteryConfig(sequences=0)


# --- egm rng selftest ---------------------------------------------------------------------------

ARGS = ["rng", "selftest", "--sequences", "60", "--bits", "8000", "--scale", "0.05"]


def test_cli_json(capsys):
    assert main([*ARGS, "--seed", "cli", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "PASS" and doc["source"] == "seeded"
    assert doc["sequences"] == 60 and doc["bits"] == 8000
    assert [t["name"] for t in doc["tests"]] == SP800_22_STREAMS + DISTRIBUTION_TESTS
    assert all({"p_value", "verdict"} <= set(t) for t in doc["tests"])


def test_cli_text_tests_the_production_source(capsys, monkeypatch):
    monkeypatch.setattr(RngService, "production", classmethod(lambda cls, **_: RngService.seeded("p")))
    assert main(ARGS) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("RNG self-test (production source)")
    assert lines[1].startswith("frequency") and "p=" in lines[1]
    assert lines[-1].startswith("PASS")


def test_cli_exit_status_is_1_on_failure(capsys, monkeypatch):
    biased = BiasedBits("x")
    monkeypatch.setattr(RngService, "seeded", classmethod(lambda cls, seed, **_: biased))
    assert main([*ARGS, "--seed", "x"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("FAIL")


def test_cli_refuses_bad_sizes(capsys):
    assert main(["rng", "selftest", "--bits", "1001"]) == 2
    assert "multiple of 8" in capsys.readouterr().err
    assert main(["rng", "selftest", "--scale", "0"]) == 2
