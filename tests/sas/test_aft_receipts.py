"""AFT transaction receipts over a real ledger and a cabinet stand-in: 0x75 texts kept in critical
memory (hostile bodies NACKed without change), a receipt printed once for a transfer that asks for
one, its status in the replies and interrogations, refusal 0x90 without a printer, and what a power
cut between the transfer and the receipt leaves."""

from __future__ import annotations

import pytest

from drivers.sas.aft import ReceiptStatus, TransferFlag
from drivers.sas.aft_receipt import AftReceiptData
from drivers.sas.codec import Ack, LongPoll, Nack, encode_poll, encode_reply
from drivers.sas.host_aft import aft_receipt_data, aft_transfer
from drivers.sas.messages import (
    AftLockRequest,
    AftStatus,
    AftTransfer,
    AftTransferReply,
    parse_reply,
)
from firmware.ledger.ledger import Ledger
from firmware.sas.aft_receipts import DATA_SETTING, LOST_IN_POWER_CUT
from tests.sas.aft_helpers import ASSET, Cabinet, aft_machine, exchange_with
from tests.sas.helpers import ADDRESS
from tests.sas.test_aft import KEY, interrogate, send

RECEIPT = TransferFlag.RECEIPT_REQUEST
#: 0x72 receipt data: transfer source "CAGE 3", patron "PAT JONES", account "12345"
DATA = b"\x00\x06CAGE 3" + b"\x10\x09PAT JONES" + b"\x11\x0512345"


def request(tid: str, cents: int, *, out: bool = False, flags: int = RECEIPT, data: bytes = DATA) -> bytes:
    return AftTransfer(0, 0, 0x80 if out else 0x00, cents, 0, 0, flags, ASSET, KEY, tid, 0, 0, data, 0).encode()


def set_texts(machine, *texts: tuple[int, str]) -> bytes:
    """0x75 with ``texts``; the machine's answer (its whole frame)."""
    body = AftReceiptData(tuple(texts)).encode()
    reply = machine.receive(encode_poll(LongPoll(ADDRESS, 0x75, body)))
    machine.receive(bytes([0x80 | (ADDRESS + 1)]))       # another machine's poll: no retry next
    return reply


def with_printer() -> Cabinet:
    return Cabinet(has_printer=True)


def test_0x75_keeps_the_receipt_texts_in_critical_memory(tmp_path):
    with Ledger.open(tmp_path, denomination=5) as ledger:
        machine, polls = aft_machine(ledger, with_printer())
        assert set_texts(machine, (0x00, "RIVER CASINO"), (0x10, "THANK YOU"), (0x13, "")) == encode_reply(Ack(ADDRESS))
        assert polls.receipts.texts()[0x00] == "RIVER CASINO"
        assert set_texts(machine, (0x00, ""), (0x01, "1 MAIN ST")) == encode_reply(Ack(ADDRESS))
    with Ledger.open(tmp_path, denomination=5) as ledger:          # after a power cut
        _, polls = aft_machine(ledger, with_printer())
        texts = polls.receipts.texts()
        assert (texts[0x00], texts[0x01], texts[0x10]) == ("HOUSE", "1 MAIN ST", "THANK YOU")
        assert 0x13 not in texts


@pytest.mark.parametrize("body", [
    b"", b"\x00", b"\x00\x05ABC", b"\xff\x02AB", b"\x14\x02AB", b"\x00\x17" + b"A" * 23,
    b"\x00\x02A\x00", b"\x00\x02AB\x01", b"\x00\x02AB\x01\x05ABC",
], ids=["empty", "one-byte", "cut-short", "unknown-code-ff", "unknown-code-14", "23-characters",
        "not-printable", "trailing-byte", "second-cut-short"])
def test_a_hostile_0x75_is_nacked_and_changes_nothing(ledger, body):
    machine, polls = aft_machine(ledger, with_printer())
    set_texts(machine, (0x00, "RIVER CASINO"))
    before = ledger.setting(DATA_SETTING)
    assert machine.receive(encode_poll(LongPoll(ADDRESS, 0x75, body))) == encode_reply(Nack(ADDRESS))
    assert ledger.setting(DATA_SETTING) == before


def test_a_receipt_is_printed_once_with_the_transfer_and_the_host_texts(ledger):
    cabinet = with_printer()
    machine, polls = aft_machine(ledger, cabinet)
    set_texts(machine, (0x00, "RIVER CASINO"), (0x11, "PLAY RESPONSIBLY"))
    reply = send(machine, request("IN-1", 2500))
    assert isinstance(reply, AftTransferReply)
    assert (reply.transfer_status, reply.receipt_status) == (0x00, ReceiptStatus.PRINTING)
    [(key, lines, done)] = cabinet.receipts
    assert lines == ("RIVER CASINO", "", "", "", "TRANSFER TO GAME", "CAGE 3", "11/27/2026 21:05:09",
                     f"ASSET # {ASSET}", "PAT JONES", "ACCT: 12345", "ID IN-1", "CASH IN $25.00", "",
                     "", "PLAY RESPONSIBLY", "", "")
    assert interrogate(machine).receipt_status == ReceiptStatus.PRINTING
    done(None)
    assert interrogate(machine).receipt_status == ReceiptStatus.PRINTED
    assert send(machine, request("IN-1", 2500)).receipt_status == ReceiptStatus.PRINTED   # a retry
    assert len(cabinet.receipts) == 1 and ledger.credits_cents == 2500


