"""Ticket redemption through the SAS host: 0x67, 0x70, 0x71, 0x68, exactly once across power cuts."""

from __future__ import annotations

import pytest

from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host_tito import RedemptionError, redeem_ticket, ticket_in_escrow
from drivers.sas.messages import RedeemTicket, TicketValidationData
from drivers.sas.validation import RedemptionStatus as St
from drivers.sas.validation import TransferCode, secure_enhanced_number, validation_to_bcd
from firmware.cashless.errors import VoucherStateError
from firmware.cashless.vouchers import VoucherState
from tests.sas.helpers import ADDRESS
from tests.sas.tito_helpers import Site

OTHER = "123456789012345678"          # another machine's ticket, which only the host knows


@pytest.fixture
def site(tmp_path):
    s = Site(tmp_path / "state")
    s.ask(0x4C, bytes.fromhex("214365 000000"))     # validation ID 0x654321, sequence 0
    yield s
    s.close()


def transact(site: Site):
    return lambda poll: site.ask(poll.command, poll.data)


def verdict(site: Site, validation: str, cents: int, code: int = TransferCode.VALID_CASHABLE) -> object:
    return site.ask(0x71, RedeemTicket(code, cents, 0, validation_to_bcd(validation)).encode())


def status(site: Site) -> object:
    return site.ask(0x71, b"\xff")


# --- golden frames (layouts: Aristocrat Monaco LP70 / LP71 parsers; CRCs computed here) -------
def test_golden_frames_of_0x70_and_0x71(site):
    m = site.machine
    assert encode_poll(LongPoll(ADDRESS, 0x70)) == bytes.fromhex("01 70")
    assert m.receive(bytes.fromhex("01 70")) == bytes.fromhex("01 70 01 FF C3 8A")   # no ticket
    site.insert(OTHER)
    m.receive(bytes([0x82]))                     # a poll to another machine: the next 0x70 is new
    assert m.receive(bytes.fromhex("01 70")) == bytes.fromhex(
        "01 70 10 00 0000000000 00 123456789012345678 A1 42")
    request = RedeemTicket(0x00, 2000, 0, validation_to_bcd(OTHER)).encode()
    assert encode_poll(LongPoll(ADDRESS, 0x71, request)) == bytes.fromhex(
        "01 71 10 00 0000002000 00 123456789012345678 F6 91")
    assert m.receive(bytes.fromhex("01 71 10 00 0000002000 00 123456789012345678 F6 91")) == bytes.fromhex(
        "01 71 10 40 0000002000 00 123456789012345678 F4 07")                          # pending
    site.stack()
    assert m.receive(bytes.fromhex("01 71 01 FF 1F D0")) == bytes.fromhex(
        "01 71 10 00 0000002000 00 123456789012345678 F6 91")                          # redeemed


# --- a ticket redeemed once -----------------------------------------------------------------
def test_a_printed_ticket_is_redeemed_once_and_never_again(site):
    ticket = site.print_ticket(2000)
    assert ticket == secure_enhanced_number(0x654321, 1)
    assert X.CASHOUT_TICKET_PRINTED in site.exceptions()
    assert site.ledger.credits_cents == 0
    site.insert(ticket)
    assert site.exceptions() == [X.TICKET_INSERTED]
    assert ticket_in_escrow(transact(site), ADDRESS) == ticket
    final = redeem_ticket(transact(site), ADDRESS, 2000, validation=ticket, between=site.stack)
    assert final == TicketValidationData(St.CASHABLE_REDEEMED, 2000, 0, validation_to_bcd(ticket))
    assert site.ledger.credits_cents == 2000 and site.ledger.meters["ticket_in"] == 2000
    assert site.exceptions() == [X.TICKET_TRANSFER_COMPLETE]
    assert site.book.state(ticket) is VoucherState.REDEEMED
    # the same ticket again, and a host that authorises it again: refused, returned, paid once
    site.insert(ticket)
    final = redeem_ticket(transact(site), ADDRESS, 2000, validation=ticket, between=site.stack)
    assert final.status == St.REJECTED_BY_HOST
    assert site.cabinet.returned == [ticket] and site.cabinet.to_stack is None
    assert site.ledger.credits_cents == 2000 and site.ledger.meters["ticket_in"] == 2000
    assert site.exceptions() == [X.TICKET_INSERTED, X.TICKET_TRANSFER_COMPLETE]


def test_another_machines_ticket_restricted_by_the_host_is_credited_as_not_cashable(site):
    site.insert(OTHER)
    final = redeem_ticket(transact(site), ADDRESS, 500, transfer_code=TransferCode.VALID_RESTRICTED,
                          between=site.stack)
    assert final.status == St.RESTRICTED_REDEEMED and final.amount == 500
    assert site.ledger.meters["ticket_in_noncashable"] == 500 and site.ledger.credits_cents == 500


def test_a_ticket_the_host_rejects_is_returned_and_nothing_is_credited(site):
    site.insert(OTHER)
    final = redeem_ticket(transact(site), ADDRESS, 0, transfer_code=TransferCode.ALREADY_REDEEMED)
    assert final.status == St.REJECTED_BY_HOST
    assert site.cabinet.returned == [OTHER] and site.ledger.credits_cents == 0
    assert site.exceptions() == [X.TICKET_INSERTED, X.TICKET_TRANSFER_COMPLETE]
    assert ticket_in_escrow(transact(site), ADDRESS) is None


def test_a_ticket_returned_by_the_validator_before_the_verdict_ends_the_cycle(site):
    site.insert(OTHER)
    site.polls.redemption.ticket_returned()
    assert status(site).status == St.VALIDATOR_FAILURE
    assert verdict(site, OTHER, 500) == TicketValidationData(St.NOT_COMPATIBLE)
    assert site.ledger.credits_cents == 0


