"""Golden frames of long poll 0x75 (set AFT receipt data) and its ACK, the bodies the codec refuses,
and the receipt the lines of a transfer make.

The first frame, CRC included, is the one the Aristocrat Monaco SAS client's parser test sends
(``LP75SetAftReceiptDataParserTest.ParseByBytesTest``: every element of SAS 6.02 table 8.11.1b);
the others are computed here from the same layout (docs/protocols/sas.md, "AFT").
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.sas import messages as m
from drivers.sas.aft_receipt import AftReceiptData, TransferReceipt, transfer_receipt_fields
from drivers.sas.codec import (
    Ack,
    EgmDecoder,
    HostDecoder,
    LongPoll,
    Nack,
    encode_poll,
    encode_reply,
)
from drivers.sas.commands import LONG_POLLS, PollType, ReplyKind

MONACO = bytes.fromhex(
    "01758C000C564754204275696C64696E670116333038204D616C6C6F72792053746174696F6E2052"
    "64020C4672616E6B6C696E2C20544E1006446F6E2774201106466F72676574120D53757065722041"
    "7765736F6D6513134275666665742053757072656D65204D65616C2009484F572041424F55542106"
    "41204E494345220747414D45204F46230643484553533F4D06")
MONACO_TEXTS = ((0x00, "VGT Building"), (0x01, "308 Mallory Station Rd"), (0x02, "Franklin, TN"),
                (0x10, "Don't "), (0x11, "Forget"), (0x12, "Super Awesome"), (0x13, "Buffet Supreme Meal"),
                (0x20, "HOW ABOUT"), (0x21, "A NICE"), (0x22, "GAME OF"), (0x23, "CHESS?"))


def test_0x75_is_an_m_poll_answered_by_ack():
    spec = LONG_POLLS[0x75]
    assert (spec.type, spec.reply_kind, spec.source) == (PollType.M, ReplyKind.ACK, "monaco")


def test_monacos_frame_decodes_on_the_machine_and_encodes_again_on_the_host():
    decoder = EgmDecoder(1)
    decoder.receive_data(MONACO)
    [poll] = decoder.events()
    assert isinstance(poll, LongPoll) and poll.command == 0x75
    body = m.parse_request(0x75, poll.data)
    assert body == AftReceiptData(MONACO_TEXTS)
    assert encode_poll(LongPoll(1, 0x75, body.encode())) == MONACO


@pytest.mark.parametrize(("body", "wire"), [
    # location "RIVER" and in-house line 1 back to the default (length 0)
    (AftReceiptData(((0x00, "RIVER"), (0x10, ""))), "01 75 09 00 05 52 49 56 45 52 10 00 32 F5"),
    (AftReceiptData(((0x23, "A" * 22),)), "01 75 18 23 16 " + "41 " * 22 + "92 37"),
])
def test_golden_0x75_polls(body, wire):
    frame = bytes.fromhex(wire.replace(" ", ""))
    assert encode_poll(LongPoll(1, 0x75, body.encode())) == frame
    decoder = EgmDecoder(1)
    decoder.receive_data(frame)
    [poll] = decoder.events()
    assert m.parse_request(0x75, poll.data) == body


def test_the_ack_and_nack_of_0x75_are_the_address_alone():
    assert encode_reply(Ack(1)) == b"\x01" and encode_reply(Nack(1)) == b"\x81"
    host = HostDecoder(1)
    host.expect(LongPoll(1, 0x75, AftReceiptData(((0x00, "X"),)).encode()))
    host.receive_data(b"\x01")
    assert host.events() == [Ack(1)]


@pytest.mark.parametrize("data", [
    b"", b"\x00", b"\x00\x03AB", b"\x03\x01A", b"\x24\x01A", b"\x00\x17" + b"B" * 23, b"\x00\x01\x7f",
    b"\x00\x01\x00", b"\x00\x01A\x10",
], ids=["empty", "code-alone", "cut-short", "code-03", "code-24", "23-characters", "DEL", "NUL", "half-element"])
def test_hostile_0x75_bodies_are_refused(data):
    with pytest.raises(ValueError):
        m.parse_request(0x75, data)


def test_the_host_cannot_encode_what_0x75_cannot_carry():
    for texts in (((0x05, "A"),), ((0x00, "A" * 23),), ((0x00, "caf\u00e9"),)):
        with pytest.raises(ValueError):
            AftReceiptData(texts)


def test_0x72_receipt_data_gives_the_printed_fields_and_refuses_wrong_sizes():
    data = b"\x00\x06CAGE 3\x01\x07" + bytes(7) + b"\x10\x03PAT\x11\x0212\x13\x05" + bytes(5)
    assert transfer_receipt_fields(data) == {"source": "CAGE 3", "patron": "PAT", "account": "12"}
    assert transfer_receipt_fields(b"") == {}
    for bad in (b"\x00", b"\x01\x06" + bytes(6), b"\x11\x11" + b"1" * 17, b"\x10\x01\x07", b"\x43\x04" + bytes(4)):
        with pytest.raises(ValueError):
            transfer_receipt_fields(bad)


def test_a_receipt_shows_the_transfer_and_the_texts():
    receipt = TransferReceipt(False, 123_456, "T-9", dt.datetime(2026, 11, 28, 0, 5, 7), 42,
                              {0x00: "RIVER", 0x13: "BYE"}, {"account": "77"})
    lines = receipt.lines()
    assert lines[0] == "RIVER" and lines[4] == "TRANSFER FROM GAME" and lines[-1] == "BYE"
    assert {"11/28/2026 00:05:07", "ASSET # 42", "ACCT: 77", "ID T-9", "CASH OUT $1,234.56"} <= set(lines)
    assert all(len(line) <= 40 for line in lines)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_any_0x75_body_either_decodes_to_what_encodes_it_again_or_is_refused(data):
    try:
        body = AftReceiptData.decode(data)
    except ValueError:
        return
    assert body.encode() == data