def test_a_receipt_the_printer_did_not_print_is_reported_with_its_reason(ledger):
    cabinet = with_printer()
    ledger.bill_in(2000)
    machine, polls = aft_machine(ledger, cabinet)
    send(machine, request("OUT-1", 1500, out=True))
    [(_, lines, done)] = cabinet.receipts
    assert "TRANSFER FROM GAME" in lines and "CASH OUT $15.00" in lines
    done("paper out")
    assert interrogate(machine).receipt_status == ReceiptStatus.NONE
    body = polls.history.newest()
    assert body is not None and polls.receipts.reason(body) == "paper out"
    assert ledger.credits_cents == 500                    # the transfer stands


def test_no_receipt_asked_none_printed_and_without_a_printer_a_receipt_transfer_is_refused(ledger):
    cabinet = Cabinet()                                   # no printer
    machine, _ = aft_machine(ledger, cabinet)
    refused = send(machine, request("IN-1", 2500))
    assert (refused.transfer_status, refused.receipt_status) == (0x90, ReceiptStatus.NONE)
    assert ledger.credits_cents == 0 and ledger.records_for("IN-1") == []
    done = send(machine, request("IN-2", 2500, flags=0))
    assert (done.transfer_status, done.receipt_status) == (0x00, ReceiptStatus.NONE)
    assert cabinet.receipts == []


def test_bad_0x72_receipt_data_is_refused_with_0x82(ledger):
    machine, _ = aft_machine(ledger, with_printer())
    for data in (b"\x00\x05AB", b"\x01\x03\x01\x02\x03", b"\x10\x17" + b"A" * 23, b"\x00\x02\x01\x02"):
        assert send(machine, request("IN-1", 2500, data=data)).transfer_status == 0x82
    assert ledger.credits_cents == 0


def test_a_busy_printer_leaves_the_receipt_pending_until_the_next_aft_poll(ledger):
    cabinet = with_printer()
    cabinet.busy = True
    machine, _ = aft_machine(ledger, cabinet)
    assert send(machine, request("IN-1", 2500)).receipt_status == ReceiptStatus.PENDING
    assert cabinet.receipts == []
    cabinet.busy = False
    assert interrogate(machine).receipt_status == ReceiptStatus.PRINTING
    assert len(cabinet.receipts) == 1


def test_0x74_says_receipts_can_be_printed_only_with_a_printer(ledger):
    for cabinet, bit in ((with_printer(), 0x01), (Cabinet(), 0x00)):
        _, polls = aft_machine(ledger, cabinet)
        status = parse_reply(0x74, polls.lock_poll(AftLockRequest(0xFF, 0, 0).encode()))
        assert isinstance(status, AftStatus) and status.aft_status & 0x01 == bit


def test_a_receipt_never_sent_before_a_power_cut_is_printed_once_after_it(tmp_path):
    cabinet = with_printer()
    cabinet.busy = True
    with Ledger.open(tmp_path, denomination=5) as ledger:
        machine, _ = aft_machine(ledger, cabinet)
        assert send(machine, request("IN-1", 2500)).receipt_status == ReceiptStatus.PENDING
    after = with_printer()
    with Ledger.open(tmp_path, denomination=5) as ledger:          # power back
        machine, _ = aft_machine(ledger, after)
        assert interrogate(machine).receipt_status == ReceiptStatus.PRINTING
        [(_, lines, done)] = after.receipts
        assert "ID IN-1" in lines
        done(None)
        assert interrogate(machine).receipt_status == ReceiptStatus.PRINTED
    again = with_printer()
    with Ledger.open(tmp_path, denomination=5) as ledger:          # and another power cut: not again
        machine, _ = aft_machine(ledger, again)
        assert interrogate(machine).receipt_status == ReceiptStatus.PRINTED
        assert again.receipts == [] and ledger.credits_cents == 2500


def test_a_receipt_printing_when_the_power_went_is_reported_not_printed_and_not_sent_again(tmp_path):
    cabinet = with_printer()
    with Ledger.open(tmp_path, denomination=5) as ledger:
        machine, _ = aft_machine(ledger, cabinet)
        assert send(machine, request("IN-1", 2500)).receipt_status == ReceiptStatus.PRINTING
    after = with_printer()
    with Ledger.open(tmp_path, denomination=5) as ledger:
        machine, polls = aft_machine(ledger, after)
        assert interrogate(machine).receipt_status == ReceiptStatus.NONE
        body = polls.history.newest()
        assert body is not None and polls.receipts.reason(body) == LOST_IN_POWER_CUT
        assert after.receipts == [] and ledger.credits_cents == 2500


def test_the_host_helpers_set_the_texts_and_make_a_transfer_with_its_receipt(ledger):
    cabinet = with_printer()
    machine, polls = aft_machine(ledger, cabinet)
    exchange = exchange_with(machine)
    assert aft_receipt_data(exchange, ADDRESS, {0x00: "RIVER CASINO", 0x12: "SEE YOU"})
    assert not aft_receipt_data(lambda wire: b"", ADDRESS, {0x00: "X"})      # no answer
    assert not aft_receipt_data(lambda wire: b"\x81", ADDRESS, {0x00: "X"})  # NACK
    reply = aft_transfer(exchange, ADDRESS, cents=500, transaction_id="H-1", asset_number=ASSET,
                         flags=RECEIPT)
    assert (reply.transfer_status, reply.receipt_status) == (0x00, ReceiptStatus.PRINTING)
    [(_, lines, _)] = cabinet.receipts
    assert lines[0] == "RIVER CASINO" and "SEE YOU" in lines and "CASH IN $5.00" in lines
