"""System validation: exception 0x57, long polls 0x57 and 0x58, the host's number printed or refused."""

from __future__ import annotations

import pytest

from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.messages import PendingCashout, Status, ValidationNumber
from firmware.cashless.vouchers import VoucherState
from firmware.sas.tito_system import TIMEOUT_S
from tests.sas.helpers import ADDRESS
from tests.sas.tito_helpers import Site

NUMBER = "121234567890123456"         # system ID 12, then 16 digits


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path / "state", validation="system")
    s.ledger.bill_in(2000)
    yield s
    s.close()


def number(site: Site, system_id: int, digits: int) -> object:
    site.machine.receive(bytes([0x82]))
    return site.ask(0x58, ValidationNumber(system_id, digits).encode())


def test_golden_frames_of_0x57_and_0x58(site):
    # layouts: saspy (0x57: type, 5 BCD; 0x58: system ID 1 BCD, number 8 BCD -> status); CRCs computed
    assert site.machine.receive(bytes.fromhex("01 57")) == bytes.fromhex("01 57 80 0000000000 CA 31")
    site.polls.numbering.request(2000)
    site.machine.receive(bytes([0x82]))
    assert site.machine.receive(bytes.fromhex("01 57")) == bytes.fromhex("01 57 00 0000002000 5B 17")
    poll = encode_poll(LongPoll(ADDRESS, 0x58, ValidationNumber(12, 1234567890123456).encode()))
    assert poll == bytes.fromhex("01 58 12 1234567890123456 0F 1D")
    assert site.machine.receive(poll) == bytes.fromhex("01 58 00 EB 47")


def test_the_hosts_number_is_printed(site):
    site.polls.numbering.request(2000)
    site.polls.numbering.request(2000)                                 # asked once
    assert site.exceptions() == [X.SYSTEM_VALIDATION_REQUEST, X.BILL_20_ACCEPTED]
    assert site.ask(0x57) == PendingCashout(0x00, 2000)
    assert number(site, 12, 1234567890123456) == Status(0x00)
    assert site.printer.printed == [NUMBER] and site.book.state(NUMBER) is VoucherState.ISSUED
    assert site.ask(0x57) == PendingCashout(0x80, 0)
    assert number(site, 12, 1234567890123457) == Status(0x80)           # not in a cash-out any more
    assert site.printer.printed == [NUMBER]


def test_a_number_used_before_is_rejected_and_the_machine_waits_for_another(site):
    site.polls.numbering.request(500)
    number(site, 12, 1234567890123456)
    site.book.printed(NUMBER)
    site.polls.numbering.request(500)
    assert number(site, 12, 1234567890123456) == Status(0x81)
    assert site.ask(0x57) == PendingCashout(0x00, 500)
    assert number(site, 12, 99) == Status(0x00)
    assert site.printer.printed == [NUMBER, "120000000000000099"]


def test_a_denied_or_late_number_is_a_handpay(site):
    site.polls.numbering.request(2000)
    assert number(site, 0, 0) == Status(0x00)
    assert site.printer.denied == ["the SAS host denied the validation"] and site.printer.printed == []
    site.polls.numbering.request(2000)
    site.polls.numbering.tick(site.now + TIMEOUT_S - 0.5)
    assert site.printer.denied == ["the SAS host denied the validation"]
    site.polls.numbering.tick(site.now + TIMEOUT_S)
    assert len(site.printer.denied) == 2 and site.ask(0x57) == PendingCashout(0x80, 0)
    assert number(site, 12, 1234567890123456) == Status(0x80) and site.printer.printed == []


def test_a_bad_number_changes_nothing(site):
    site.polls.numbering.request(2000)
    bad = encode_poll(LongPoll(ADDRESS, 0x58, bytes.fromhex("12 1234567890ABCDEF")))
    assert site.machine.receive(bad) == b""
    assert site.ask(0x57) == PendingCashout(0x00, 2000) and site.printer.printed == []


def test_a_request_left_pending_by_a_power_cut_is_cleared(site):
    site.polls.numbering.request(2000)
    site.power_cut()
    assert site.ask(0x57) == PendingCashout(0x80, 0)
    assert number(site, 12, 1234567890123456) == Status(0x80)
    assert site.printer.printed == [] and site.ledger.credits_cents == 2000
