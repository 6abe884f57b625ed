"""RngService: exact uniformity of the range mapping, byte-to-bits mapping, shuffles, seeding."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import Counter
from itertools import permutations

import pytest
from scipy.stats import chisquare

from firmware.rng.battery import card_position_test
from firmware.rng.errors import DrbgError, EntropyError, RngRangeError
from firmware.rng.health import ENTROPY_INPUT_BYTES, HealthTestedEntropy
from firmware.rng.hmac_drbg import HmacDrbg
from firmware.rng.interface import RandomSource
from firmware.rng.service import BLOCK_BYTES, RngService, randbelow_from


class _Rejected(Exception):
    """The stub source was asked for a second value: the first one was rejected."""


def _enumerate(width: int, n: int) -> tuple[Counter[int], int]:
    """Feed every ``width``-bit source value once to ``randbelow_from``; count outputs, rejects."""
    k = (n - 1).bit_length()
    assert k <= width
    outputs: Counter[int] = Counter()
    rejected = 0
    for source_value in range(2**width):
        calls: list[int] = []

        def randbits(bits: int, value: int = source_value, calls: list[int] = calls) -> int:
            assert bits == k, "randbelow must draw exactly (n - 1).bit_length() bits"
            if calls:
                raise _Rejected
            calls.append(bits)
            return value & ((1 << bits) - 1)

        try:
            out = randbelow_from(randbits, n)
        except _Rejected:
            assert source_value & ((1 << k) - 1) >= n, "an acceptable value was rejected"
            rejected += 1
            continue
        assert out == source_value & ((1 << k) - 1), "an accepted value must map to itself"
        outputs[out] += 1
    return outputs, rejected


@pytest.mark.parametrize(
    ("width", "n"),
    [(8, n) for n in (2, 3, 7, 52, 200, 255, 256)]
    + [(16, n) for n in (3, 7, 52, 200, 255, 256, 257, 416, 40000, 65535, 65536)],
)
def test_randbelow_is_exactly_uniform_over_every_source_value(width, n):
    outputs, rejected = _enumerate(width, n)
    k = (n - 1).bit_length()
    per_output = 2 ** (width - k)
    assert sorted(outputs) == list(range(n)), "every outcome must be reachable"
    assert set(outputs.values()) == {per_output}, "every outcome exactly equally often"
    assert rejected == (2**k - n) * per_output


def test_randbelow_of_one_draws_nothing_and_bad_n_is_refused():
    def no_draw(bits: int) -> int:
        raise AssertionError("randbelow(1) must not draw")

    assert randbelow_from(no_draw, 1) == 0
    for bad in (0, -1, -(2**70)):
        with pytest.raises(RngRangeError):
            randbelow_from(no_draw, bad)
    assert issubclass(RngRangeError, ValueError)
    with pytest.raises(TypeError):
        randbelow_from(no_draw, 3.0)  # type: ignore[arg-type]


# --- the byte-to-bits mapping, with a scripted DRBG -----------------------------------------------


class CountingDrbg:
    """Stands in for HmacDrbg: generate() returns the byte stream 0, 1, 2, ... 255, 0, 1, ..."""

    def __init__(self) -> None:
        self.position = 0
        self.generate_calls: list[int] = []
        self.reseeds: list[bytes] = []
        self.zeroized = False

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes:
        if self.zeroized:
            raise DrbgError("zeroised")
        self.generate_calls.append(nbytes)
        out = bytes((self.position + i) % 256 for i in range(nbytes))
        self.position += nbytes
        return out

    def reseed(self, entropy: bytes, additional_input: bytes = b"") -> None:
        self.reseeds.append(entropy)

    def zeroize(self) -> None:
        self.zeroized = True


def test_randbits_takes_whole_bytes_big_endian_masked():
    rng = RngService(CountingDrbg())  # type: ignore[arg-type]
    assert rng.randbits(9) == 0x0001 & 0x1FF  # bytes 00 01
    assert rng.randbits(16) == 0x0203  # bytes 02 03
    assert rng.randbits(4) == 0x04 & 0xF  # byte 04
    assert rng.randbits(3) == 0x05 & 0x7  # byte 05: a whole byte even for 3 bits
    assert rng.randbits(24) == 0x060708
    assert rng.randbits(1) == 0x09 & 1
    assert rng.random_bytes(3) == bytes([10, 11, 12])  # one stream for bytes and bits
    assert rng.randbits(7) == 13


def test_the_stream_is_the_concatenation_of_drbg_blocks():
    drbg = CountingDrbg()
    rng = RngService(drbg)  # type: ignore[arg-type]
    rng.random_bytes(BLOCK_BYTES - 1)
    # The next 16 bits straddle two blocks: the last byte of the first, the first of the second.
    assert rng.randbits(16) == ((BLOCK_BYTES - 1) % 256) << 8 | (BLOCK_BYTES % 256)
    assert drbg.generate_calls == [BLOCK_BYTES, BLOCK_BYTES]
    big = rng.random_bytes(3 * BLOCK_BYTES)
    assert big == bytes((BLOCK_BYTES + 1 + i) % 256 for i in range(3 * BLOCK_BYTES))
    assert set(drbg.generate_calls) == {BLOCK_BYTES}


def test_randbelow_consumes_the_stream_by_rejection():
    rng = RngService(CountingDrbg())  # type: ignore[arg-type]
    # n = 3, k = 2: bytes 0,1,2,3,4,5,6,7 masked to 2 bits are 0,1,2,3,0,1,2,3; 3 is rejected.
    assert [rng.randbelow(3) for _ in range(6)] == [0, 1, 2, 0, 1, 2]
    assert rng.random_bytes(1) == bytes([7])  # six outcomes used bytes 0..6


def test_randbits_refuses_zero_bits_and_random_bytes_negative():
    rng = RngService.seeded(1)
    with pytest.raises(RngRangeError):
        rng.randbits(0)
    with pytest.raises(RngRangeError):
        rng.random_bytes(-1)
    assert rng.random_bytes(0) == b""
    assert 0 <= rng.randbits(1000) < 2**1000


# --- seeding, production, reseeding ---------------------------------------------------------------


def test_seeded_service_is_deterministic_and_seeds_are_canonical():
    a, b, c = RngService.seeded(42), RngService.seeded("42"), RngService.seeded(b"42")
    stream = a.random_bytes(3000)
    assert b.random_bytes(3000) == stream == c.random_bytes(3000)
    assert RngService.seeded(43).random_bytes(3000) != stream
    assert a.deterministic
    for bad in (True, 4.2, None):
        with pytest.raises(TypeError):
            RngService.seeded(bad)  # type: ignore[arg-type]


def test_seeded_derivation_is_the_documented_one():
    drbg = HmacDrbg(
        hashlib.sha256(b"egm seed entropy:egm").digest(),
        hashlib.sha256(b"egm seed nonce:egm").digest(),
        b"egm seeded",
    )
    first_block = drbg.generate(BLOCK_BYTES)
    second_block = drbg.generate(BLOCK_BYTES)
    assert RngService.seeded("egm").random_bytes(2 * BLOCK_BYTES) == first_block + second_block


def test_seeded_outcomes_are_pinned():
    """Regression pin: a recorded ``--seed`` session must replay identically in later versions.

    The figures were recorded from this implementation; the derivation test above ties them to
    the documented seeding, and the mapping tests to the documented byte-to-outcome rules.
    """
    rng = RngService.seeded(2024)
    assert [rng.randbelow(52) for _ in range(12)] == [12, 30, 51, 18, 18, 23, 29, 46, 10, 7, 48, 40]


def test_seeded_service_cannot_reseed():
    with pytest.raises(DrbgError, match="no entropy"):
        RngService.seeded(1).reseed()


def test_two_production_services_differ():
    a, b = RngService.production(), RngService.production()
    assert not a.deterministic
    assert a.random_bytes(64) != b.random_bytes(64)
    assert isinstance(a, RandomSource)


class CountingUrandom:
    def __init__(self) -> None:
        self.requests: list[int] = []
        self.stuck = False

    def __call__(self, n: int) -> bytes:
        self.requests.append(n)
        return bytes(n) if self.stuck else os.urandom(n)


def test_production_reseeds_itself_at_the_interval():
    source = CountingUrandom()
    rng = RngService.production(reseed_interval=2, entropy=HealthTestedEntropy(source))
    after_instantiate = len(source.requests)
    rng.random_bytes(5 * BLOCK_BYTES)  # blocks 1 2 | reseed | 3 4 | reseed | 5
    assert source.requests[after_instantiate:] == [ENTROPY_INPUT_BYTES] * 2


def test_reseed_on_demand_uses_fresh_entropy_and_drops_the_buffer():
    source = CountingUrandom()
    drbg = CountingDrbg()
    rng = RngService(drbg, HealthTestedEntropy(source))  # type: ignore[arg-type]
    rng.random_bytes(10)
    rng.reseed()
    assert len(drbg.reseeds) == 1 and len(drbg.reseeds[0]) == ENTROPY_INPUT_BYTES
    # The 1014 unread bytes of the first block were dropped: the next byte opens a new block.
    assert rng.random_bytes(1) == bytes([BLOCK_BYTES % 256])
    assert len(drbg.generate_calls) == 2


def test_entropy_failure_on_reseed_propagates():
    source = CountingUrandom()
    rng = RngService.production(entropy=HealthTestedEntropy(source))
    source.stuck = True
    with pytest.raises(EntropyError):
        rng.reseed()


def test_production_refuses_to_start_on_a_stuck_source():
    with pytest.raises(EntropyError):
        RngService.production(entropy=HealthTestedEntropy(lambda n: bytes(n)))


def test_zeroize_makes_the_service_unusable():
    rng = RngService.seeded(5)
    rng.random_bytes(10)  # leaves buffered bytes behind
    rng.zeroize()
    with pytest.raises(DrbgError):
        rng.random_bytes(1)
    with pytest.raises(DrbgError):
        rng.randbelow(52)


# --- shuffle and draw -----------------------------------------------------------------------------


def test_shuffle_is_the_documented_fisher_yates():
    deck = list(range(52))
    RngService.seeded("fy").shuffle(deck)
    reference_rng, expected = RngService.seeded("fy"), list(range(52))
    for i in range(51, 0, -1):
        j = reference_rng.randbelow(i + 1)
        expected[i], expected[j] = expected[j], expected[i]
    assert deck == expected
    assert sorted(deck) == list(range(52)) and deck != list(range(52))


def test_shuffle_of_short_lists():
    rng = RngService.seeded(0)
    for items in ([], [7]):
        copy = list(items)
        rng.shuffle(copy)
        assert copy == items


def test_draw_is_partial_fisher_yates_and_leaves_the_input_alone():
    seq = tuple(range(10))
    drawn = RngService.seeded("draw").draw(seq, 4)
    reference_rng, pool = RngService.seeded("draw"), list(seq)
    for i in range(4):
        j = i + reference_rng.randbelow(10 - i)
        pool[i], pool[j] = pool[j], pool[i]
    assert drawn == pool[:4]
    assert len(set(drawn)) == 4 and seq == tuple(range(10))
    rng = RngService.seeded(1)
    assert rng.draw(seq, 0) == []
    assert sorted(rng.draw(seq, 10)) == list(seq)
    for bad in (11, -1):
        with pytest.raises(RngRangeError):
            rng.draw(seq, bad)


def test_draw_distribution_over_ordered_pairs():
    rng = RngService.seeded("pairs")
    counts = Counter(tuple(rng.draw("abcde", 2)) for _ in range(20_000))
    pairs = list(permutations("abcde", 2))
    assert set(counts) == set(pairs)
    assert chisquare([counts[p] for p in pairs]).pvalue > 0.001


def _card_by_position_pvalue(shuffle, rng: RngService, shuffles: int = 20_000) -> float:
    """The battery's card-by-position chi-square (52 x 52 table) over ``shuffle``."""

    class Source:
        def shuffle(self, deck: list[int]) -> None:
            shuffle(rng, deck)

    p_value, _ = card_position_test(Source(), 52, shuffles)  # type: ignore[arg-type]
    return p_value


