"""Secure-enhanced validation (0x4C, 0x4D, exceptions 0x3D / 0x3F) and the ticket data polls
(0x7B-0x7D), over critical memory."""

from __future__ import annotations

import datetime as dt

import pytest

from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.messages import (
    EnhancedValidation,
    ExtendedTicketData,
    ExtendedValidationStatus,
    ExtendedValidationStatusReply,
    Status,
    TicketData,
    ValidationId,
)
from drivers.sas.validation import secure_enhanced_number
from firmware.cashless.errors import VoucherStateError
from firmware.sas.tito import TitoPolls
from tests.sas.helpers import ADDRESS
from tests.sas.tito_helpers import ASSET, Site


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path / "state")
    yield s
    s.close()


def set_id(site: Site, machine_id: int, sequence: int) -> object:
    return site.ask(0x4C, ValidationId(machine_id, sequence).encode())


# --- the algorithm ---------------------------------------------------------------------------
def test_secure_enhanced_numbers():
    # Pinned from the steps of the public sas_validate.py (Kopachris/Kopachris), which gives the same
    # digits for these and for 20,000 random (ID, sequence) pairs (checked when this was written).
    assert secure_enhanced_number(0x654321, 1) == "006429188185446104"
    assert secure_enhanced_number(0x123456, 0x10) == "008784809802266513"
    number = secure_enhanced_number(0xABCDEF, 77)
    for group in (number[2:10], number[10:]):          # each group's first digit carries its check
        digits = [int(d) for d in group]
        assert digits[0] >> 1 == sum([digits[0] & 1, *digits[1:]]) % 5
    with pytest.raises(ValueError):
        secure_enhanced_number(1 << 24, 1)


# --- 0x4C --------------------------------------------------------------------------------------
def test_golden_frame_of_0x4c():
    # layout: saspy / Aristocrat Monaco LP4C parser (ID and sequence, 3 bytes each, LSB first)
    poll = LongPoll(ADDRESS, 0x4C, ValidationId(0x654321, 5).encode())
    assert encode_poll(poll).hex(" ") == "01 4c 21 43 65 05 00 00 " + encode_poll(poll)[-2:].hex(" ")


def test_the_validation_id_and_sequence_are_kept_in_critical_memory(site):
    assert set_id(site, 0, 0) == ValidationId(0, 0)                 # ID 0: only reads
    assert set_id(site, 0x654321, 100) == ValidationId(0x654321, 100)
    first = site.print_ticket(500)
    assert first == secure_enhanced_number(0x654321, 101)
    site.machine.receive(bytes([0x82]))
    assert set_id(site, 0x654321, 100) == ValidationId(0x654321, 101)   # the same again: no step back
    site.power_cut()
    assert set_id(site, 0, 0) == ValidationId(0x654321, 101)
    assert site.print_ticket(500) == secure_enhanced_number(0x654321, 102)
    site.machine.receive(bytes([0x82]))
    assert set_id(site, 0x654321, 100) == ValidationId(0x654321, 102)
    site.machine.receive(bytes([0x82]))
    assert set_id(site, 0x111111, 7) == ValidationId(0x111111, 7)     # a new ID starts over


def test_a_number_used_before_is_skipped(site):
    set_id(site, 0x654321, 0)
    first = site.print_ticket(500)
    site.machine.receive(bytes([0x82]))
    set_id(site, 0x654321, 1)
    site.machine.receive(bytes([0x82]))
    set_id(site, 0x654321, 0)                                         # the host sets sequence 0 again
    assert site.print_ticket(500) == secure_enhanced_number(0x654321, 2) != first


def test_without_a_validation_id_no_ticket_is_numbered_and_0x3f_is_raised(site):
    numbering = site.polls.numbering
    assert numbering.cannot_issue() is not None
    assert X.VALIDATION_ID_NOT_CONFIGURED in site.exceptions()
    site.ledger.bill_in(500)
    with pytest.raises(VoucherStateError):
        numbering.issue(500)
    assert site.book.unconfirmed() is None


def test_validation_none_answers_no_validation_poll(tmp_path):
    s = Site(tmp_path / "state", validation="none")
    try:
        assert s.polls.numbering is None
        assert s.machine.receive(encode_poll(LongPoll(ADDRESS, 0x4C, bytes(6)))) == b""
        assert s.print_ticket(500).startswith("00") and 0x70 in s.machine.commands
    finally:
        s.close()


