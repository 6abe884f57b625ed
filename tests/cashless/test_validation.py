"""Validation numbers: the 18-digit SAS format and parse, and this product's offline numbers
(HMAC-SHA256 over terminal and sequence, reduced to 10^16 by rejection sampling)."""

from __future__ import annotations

import hmac
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.cashless.errors import VoucherError
from firmware.cashless.validation import (
    ACCEPT_BELOW,
    DOMAIN,
    MODULUS,
    format_validation,
    offline_validation,
    parse_validation,
    reduce_candidate,
)
from firmware.errors import EgmError

KEY = bytes(range(32))
DIGITS = st.text(alphabet="0123456789", min_size=18, max_size=18)


# --- format and parse -------------------------------------------------------------------------
def test_parse_accepts_the_bare_printed_and_spaced_forms():
    assert parse_validation("001234567890123456") == "001234567890123456"
    assert parse_validation("00-1234-5678-9012-3456") == "001234567890123456"
    assert parse_validation("00 1234 5678 9012 3456") == "001234567890123456"
    assert parse_validation("  12-3456-7890-1234-5678 ") == "123456789012345678"


@given(DIGITS)
def test_format_then_parse_round_trips(digits):
    printed = format_validation(digits)
    assert len(printed) == 22 and printed[2] == printed[7] == printed[12] == printed[17] == "-"
    assert parse_validation(printed) == digits
    assert parse_validation(digits) == digits
    assert parse_validation(printed.replace("-", " ")) == digits


@pytest.mark.parametrize("hostile", [
    "", " ", "0" * 17, "0" * 19, "0" * 10_000, "00-1234-5678-9012-345", "00-1234-5678-9012-34567",
    "001-234-5678-9012-3456", "00--1234-5678-9012-3456", "-001234567890123456", "+001234567890123456",
    "00123456789012345a", "0x1234567890123456", "00_1234_5678_9012_3456", "00.1234.5678.9012.3456",
    "001234567890123456\n", "\n001234567890123456", "001234567890123456\x00", "\t001234567890123456",
    "０" * 18,                        # full-width digits
    "٠" * 18,                        # Arabic-Indic digits
    "𝟎" * 18,                        # mathematical digits
    "00-1234-5678-9012-3456; DROP TABLE log", "00 1234-5678 9012\u00a03456", "%s%s%s%n",
    "1e17", "00123456789012345６",
])
def test_parse_refuses_hostile_strings(hostile):
    with pytest.raises(VoucherError, match="not a validation number"):
        parse_validation(hostile)


@pytest.mark.parametrize("not_text", [None, 1234567890123456789, b"001234567890123456", ["0" * 18], 1.5])
def test_parse_refuses_what_is_not_text(not_text):
    with pytest.raises(VoucherError, match="is text"):
        parse_validation(not_text)


@given(st.text(max_size=80))
def test_parse_either_returns_the_digits_given_or_refuses_cleanly(text):
    try:
        result = parse_validation(text)
    except VoucherError as exc:
        assert isinstance(exc, EgmError) and str(exc)
        assert len(str(exc)) < 200                 # a hostile string is never echoed whole
        return
    assert len(result) == 18 and result.isascii() and result.isdigit()
    assert set(text) <= set("0123456789- ")
    assert result == "".join(c for c in text if c in "0123456789")


@given(st.text(alphabet="0123456789- \t\n", max_size=30))
def test_parse_near_misses(text):
    try:
        result = parse_validation(text)
    except VoucherError:
        return
    assert result == "".join(c for c in text if c.isdigit())
    stripped = text.strip(" ")
    if len(stripped) != 18:                              # only the 2-4-4-4-4 grouping is accepted
        assert len(stripped) == 22
        assert [i for i, c in enumerate(stripped) if not c.isdigit()] == [2, 7, 12, 17]


# --- offline numbers ----------------------------------------------------------------------------
def reference(key: bytes, terminal: str, sequence: int) -> str:
    """The algorithm as docs/cashless.md states it, written out independently."""
    tid = terminal.encode()
    counter = 0
    while True:
        msg = DOMAIN + b"\x00" + len(tid).to_bytes(2, "big") + tid + sequence.to_bytes(8, "big") \
            + counter.to_bytes(4, "big")
        x = int.from_bytes(hmac.new(key, msg, "sha256").digest()[:8], "big")
        if x < 1844 * 10**16:
            return "00" + str(x % 10**16).zfill(16)
        counter += 1