def test_one_ticket_at_a_time(site):
    site.insert(OTHER)
    with pytest.raises(VoucherStateError):
        site.insert(secure_enhanced_number(1, 1))


# --- power cuts at every step ---------------------------------------------------------------
@pytest.mark.parametrize("cut_after", ["inserted", "authorised", "stacked", "reported"])
def test_a_power_cut_at_any_step_credits_the_ticket_at_most_once(site, cut_after):
    ticket = site.print_ticket(1000)
    site.exceptions()
    site.insert(ticket)
    if cut_after != "inserted":
        assert verdict(site, ticket, 1000).status == St.PENDING
    if cut_after in ("stacked", "reported"):
        site.stack()
    if cut_after == "reported":
        assert status(site).status == St.CASHABLE_REDEEMED
    site.power_cut()
    redeemed = cut_after in ("stacked", "reported")
    assert site.ledger.credits_cents == (1000 if redeemed else 0)
    assert status(site).status == (St.CASHABLE_REDEEMED if redeemed else St.UNABLE_TO_ACCEPT)
    assert X.TICKET_TRANSFER_COMPLETE in site.exceptions()
    # a verdict arriving late finds no ticket in escrow: nothing more is credited
    assert verdict(site, ticket, 1000) == TicketValidationData(St.NOT_COMPATIBLE)
    assert site.ledger.credits_cents == (1000 if redeemed else 0)
    # the player inserts it again: it redeems now if it had not, and never twice
    site.insert(ticket)
    final = redeem_ticket(transact(site), ADDRESS, 1000, validation=ticket, between=site.stack)
    assert final.status == (St.REJECTED_BY_HOST if redeemed else St.CASHABLE_REDEEMED)
    assert site.ledger.credits_cents == 1000 and site.ledger.meters["ticket_in"] == 1000


# --- hostile bodies ---------------------------------------------------------------------------
def _unchanged(site: Site, ticket: str) -> None:
    assert site.polls.redemption.cycle().status == St.WAITING_FOR_71
    assert site.polls.redemption.escrow == ticket and site.cabinet.returned == []
    assert site.ledger.credits_cents == 0 and site.cabinet.to_stack is None


def test_hostile_verdicts_are_refused_and_change_nothing(site):
    site.insert(OTHER)
    records = len(site.ledger.records_for(OTHER))
    bad_bcd = bytes.fromhex("00 00000020A0 00") + validation_to_bcd(OTHER)
    assert site.ask(0x71, bad_bcd).status == St.NOT_A_VALID_AMOUNT
    assert site.machine.receive(encode_poll(LongPoll(ADDRESS, 0x71, b"\x00\x00\x00"))) == b""   # cut short
    assert verdict(site, "999999999999999999", 500).status == St.VALIDATION_DOES_NOT_MATCH
    assert verdict(site, OTHER, 502).status == St.NOT_A_MULTIPLE_OF_DENOMINATION
    assert verdict(site, OTHER, 0).status == St.NOT_A_VALID_AMOUNT
    assert site.ask(0x71, RedeemTicket(0, 500, 1, validation_to_bcd(OTHER)).encode()).status == \
        St.VALIDATION_DOES_NOT_MATCH                                                  # parsing code 1
    _unchanged(site, OTHER)
    assert len(site.ledger.records_for(OTHER)) == records
    assert verdict(site, OTHER, 500).status == St.PENDING                             # and it still works


def test_an_amount_other_than_the_printed_one_is_refused(site):
    ticket = site.print_ticket(1000)
    site.insert(ticket)
    assert verdict(site, ticket, 2000).status == St.AMOUNT_DOES_NOT_MATCH_TICKET
    assert site.cabinet.returned == [ticket] and site.ledger.credits_cents == 0
    assert site.book.state(ticket) is VoucherState.PRINTED


def test_an_amount_past_the_credit_limit_is_refused(site):
    site.cabinet.limit_cents = 1000
    site.insert(OTHER)
    assert verdict(site, OTHER, 1005).status == St.EXCEEDS_CREDIT_LIMIT
    assert site.cabinet.returned == [OTHER] and site.ledger.credits_cents == 0


def test_verdicts_and_queries_without_a_ticket(site):
    assert status(site) == TicketValidationData(St.NO_VALIDATION_INFO)
    assert verdict(site, OTHER, 500) == TicketValidationData(St.NOT_COMPATIBLE)
    with pytest.raises(RedemptionError, match="no ticket in escrow"):
        redeem_ticket(transact(site), ADDRESS, 500)


def test_a_second_verdict_while_the_ticket_stacks_changes_nothing(site):
    site.insert(OTHER)
    assert verdict(site, OTHER, 500).status == St.PENDING
    assert verdict(site, OTHER, 1000, TransferCode.NOT_IN_SYSTEM).status == St.PENDING
    assert verdict(site, OTHER, 1000).status == St.PENDING
    assert site.cabinet.returned == [] and site.cabinet.to_stack == OTHER
    site.stack()
    assert status(site) == TicketValidationData(St.CASHABLE_REDEEMED, 500, 0, validation_to_bcd(OTHER))
    assert site.ledger.credits_cents == 500


def test_a_ticket_the_cabinet_cannot_stack_is_not_credited(site):
    def gone(validation: str) -> None:                      # the validator went away meanwhile
        site.book.cancel_redeem(validation, "the bill validator is not connected")

    site.cabinet.stack_ticket = gone
    site.insert(OTHER)
    assert verdict(site, OTHER, 500).status == St.UNABLE_TO_ACCEPT
    assert site.polls.redemption.escrow is None and site.ledger.credits_cents == 0
    assert site.exceptions() == [X.TICKET_INSERTED, X.TICKET_TRANSFER_COMPLETE]
