"""The RNG as the lab examines it (GLI-11's RNG requirements): raw output for the lab's own
batteries with the product's SP 800-22 battery over it, scaled outcomes and shuffles judged by
chi-square, the entropy source's health tests on a forced failure (in process and on the simulated
cabinet), and independent output after every cold boot.

Every statistical check is judged at a per-check significance derived from a family-wise
false-alarm rate of :data:`FAMILY_ALPHA` per test (Sidak, :func:`firmware.hil.checks_rng.sidak`):
a sound generator makes a test fail by chance about once in a thousand runs, whatever the number of
ranges or mechanisms it covers; the biases these tests exist for (modulo reduction, a shuffle that
swaps with any position, a shoe off by one) give chi-squares with a non-centrality in the tens of
thousands at these sample sizes, against limits below 600 (tests/hil/test_rng_fails.py shows them
failing).

The known-answer tests are ``rng.kat`` (HMAC_DRBG, test_rng_kat.py) and ``rng.kat-ctr`` (here).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from firmware.cards.source import RngShoe
from firmware.hil.checks_rng import (
    egm,
    mechanisms,
    overlaps,
    position_chi2,
    sidak,
    uniform_chi2,
)
from firmware.hil.errors import TargetError, raised
from firmware.hil.operator import Operator
from firmware.hil.recorder import Recorder
from firmware.hil.target import Target
from firmware.rng.battery import SP800_22_ALPHA, UNIFORMITY_THRESHOLD, judge_stream, min_passing
from firmware.rng.errors import EntropyError
from firmware.rng.health import HealthTestedEntropy
from firmware.rng.service import RngService
from firmware.rng.sp800_22 import all_p_values, parameters

#: Family-wise false-alarm rate of each statistical test (all its checks together).
FAMILY_ALPHA = 0.001
RNG_SECTION = "GLI-11 'Random Number Generator (RNG) Requirements'"


# --- rng.kat-ctr -----------------------------------------------------------------------------
@pytest.mark.hil(id="rng.kat-ctr", standard="gli-11",
                 clause="3.3 Random Number Generator (RNG) Requirements (approx.)",
                 requirement="The random number generator must be shown to produce the right output: the "
                             "CTR_DRBG mechanism the terminal can be configured with reproduces the published "
                             f"known-answer vectors exactly. (Section number approximate: {RNG_SECTION}.)",
                 title="CTR_DRBG known-answer tests pass (egm rng kat --mechanism ctr-drbg)", operator=False,
                 duration=5, targets=("sim", "cabinet"))
def test_kat_ctr(record):
    record.step("egm rng kat --mechanism ctr-drbg --json (the built-in NIST CAVP CTR_DRBG AES-256 vectors)")
    done = egm("rng", "kat", "--mechanism", "ctr-drbg", "--json")
    record.measure("egm rng kat: exit status", done.returncode, equals=0, soft=True)
    answer = json.loads(done.stdout)
    record.attach("kat-ctr", answer, "json")
    vectors = answer.get("vectors", [])
    for vector in vectors:
        record.measure(f"vector {vector.get('name')}: {vector.get('mechanism')} result", vector.get("result"),
                       equals="PASS", soft=True)
    record.measure("CTR_DRBG vectors run", sum(1 for v in vectors if v.get("mechanism") == "ctr-drbg"), low=28)
    record.measure("vectors failed (the command's count)", answer.get("failed"), equals=0)


# --- rng.dump ---------------------------------------------------------------------------------
#: SP 800-22 over the dump: sequences of bits, as the product's own self-test runs it.
SEQUENCES = 100
SEQUENCE_BITS = 1_000_000
#: Twice what one pass needs: a stream that fails is judged again on the second half (the
#: product's repeat rule, SP 800-22 section 4.2.1: re-examine an out-of-range proportion).
DUMP_BYTES = 2 * SEQUENCES * SEQUENCE_BITS // 8


def _battery_over_dump(record: Recorder, data: bytes, mechanism: str) -> None:
    """The product's SP 800-22 battery over ``data``; each stream's proportion and uniformity measured."""
    params = parameters(SEQUENCE_BITS)
    half = SEQUENCES * SEQUENCE_BITS // 8
    step = SEQUENCE_BITS // 8

    def p_values(start: int) -> dict[str, np.ndarray]:
        streams: dict[str, list[float]] = {}
        for i in range(SEQUENCES):
            chunk = data[start + i * step:start + (i + 1) * step]
            bits = np.unpackbits(np.frombuffer(chunk, dtype=np.uint8))
            for name, p in all_p_values(bits, params).items():
                streams.setdefault(name, []).append(p)
        return {name: np.asarray(values) for name, values in streams.items()}

    first = p_values(0)
    second: dict[str, np.ndarray] | None = None
    needed = min_passing(SEQUENCES)
    for name, values in first.items():
        result = judge_stream(name, values)
        attempt = "first half"
        if not result.passed:
            if second is None:
                second = p_values(half)
            record.note(f"{mechanism} {name}: failed on the first half of the dump (passing "
                        f"{result.detail['passing_sequences']}, P-value_T {result.p_value:.6f}); judged again "
                        f"on the second half (SP 800-22 4.2.1)")
            result = judge_stream(name, second[name])
            attempt = "second half"
        record.measure(f"{mechanism} SP 800-22 {name}: sequences with p >= {SP800_22_ALPHA} ({attempt})",
                       result.detail["passing_sequences"], low=needed, soft=True)
        record.measure(f"{mechanism} SP 800-22 {name}: uniformity P-value_T ({attempt})", result.p_value,
                       low=UNIFORMITY_THRESHOLD, soft=True)


@pytest.mark.hil(id="rng.dump", standard="gli-11", clause="3.3.2 RNG Statistical Testing (approx.)",
                 requirement="The test lab must be able to collect the raw output of the RNG for its own "
                             "statistical batteries, and the output must pass the standard randomness tests. "
                             f"(Section number approximate: {RNG_SECTION}.)",
                 title="Raw RNG output collected for the lab; SP 800-22 battery over it", operator=False,
                 duration=15, targets=("sim", "cabinet"))
def test_dump(record):
    with tempfile.TemporaryDirectory(prefix="egm-hil-dump-") as folder:
        for mechanism in mechanisms():
            out = Path(folder) / f"{mechanism}.bin"
            args = ["rng", "dump", "--bytes", str(DUMP_BYTES), "--mechanism", mechanism, "--out", str(out)]
            record.step(f"egm {' '.join(args[:-1])} {out.name} (a fresh process, the production instantiation)")
            started = time.perf_counter()
            done = egm(*args)
            seconds = time.perf_counter() - started
            record.measure(f"{mechanism} dump: exit status", done.returncode, equals=0)
            size = out.stat().st_size if out.exists() else -1
            record.measure(f"{mechanism} dump: bytes written", size, equals=DUMP_BYTES, unit="bytes")
            record.measure(f"{mechanism} dump: wall time (information, no limit)", round(seconds, 3), unit="s")
            record.measure(f"{mechanism} dump: throughput, the process start included (information, no limit)",
                           round(size / seconds / 1e6, 1), unit="MB/s")
            data = out.read_bytes()
            record.attach(f"{mechanism}-dump-first-1KiB-hex", data[:1024].hex())
            record.step(f"the product's SP 800-22 battery (firmware.rng.battery, as egm rng selftest runs it) "
                        f"over {SEQUENCES} sequences of {SEQUENCE_BITS:,} bits of the {mechanism} dump")
            _battery_over_dump(record, data, mechanism)
            out.unlink()


# --- rng.outcomes-chi2 ------------------------------------------------------------------------
#: Ranges the games draw from: a coin, a die, a rank, a deck, a six-deck and an eight-deck shoe.
OUTCOME_RANGES = (2, 6, 13, 52, 312, 416)
OUTCOME_COUNT = 200_000


@pytest.mark.hil(id="rng.outcomes-chi2", standard="gli-11", clause="3.3.3 Scaling Algorithms (approx.)",
                 requirement="Scaling the RNG's output to the range a game needs must not favour any outcome: "
                             "every value of each range the games use is equally likely. "
                             f"(Section number approximate: {RNG_SECTION}.)",
                 title="Scaled outcomes uniform over the ranges the games use (chi-square)", operator=False,
                 duration=15, targets=("sim", "cabinet"))
def test_outcomes_chi2(record):
    chosen = mechanisms()
    alpha = sidak(FAMILY_ALPHA, len(OUTCOME_RANGES) * len(chosen))
    record.note(f"per-range limit p >= {alpha:.3g}: family-wise false-alarm rate {FAMILY_ALPHA} over "
                f"{len(OUTCOME_RANGES) * len(chosen)} independent chi-squares (Sidak)")
    for mechanism in chosen:
        for n in OUTCOME_RANGES:
            args = ["rng", "outcomes", "--range", str(n), "--count", str(OUTCOME_COUNT), "--mechanism", mechanism]
            record.step(f"egm {' '.join(args)}")
            done = egm(*args)
            record.measure(f"{mechanism} range {n}: exit status", done.returncode, equals=0)
            values = np.array(done.stdout.split(), dtype=np.int64)
            record.measure(f"{mechanism} range {n}: outcomes returned", int(values.size), equals=OUTCOME_COUNT)
            outside = int(np.count_nonzero((values < 0) | (values >= n)))
            record.measure(f"{mechanism} range {n}: outcomes outside 0..{n - 1}", outside, equals=0)
            fit = uniform_chi2(np.bincount(values, minlength=n))
            record.note(f"{mechanism} range {n}: chi-square {fit.statistic:.1f} with {fit.dof} degrees of freedom")
            record.measure(f"{mechanism} range {n}: chi-square p-value", fit.p_value, low=alpha, soft=True)


# --- rng.shuffle ------------------------------------------------------------------------------
SHUFFLES = 100_000
DECK = 8
PERMUTED = 4


def _deal_by_shuffle(rng: RngService, n: int) -> list[int]:
    deck = list(range(n))
    rng.shuffle(deck)
    return deck


def _deal_by_shoe(rng: RngService, n: int) -> list[int]:
    shoe = RngShoe(rng, range(n))
    return [int(shoe.next_card()) for _ in range(n)]


@pytest.mark.hil(id="rng.shuffle", standard="gli-11", clause="3.3.3 Scaling Algorithms: shuffling (approx.)",
                 requirement="Shuffling must make every ordering of the cards equally likely, so that every "
                             "card is equally likely in every position. "
                             f"(Section number approximate: {RNG_SECTION}.)",
                 title="Shuffles uniform: card by position and all orderings (chi-square)", operator=False,
                 duration=10, targets=("sim", "cabinet"))
def test_shuffle(record):
    deals: dict[str, Callable[[RngService, int], list[int]]] = {
        "RngService.shuffle": _deal_by_shuffle, "RngShoe (the games' card source)": _deal_by_shoe}
    chosen = mechanisms()
    alpha = sidak(FAMILY_ALPHA, 2 * len(deals) * len(chosen))
    record.note(f"per-check limit p >= {alpha:.3g}: family-wise false-alarm rate {FAMILY_ALPHA} over "
                f"{2 * len(deals) * len(chosen)} chi-squares (Sidak); every shuffle starts from the same order")
    orders = {perm: i for i, perm in enumerate(itertools.permutations(range(PERMUTED)))}
    for mechanism in chosen:
        rng = RngService.production(mechanism=mechanism)
        for method, deal in deals.items():
            name = f"{mechanism} {method}"
            record.step(f"{SHUFFLES:,} deals of {DECK} distinct cards through {method} (production {mechanism})")
            counts = np.zeros((DECK, DECK), dtype=np.int64)
            for _ in range(SHUFFLES):
                for position, card in enumerate(deal(rng, DECK)):
                    counts[card, position] += 1
            fit = position_chi2(counts)
            record.note(f"{name}: card-by-position chi-square {fit.statistic:.1f}, {fit.dof} degrees of freedom")
            record.measure(f"{name}: card-by-position p-value ({DECK} cards)", fit.p_value, low=alpha, soft=True)

            record.step(f"{SHUFFLES:,} deals of {PERMUTED} cards through {method}: how often each of the 24 orderings")
            seen = np.zeros(len(orders) + 1, dtype=np.int64)      # the last cell: a deal that is no ordering
            for _ in range(SHUFFLES):
                seen[orders.get(tuple(deal(rng, PERMUTED)), len(orders))] += 1
            record.measure(f"{name}: deals of {PERMUTED} cards that are not an ordering of them", int(seen[-1]),
                           equals=0, soft=True)
            seen = seen[:-1]
            record.measure(f"{name}: orderings of {PERMUTED} cards seen", int(np.count_nonzero(seen)),
                           equals=len(orders), soft=True)
            fit = uniform_chi2(seen)
            record.note(f"{name}: orderings chi-square {fit.statistic:.1f}, {fit.dof} degrees of freedom; least "
                        f"{int(seen.min())}, most {int(seen.max())} of {SHUFFLES / len(orders):.0f} expected")
            record.measure(f"{name}: 24 orderings equally frequent, p-value", fit.p_value, low=alpha, soft=True)


# --- rng.health -------------------------------------------------------------------------------
HEALTH_REQUIREMENT = (
    "The RNG's entropy source must be checked continuously, and a failed source must stop the RNG "
    "from being seeded or used: the failure is detected, recorded, play stops, and only a technician "
    "can return the RNG to service once the source is sound. "
    f"(Section number approximate: {RNG_SECTION}.)")


class _Source:
    """A raw entropy source the test can break: os.urandom, a stuck byte, or one value every other byte."""

    def __init__(self) -> None:
        self.mode = "ok"

    def __call__(self, n: int) -> bytes:
        if self.mode == "stuck":
            return bytes([0x5A]) * n
        data = bytearray(os.urandom(n))
        if self.mode == "half":
            data[0::2] = bytes([0xA5]) * len(data[0::2])
        return bytes(data)


def _error(action: Callable[[], Any]) -> str:
    return raised(action, EntropyError)


def _refusal(action: Callable[[], Any]) -> str:
    return raised(action, TargetError)


@pytest.mark.hil(id="rng.health.source", standard="gli-11", clause="3.3.4 RNG Seeding and Entropy (approx.)",
                 requirement=HEALTH_REQUIREMENT,
                 title="Entropy health tests trip on a failed source; the RNG refuses to reseed or generate",
                 operator=False, duration=2, targets=("sim", "cabinet"))
def test_health_source(record):
    source = _Source()
    record.step("a stuck source (every byte 0x5A) through the product's HealthTestedEntropy")
    source.mode = "stuck"
    entropy = HealthTestedEntropy(source)
    message = _error(lambda: entropy.get(64))
    record.note(f"stuck source: {message}")
    record.measure("stuck source: repetition count test trips", "repetition count test" in message, equals=True)
    record.measure("stuck source: run length at the trip equals the cutoff",
                   f"repeated {entropy.rct_cutoff} times" in message, equals=True)
    source.mode = "ok"
    record.measure("stuck source: the failure latches (a sound source is refused until a reset)",
                   "stays disabled" in _error(lambda: entropy.get(64)), equals=True)
    entropy.reset()
    record.measure("after the technician's reset a sound source is accepted", len(entropy.get(64)), equals=64)

    record.step("a source giving 0xA5 as every other byte (no long runs) through HealthTestedEntropy")
    source.mode = "half"
    entropy = HealthTestedEntropy(source)
    message = _error(lambda: entropy.get(64))
    record.note(f"biased source: {message}")
    record.measure("biased source: adaptive proportion test trips", "adaptive proportion test" in message,
                   equals=True)

    record.step("a production RngService (reseed every generate request) whose source goes stuck after "
                "instantiation")
    source.mode = "ok"
    entropy = HealthTestedEntropy(source)
    rng = RngService.production(b"egm hil", reseed_interval=1, entropy=entropy)
    record.measure("sound source: first block generated", len(rng.random_bytes(1024)), equals=1024)
    source.mode = "stuck"
    message = _error(rng.reseed)
    record.note(f"forced reseed: {message}")
    record.measure("stuck source: a forced reseed is refused", "repetition count test" in message, equals=True)
    record.measure("stuck source: generating when a reseed is due is refused", bool(_error(lambda: rng.random_bytes(1))),
                   equals=True)
    source.mode = "ok"
    record.measure("sound source again: the service still refuses until a reset", bool(_error(rng.reseed)),
                   equals=True)


def _clear_rng_tilt(cabinet: Target, record: Recorder, *, expect_cleared: bool) -> str:
    """The technician's clear-tilt of rng:drbg in service mode; the refusal ("" if it cleared)."""
    refusal = _refusal(lambda: cabinet.service("clear-tilt", "rng:drbg", role="technician"))
    record.measure(f"service clear-tilt rng:drbg {'clears' if expect_cleared else 'is refused'}",
                   refusal == "", equals=expect_cleared)
    return refusal


