"""The voucher on paper: amount in words, Interleaved 2 of 5, validation, the template and its fields."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.tcl.codec import RegionKind
from drivers.tcl.voucher import (
    REGIONS,
    TEMPLATE,
    amount_in_figures,
    amount_in_words,
    fields,
    itf_check_digit,
    itf_decode,
    itf_encode,
    parse_figures,
    texts,
    ticket_from_regions,
)
from firmware.cashless.validation import format_validation
from hal.devices.ticket import MAX_TICKET_CENTS, TicketKind
from tests.drivers.tickets import VOUCHER, replace


# --- amount in words -----------------------------------------------------------------------------
@pytest.mark.parametrize(("cents", "words"), [
    (2050, "TWENTY DOLLARS AND 50 CENTS"),
    (100, "ONE DOLLAR AND 00 CENTS"),
    (5, "ZERO DOLLARS AND 05 CENTS"),
    (0, "ZERO DOLLARS AND 00 CENTS"),
    (1_100, "ELEVEN DOLLARS AND 00 CENTS"),
    (1_999, "NINETEEN DOLLARS AND 99 CENTS"),
    (4_201, "FORTY TWO DOLLARS AND 01 CENTS"),
    (10_000, "ONE HUNDRED DOLLARS AND 00 CENTS"),
    (30_725, "THREE HUNDRED SEVEN DOLLARS AND 25 CENTS"),
    (100_000, "ONE THOUSAND DOLLARS AND 00 CENTS"),
    (123_456_7, "TWELVE THOUSAND THREE HUNDRED FORTY FIVE DOLLARS AND 67 CENTS"),
    (100_001_00, "ONE HUNDRED THOUSAND ONE DOLLARS AND 00 CENTS"),
    (MAX_TICKET_CENTS, "NINE HUNDRED NINETY NINE THOUSAND NINE HUNDRED NINETY NINE DOLLARS AND 99 CENTS"),
])
def test_amount_in_words(cents, words):
    assert amount_in_words(cents) == words


@pytest.mark.parametrize("bad", [-1, MAX_TICKET_CENTS + 1, 20.5, True, "2050"])
def test_amount_in_words_refuses_what_is_not_whole_cents_in_range(bad):
    with pytest.raises(ValueError):
        amount_in_words(bad)


def test_amount_in_figures_round_trips():
    assert amount_in_figures(2050) == "$20.50"
    assert amount_in_figures(123_456_78) == "$123,456.78"
    assert amount_in_figures(7) == "$0.07"
    for cents in (0, 7, 2050, 100_000, MAX_TICKET_CENTS):
        assert parse_figures(amount_in_figures(cents)) == cents
    for bad in ("20.50", "$20.5", "$2,05.00", "$20,50"):
        with pytest.raises(ValueError):
            parse_figures(bad)


# --- Interleaved 2 of 5 --------------------------------------------------------------------------
def test_itf_pattern_of_one_pair_by_hand():
    # start nnnn; "12": bars of 1 (wnnnw) interleaved with spaces of 2 (nwnnw); stop wnn.
    assert itf_encode("12") == "1010" + "111010001010111000" + "11101"
    assert itf_encode("12", wide=2) == "1010" + "11010010101100" + "1101"


def test_itf_check_digit_rules():
    # Weights 3, 1, 3, ... from the rightmost data digit; the check makes the sum a multiple of 10.
    assert itf_check_digit("1234567") == 0          # 7*3+6+5*3+4+3*3+2+1*3 = 60
    assert itf_check_digit("12345") == 7            # 5*3+4+3*3+2+1*3 = 33
    assert itf_check_digit("0") == 0
    assert itf_check_digit("1") == 7
    assert itf_check_digit("629104150021") == 3     # GS1 ITF-14 style example
    with pytest.raises(ValueError):
        itf_check_digit("12a")


def test_itf_odd_lengths_get_a_leading_zero_and_check_digits_are_verified():
    assert itf_decode(itf_encode("123")) == "0123"
    assert itf_decode(itf_encode("12345", check_digit=True), check_digit=True) == "12345"
    assert itf_decode(itf_encode("12345", check_digit=True)) == "123457"
    assert itf_decode(itf_encode("1234", check_digit=True)) == "012348"   # 4*3+3+2*3+1 = 22
    wrong = itf_encode("123450")                     # check digit 0 instead of 7
    with pytest.raises(ValueError, match="check digit 0"):
        itf_decode(wrong, check_digit=True)


def test_itf_decode_tolerates_quiet_zones_and_scale_but_refuses_damage():
    pattern = itf_encode("123456789012345678")
    scaled = "".join(module * 2 for module in pattern)
    assert itf_decode("0" * 20 + scaled + "0" * 20) == "123456789012345678"
    with pytest.raises(ValueError, match="start or stop"):
        itf_decode(pattern[::-1])
    with pytest.raises(ValueError):
        itf_decode(pattern[:-3])
    with pytest.raises(ValueError, match="0 and 1"):
        itf_decode(pattern.replace("1", "x"))
    with pytest.raises(ValueError, match="no wide"):
        itf_decode("10" * 33 + "1")
    damaged = pattern[:10] + ("0" if pattern[10] == "1" else "1") + pattern[11:]
    with pytest.raises(ValueError):
        itf_decode(damaged)
    with pytest.raises(ValueError):
        itf_encode("")
    with pytest.raises(ValueError):
        itf_encode("12", wide=5)


@given(st.text("0123456789", min_size=1, max_size=30), st.booleans(), st.integers(2, 4))
def test_itf_round_trip(digits, check, wide):
    decoded = itf_decode(itf_encode(digits, check_digit=check, wide=wide), check_digit=check)
    assert decoded.lstrip("0") == digits.lstrip("0")
    assert len(decoded) in (len(digits), len(digits) + 1)


# --- the voucher ---------------------------------------------------------------------------------
def test_voucher_texts_and_fields_follow_the_template():
    printed = texts(VOUCHER)
    assert printed["A"] == "TWENTY DOLLARS AND 50 CENTS"
    assert printed["4"] == "VALIDATION 12-3456-7890-1234-5678"
    assert printed["9"] == "$20.50" and printed["8"] == "TICKET # 0042"
    assert printed["6"] == "DATE 03/14/2025" and printed["7"] == "TIME 13:45:09"
    assert printed["C"] == "VOID AFTER 30 DAYS" and printed["3"] == "CASHOUT TICKET"
    assert printed["B"] == "MACHINE # EGM-0042"
    assert fields(VOUCHER) == tuple(printed[r] for r in TEMPLATE.regions)
    assert set(printed) == {r.id for r in REGIONS} == set(TEMPLATE.regions)
    assert format_validation("000000000000000001") == "00-0000-0000-0000-0001"


def test_every_field_fits_its_region_and_the_barcode_is_last():
    by_id = {r.id: r for r in REGIONS}
    assert TEMPLATE.regions[-1] == "5" and by_id["5"].kind is RegionKind.BARCODE_I2OF5
    longest = replace(VOUCHER, venue="V" * 40, address=("A" * 40, "B" * 40),
                                  machine="M" * 20, amount_cents=MAX_TICKET_CENTS, expiry_days=9999)
    for rid, text in texts(longest).items():
        assert len(text) <= by_id[rid].length, rid
    assert len(itf_encode(VOUCHER.validation)) <= by_id["5"].width


@pytest.mark.parametrize("changes", [
    {},
    {"address": ()},
    {"address": ("ONLY ONE LINE",)},
    {"expiry_days": 0},
    {"expiry_days": 1},
    {"kind": TicketKind.RESTRICTED},
    {"kind": TicketKind.NON_CASHABLE},
    {"amount_cents": 1, "sequence": 0, "validation": "000000000000000000"},
    {"amount_cents": MAX_TICKET_CENTS, "sequence": 9999},
], ids=str)
def test_a_voucher_reads_back_from_its_printed_regions(changes):
    voucher = replace(VOUCHER, **changes)
    assert ticket_from_regions(texts(voucher), voucher.validation) == voucher


def test_reading_back_refuses_a_ticket_whose_parts_disagree():
    printed = texts(VOUCHER)
    with pytest.raises(ValueError, match="barcode"):
        ticket_from_regions(printed, "123456789012345670")
    with pytest.raises(ValueError, match="in words"):
        ticket_from_regions({**printed, "A": "TWENTY DOLLARS AND 00 CENTS"}, VOUCHER.validation)
    with pytest.raises(ValueError, match="region C"):
        ticket_from_regions({k: v for k, v in printed.items() if k != "C"}, VOUCHER.validation)
    with pytest.raises(ValueError, match="expiry"):
        ticket_from_regions({**printed, "C": "SOON"}, VOUCHER.validation)
    with pytest.raises(ValueError, match="voucher type"):
        ticket_from_regions({**printed, "3": "FREE MONEY"}, VOUCHER.validation)


@pytest.mark.parametrize("changes", [
    {"venue": ""}, {"venue": "   "}, {"venue": "X" * 41}, {"venue": "A|B"}, {"venue": "A^B"},
    {"address": ("a", "b", "c")}, {"address": ["a"]}, {"machine": "M" * 21},
    {"issued": dt.datetime(2025, 1, 1, 0, 0, 0, 5)}, {"issued": "2025-01-01"},
    {"amount_cents": 0}, {"amount_cents": MAX_TICKET_CENTS + 1}, {"amount_cents": 20.5},
    {"amount_cents": True}, {"validation": "12345678901234567"},
    {"validation": "12345678901234567x"}, {"validation": 123456789012345678},
    {"sequence": -1}, {"sequence": 10_000}, {"expiry_days": 10_000}, {"kind": "CASHOUT TICKET"},
], ids=str)
def test_a_voucher_refuses_bad_fields(changes):
    with pytest.raises(ValueError):
        replace(VOUCHER, **changes)