def test_offline_numbers_are_system_00_and_reproducible_from_key_terminal_and_sequence():
    first = offline_validation(KEY, "EGM-0042", 1)
    assert first[:2] == "00" and len(first) == 18 and first.isdigit()
    assert first == offline_validation(bytes(range(32)), "EGM-0042", 1) == reference(KEY, "EGM-0042", 1)
    # a pinned vector: changing the algorithm changes every voucher number in the field
    assert first == "009276253099591592"
    for seq in (0, 2, 9999, 10_000, 2**63):
        assert offline_validation(KEY, "EGM-0042", seq) == reference(KEY, "EGM-0042", seq)
    # every input matters
    assert offline_validation(KEY, "EGM-0043", 1) != first
    assert offline_validation(KEY, "EGM-0042", 2) != first
    assert offline_validation(bytes(31) + b"\x01", "EGM-0042", 1) != first
    # the terminal id is length-prefixed: no two (terminal, sequence) pairs share a message
    assert offline_validation(KEY, "A", 256) != offline_validation(KEY, "A\x00", 1)


def test_ten_thousand_offline_numbers_are_distinct():
    numbers = {offline_validation(KEY, "EGM-0042", seq) for seq in range(1, 10_001)}
    assert len(numbers) == 10_000
    # and they look uniform: each leading digit (after 00) about a tenth of them
    leading = Counter(n[2] for n in numbers)
    assert all(850 < leading[d] < 1150 for d in "0123456789")


@pytest.mark.parametrize("key, terminal, seq", [
    (b"short", "T", 1), ("k" * 32, "T", 1), (KEY, "", 1), (KEY, 7, 1), (KEY, "T", -1),
    (KEY, "T", 2**64), (KEY, "T", True), (KEY, "T", 1.0),
])
def test_offline_refuses_bad_inputs(key, terminal, seq):
    with pytest.raises(VoucherError):
        offline_validation(key, terminal, seq)


# --- the unbiased reduction ---------------------------------------------------------------------
def test_the_rejection_step_at_production_size():
    assert ACCEPT_BELOW == 1844 * MODULUS and ACCEPT_BELOW <= 2**64 < ACCEPT_BELOW + MODULUS
    assert reduce_candidate(0) == 0
    assert reduce_candidate(ACCEPT_BELOW - 1) == MODULUS - 1
    assert reduce_candidate(MODULUS) == 0
    assert reduce_candidate(ACCEPT_BELOW) is None
    assert reduce_candidate(2**64 - 1) is None
    with pytest.raises(ValueError):
        reduce_candidate(2**64)
    with pytest.raises(ValueError):
        reduce_candidate(-1)


@given(st.integers(1, 12).flatmap(lambda bits: st.tuples(st.just(bits), st.integers(1, 2**bits))))
def test_the_rejection_step_maps_every_residue_equally_often(bits_and_modulus):
    """Exhaustively over every candidate: each residue has the same number of accepted preimages
    (what plain ``%`` on the whole range would break whenever the modulus does not divide it)."""
    bits, modulus = bits_and_modulus
    counts = Counter(reduce_candidate(x, bits=bits, modulus=modulus) for x in range(2**bits))
    rejected = counts.pop(None, 0)
    assert set(counts) == set(range(modulus))
    assert len(set(counts.values())) == 1
    assert rejected == 2**bits % modulus                   # only the biased top slice is rejected


def test_a_rejected_block_moves_to_the_next_counter():
    def block(seq: int, counter: int) -> int:
        tid = b"EGM-0042"
        msg = DOMAIN + b"\x00" + len(tid).to_bytes(2, "big") + tid + seq.to_bytes(8, "big") \
            + counter.to_bytes(4, "big")
        return int.from_bytes(hmac.new(KEY, msg, "sha256").digest()[:8], "big")

    seq = next(s for s in range(1, 200_000) if block(s, 0) >= ACCEPT_BELOW)   # ~1 in 2,800
    assert reduce_candidate(block(seq, 0)) is None
    second = block(seq, 1)
    assert second < ACCEPT_BELOW                        # this key's example needs one retry only
    assert offline_validation(KEY, "EGM-0042", seq) == f"00{second % MODULUS:016d}"