@pytest.mark.hil(id="rng.health.cabinet", standard="gli-11", clause="3.3.4 RNG Seeding and Entropy (approx.)",
                 requirement=HEALTH_REQUIREMENT,
                 title="A stuck entropy source tilts the cabinet at reseed; play refused until repaired",
                 operator=False, duration=10, targets=("sim",))
def test_health_cabinet(cabinet, record, operator):
    try:
        _stuck_source_on_the_cabinet(cabinet, record, operator)
    except BaseException:
        _put_back(cabinet, record)
        raise


def _in_service(cabinet: Target) -> bool:
    return bool(cabinet.status()["state"] == "SERVICE")


def _put_back(cabinet: Target, record: Recorder) -> None:
    """After a test that stopped early: the source sound, the RNG tilt cleared, the key off, the
    credits cashed out, so that the next test starts clean (each step best effort)."""
    def rng_tilted() -> bool:
        return any(t.get("tilt") == "rng:drbg" for t in cabinet.status().get("tilts", []))

    steps: list[Callable[[], Any]] = [
        lambda: cabinet.sim("rng", "entropy", "ok"),
        lambda: rng_tilted() and not _in_service(cabinet) and cabinet.sim("key", "audit", "on"),
        lambda: rng_tilted() and cabinet.wait("SERVICE", timeout=10),
        lambda: rng_tilted() and cabinet.service("clear-tilt", "rng:drbg", role="technician"),
        lambda: _in_service(cabinet) and cabinet.sim("key", "audit", "off"),
        lambda: cabinet.wait("IDLE", timeout=30),
        lambda: cabinet.status().get("credits") and cabinet.cashout(),
    ]
    for step in steps:
        with contextlib.suppress(TargetError):
            step()
    record.note("the test stopped early; the cabinet was put back: entropy ok, the RNG tilt cleared, the key "
                "off, the credits cashed out (as far as it would go)")