def _naive_shuffle(rng: RngService, deck: list[int]) -> None:
    """The classic bug: swap every position with *any* position. n^n paths onto n! orders."""
    n = len(deck)
    for i in range(n):
        j = rng.randbelow(n)
        deck[i], deck[j] = deck[j], deck[i]


def test_card_by_position_chi_square_passes_fisher_yates_and_catches_the_naive_shuffle():
    assert _card_by_position_pvalue(RngService.shuffle, RngService.seeded("chi")) > 0.001
    assert _card_by_position_pvalue(_naive_shuffle, RngService.seeded("chi")) < 0.001


class CounterWordsDrbg:
    """generate() returns consecutive 32-bit big-endian counters: every 4-byte word is unique."""

    def __init__(self) -> None:
        self.next_word = 0

    def generate(self, nbytes: int, additional_input: bytes = b"") -> bytes:
        words = range(self.next_word, self.next_word + nbytes // 4)
        self.next_word += nbytes // 4
        return b"".join(w.to_bytes(4, "big") for w in words)


def test_no_byte_is_handed_out_twice_across_threads():
    rng = RngService(CounterWordsDrbg())  # type: ignore[arg-type]
    results: list[list[int]] = [[] for _ in range(4)]

    def worker(out: list[int]) -> None:
        for _ in range(5000):
            out.append(rng.randbits(32))

    threads = [threading.Thread(target=worker, args=(out,)) for out in results]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    drawn = sorted(value for out in results for value in out)
    assert drawn == list(range(20_000))