def test_a_validation_choice_that_cannot_be_served_is_refused(site):
    with pytest.raises(ValueError, match="one of none, secure-enhanced, system"):
        TitoPolls(site.ledger, site.book, site.cabinet, validation="sometimes", asset_number=ASSET)
    with pytest.raises(ValueError, match="give the printer"):
        TitoPolls(site.ledger, site.book, site.cabinet, validation="system", asset_number=ASSET)


# --- 0x3D and 0x4D ------------------------------------------------------------------------------
def _expected(site: Site, validation: str, index: int, cents: int) -> EnhancedValidation:
    issued = next(r["body"] for r in site.ledger.records_for(validation) if r["body"].get("state") == "issued")
    when = dt.datetime.fromisoformat(issued["issued"]).astimezone()
    return EnhancedValidation(0x00, index, int(when.strftime("%m%d%Y")), int(when.strftime("%H%M%S")),
                              int(validation[2:]), cents, issued["sequence"], 0, 30, 0)


def test_printed_tickets_are_read_back_with_0x4d(site):
    set_id(site, 0x654321, 0)
    assert site.ask(0x4D, b"\x00") == EnhancedValidation(*([0] * 10))    # nothing printed yet
    first, second = site.print_ticket(500), site.print_ticket(1500)
    assert site.exceptions().count(X.CASHOUT_TICKET_PRINTED) == 1         # a priority exception: once
    assert site.ask(0x4D, b"\xff") == _expected(site, first, 1, 500)        # look ahead
    site.machine.receive(bytes([0x82]))
    assert site.ask(0x4D, b"\xff") == _expected(site, first, 1, 500)      # still unread
    assert site.ask(0x4D, b"\x00") == _expected(site, first, 1, 500)      # read: marked
    site.power_cut()
    assert site.ask(0x4D, b"\x00") == _expected(site, second, 2, 1500)
    site.machine.receive(bytes([0x82]))
    assert site.ask(0x4D, b"\x00") == EnhancedValidation(*([0] * 10))
    assert site.ask(0x4D, b"\x01") == _expected(site, first, 1, 500)      # by buffer index
    assert site.ask(0x4D, b"\x02") == _expected(site, second, 2, 1500)
    assert site.ask(0x4D, b"\x03") == EnhancedValidation(*([0] * 10))
    assert site.machine.receive(encode_poll(LongPoll(ADDRESS, 0x4D, b"\x20"))) == b""   # no index 0x20


def test_a_voided_ticket_is_not_a_validation_record(site):
    set_id(site, 0x654321, 0)
    site.ledger.bill_in(500)
    voucher = site.polls.numbering.issue(500)
    site.book.void(voucher.validation, "printer jam")
    assert site.ask(0x4D, b"\x00") == EnhancedValidation(*([0] * 10))
    assert site.ledger.credits_cents == 500


# --- 0x7B, 0x7C, 0x7D ---------------------------------------------------------------------------
def test_ticket_data_is_kept_and_printed_on_the_next_tickets(site):
    request = ExtendedValidationStatus(0x0003, 0x0001, 60, 10).encode()
    assert site.ask(0x7B, request) == ExtendedValidationStatusReply(ASSET, 0x0001, 60, 10)
    site.machine.receive(bytes([0x82]))
    assert site.ask(0x7B, ExtendedValidationStatus(0x0002, 0x0002, 0, 0).encode()) == \
        ExtendedValidationStatusReply(ASSET, 0x0003, 60, 10)                 # 0: expirations kept
    assert site.ask(0x7D, TicketData(7, 0, "GRAND CASINO", "1 MAIN ST", "").encode()) == Status(1)
    assert site.ask(0x7C, ExtendedTicketData(((0x02, b"RENO NV"),)).encode()) == Status(1)
    site.power_cut()
    printed = site.polls.ticket_data.printed()
    assert (printed.location, printed.address, printed.expiry_days) == \
        ("GRAND CASINO", ("1 MAIN ST", "RENO NV"), 60)


def test_bad_ticket_data_changes_nothing(site):
    site.ask(0x7D, TicketData(7, 15, "CASINO", "", "").encode())
    before = site.polls.ticket_data.printed()
    for command, body in [(0x7C, ExtendedTicketData(((0x55, b"X"),)).encode()),      # unknown code
                          (0x7C, ExtendedTicketData(((0x00, b"\x07BEL"),)).encode()),  # not printable
                          (0x7C, b"\x00\x05AB"),                                       # cut short
                          (0x7D, TicketData(7, 0, "A" * 41, "", "").encode()),        # too long
                          (0x7B, b"\x01\x00")]:
        assert site.machine.receive(encode_poll(LongPoll(ADDRESS, command, body))) == b"", command
    assert site.polls.ticket_data.printed() == before == \
        type(before)("CASINO", None, 15)