def _stuck_source_on_the_cabinet(cabinet: Target, record: Recorder, operator: Operator) -> None:
    cabinet.wait("IDLE", timeout=60)
    record.step("sim rng reseed with a sound source")
    record.measure("sound source: reseed", cabinet.sim("rng", "reseed").get("reseeded"), equals=True)
    record.step("credit the cabinet ($20) so that a refused round is refused for the RNG, not for credit")
    cabinet.insert_note(20)
    record.step("sim rng entropy stuck; sim rng reseed")
    cabinet.sim("rng", "entropy", "stuck")
    answer = cabinet.sim("rng", "reseed")
    record.attach("reseed-stuck", answer, "json")
    record.measure("stuck source: reseed", answer.get("reseeded"), equals=False)
    record.measure("stuck source: the reason names the repetition count test",
                   "repetition count test" in str(answer.get("failure")), equals=True)
    status = cabinet.wait("TILT", timeout=30)
    record.attach("status-tilt", status, "json")
    with tempfile.TemporaryDirectory(prefix="egm-hil-screen-") as folder:
        shot = Path(folder) / "screen.png"
        if cabinet.screenshot(shot):
            record.attach("screen-rng-tilt", shot, "png")
    record.measure("cabinet state", status["state"], equals="TILT")
    record.measure("RNG tilt raised", [t["tilt"] for t in status.get("tilts", [])], equals=["rng:drbg"])
    failures = [e for e in cabinet.events(50) if e.get("event") == "rng_failure"]
    record.measure("rng_failure events recorded (during reseed)",
                   sum(1 for e in failures if e.get("during") == "reseed"), low=1)
    record.step("press DEAL: the round must be refused")
    refused = _refusal(cabinet.play)
    record.note(f"DEAL answered: {refused or 'accepted'}")
    record.measure("a round is refused while the RNG is tilted", bool(refused), equals=True)

    operator.do("turn the technician's key (service mode)", sim="key audit on",
                verify=lambda: cabinet.status()["state"] == "SERVICE")
    record.step("service clear-tilt rng:drbg (technician) with the source still stuck")
    refusal = _clear_rng_tilt(cabinet, record, expect_cleared=False)
    record.note(f"refused: {refusal}")
    record.step("sim rng entropy ok; service clear-tilt rng:drbg (technician)")
    cabinet.sim("rng", "entropy", "ok")
    _clear_rng_tilt(cabinet, record, expect_cleared=True)
    operator.do("turn the technician's key back", sim="key audit off",
                verify=lambda: cabinet.status()["state"] == "IDLE")
    status = cabinet.status()
    record.measure("after the repair: tilts", [t["tilt"] for t in status.get("tilts", [])], equals=[])
    record.step("play one round on the new instantiation, then cash out")
    rounds = cabinet.status().get("rounds_played", 0)
    record.measure("after the repair: a round is played", cabinet.play_rounds(1).get("rounds_played"),
                   equals=rounds + 1)
    retests = [e.get("result") for e in cabinet.events(50) if e.get("event") == "tilt_retest"]
    record.measure("tilt re-tests recorded (newest first)", retests[:2], equals=["passed", "failed"])
    cabinet.cashout()
    record.measure("credits after the cash-out", cabinet.status().get("credits"), equals=0)


# --- rng.cold-boot ----------------------------------------------------------------------------
BOOTS = 4
BOOT_BYTES = 256 * 1024
BLOCK = 16


@pytest.mark.hil(id="rng.cold-boot", standard="gli-11", clause="3.3.4 RNG Seeding and Entropy (approx.)",
                 requirement="Every power-up must seed the RNG afresh, so that no two power-ups produce the "
                             "same or overlapping output sequences. "
                             f"(Section number approximate: {RNG_SECTION}.)",
                 title="Fresh processes' production RNG output never overlaps", operator=False, duration=10,
                 targets=("sim", "cabinet"))
def test_cold_boot(record):
    for mechanism in mechanisms():
        streams: list[bytes] = []
        for boot in range(BOOTS):
            args = ["rng", "dump", "--bytes", str(BOOT_BYTES), "--mechanism", mechanism]
            record.step(f"boot {boot + 1}: egm {' '.join(args)} (a fresh process: the production instantiation)")
            done = egm(*args)
            record.measure(f"{mechanism} boot {boot + 1}: exit status", done.returncode, equals=0)
            record.measure(f"{mechanism} boot {boot + 1}: bytes", len(done.stdout), equals=BOOT_BYTES)
            streams.append(done.stdout)
        found = overlaps(streams, BLOCK)
        for hit in found[:5]:
            record.note(f"{mechanism}: boot {hit.a + 1} at byte {hit.a_offset} repeats boot {hit.b + 1} at byte "
                        f"{hit.b_offset}")
        record.measure(f"{mechanism}: {BLOCK}-byte blocks repeated within or across {BOOTS} boots "
                       f"({BOOTS} x {BOOT_BYTES:,} bytes, every offset; counting stops at 20)", len(found), equals=0)


def _first_cards(cabinet: Target) -> list[Any]:
    """The cards of the newest round (its recall record)."""
    last = cabinet.recall(1)[0]
    cards = last.get("cards_dealt")
    if not cards:
        raise TargetError(f"the recall record has no cards: keys {sorted(last)}")
    return list(cards)


@pytest.mark.hil(id="rng.cold-boot.cabinet", standard="gli-11",
                 clause="3.3.4 RNG Seeding and Entropy (approx.)",
                 requirement="Every power-up must seed the RNG afresh: the first cards dealt after each power-up "
                             "differ from those after the others. "
                             f"(Section number approximate: {RNG_SECTION}.)",
                 title="Each power-up deals a different first round", operator=True, duration=15,
                 targets=("sim", "cabinet"))
def test_cold_boot_cabinet(cabinet, record, operator):
    cabinet.wait("IDLE", timeout=60)
    record.note("the terminal exposes nothing it draws at power-up itself; the first round dealt after each "
                "power-up is the first use of that power-up's instantiation, so its cards are compared")
    cabinet.insert_note(20)
    try:
        _first_rounds_after_power_up(cabinet, record)
    finally:
        with contextlib.suppress(TargetError):
            cabinet.wait("IDLE", timeout=30)
            if cabinet.status().get("credits"):
                cabinet.cashout()
    record.measure("credits after the cash-out", cabinet.status().get("credits"), equals=0)


def _first_rounds_after_power_up(cabinet: Target, record: Recorder) -> None:
    deals: list[list[Any]] = []
    for boot in range(3):
        if boot:
            record.step(f"power cycle {boot}: mains off and on")
            cabinet.restart()
            cabinet.wait("IDLE", timeout=60)
        record.step(f"boot {boot + 1}: play one round")
        cabinet.play_rounds(1)
        deals.append(_first_cards(cabinet))
        record.note(f"boot {boot + 1}: first cards {deals[-1]}")
    record.attach("first-rounds", deals, "json")
    repeats = sum(1 for a, b in itertools.combinations(deals, 2) if a == b)
    record.measure("first rounds after power-up dealt the same cards (pairs)", repeats, equals=0)
