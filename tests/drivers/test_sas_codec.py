"""SAS codec: CRC, golden frames in both roles, content framing, resync, implied ACK, BCD, bodies."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError
from drivers.crc import crc16_kermit
from drivers.sas import messages as m
from drivers.sas.bcd import from_bcd, rollover, to_bcd
from drivers.sas.codec import (
    Ack,
    Chirp,
    EgmDecoder,
    ExceptionReply,
    GeneralPoll,
    HostDecoder,
    LinkWatch,
    LongPoll,
    Nack,
    OtherAddress,
    Reply,
    ReplyLog,
    Verdict,
    encode_poll,
    encode_reply,
)
from drivers.sas.commands import LONG_POLLS, PollType, ReplyKind
from drivers.sas.crc import crc_bytes, sas_crc
from drivers.sas.exceptions import BILL_ACCEPTED_BY_DOLLARS, ExceptionCode, exception_name
from tests.drivers.streams import feed

# Polls as the host sends them, each with where the bytes come from.
GOLDEN_POLLS = [
    # General poll = 0x80 | address (SAS 6.02; saspy's default poll_address 0x82 is machine 2).
    (GeneralPoll(1), "81", "SAS 6.02 general poll; thomas-pythonas/saspy sas.py"),
    # Lock out play / enable play, as public SAS hosts send them to machine 1.
    (LongPoll(1, 0x01), "01 01 51 08", "soicasino/spark-sas2 docs/raspberryPython_orj.py"),
    (LongPoll(1, 0x02), "01 02 CA 3A", "soicasino/spark-sas2 test_aft_capability.py"),
    # AFT cancel transfer request: M poll 0x72, length 1, transfer code 0x80.
    (LongPoll(1, 0x72, b"\x80"), "01 72 01 80 0B B4", "soicasino/spark-sas2 test_aft_capability.py"),
    # R polls go out as address and command, no CRC.
    (LongPoll(1, 0x1F), "01 1F", "thomas-pythonas/saspy sas.py (crc_need=False)"),
    (LongPoll(1, 0x10), "01 10", "thomas-pythonas/saspy sas.py (crc_need=False)"),
    # S poll with data: ROM signature with seed 0 (CRC computed here, pinned by the check value).
    (LongPoll(1, 0x21, b"\x00\x00"), "01 21 00 00 5C 45", "layout: saspy; CRC: computed"),
    (LongPoll(1, 0x2F, bytes.fromhex("0001 00 0C")), "01 2F 04 00 01 00 0C 9C 9A", "computed"),
]

# Replies as the machine sends them, with the poll that asked.
GOLDEN_REPLIES = [
    (GeneralPoll(1), ExceptionReply(0x00), "00"),
    (GeneralPoll(1), ExceptionReply(ExceptionCode.SLOT_DOOR_OPENED), "11"),
    (LongPoll(1, 0x01), Ack(1), "01"),
    (LongPoll(1, 0x01), Nack(1), "81"),
    (LongPoll(1, 0x10), Reply(1, 0x10, bytes.fromhex("00001234")), "01 10 00 00 12 34 ED 61"),
    (LongPoll(1, 0x21, b"\x00\x00"), Reply(1, 0x21, b"\x34\x12"), "01 21 34 12 " + crc_bytes(
        bytes.fromhex("01 21 34 12")).hex()),
]


def test_crc_is_kermit_with_the_catalogue_check_value_and_a_seed_that_continues_it():
    assert sas_crc(b"123456789") == 0x2189
    assert crc_bytes(b"123456789") == b"\x89\x21"            # low byte first
    rng = random.Random(25)
    for _ in range(50):
        a, b = rng.randbytes(rng.randint(0, 40)), rng.randbytes(rng.randint(0, 40))
        assert sas_crc(a + b) == crc16_kermit(a + b)
        assert sas_crc(b, seed=sas_crc(a)) == sas_crc(a + b)


@pytest.mark.parametrize(("poll", "wire", "source"), GOLDEN_POLLS)
def test_golden_polls_encode_on_the_host_and_decode_on_the_machine(poll, wire, source):
    data = bytes.fromhex(wire)
    assert encode_poll(poll) == data, source
    egm = EgmDecoder(1)
    egm.receive_data(data)
    assert egm.next_event() == poll
    assert egm.next_event() is NEED_DATA


@pytest.mark.parametrize(("poll", "reply", "wire"), GOLDEN_REPLIES)
def test_golden_replies_encode_on_the_machine_and_decode_on_the_host(poll, reply, wire):
    data = bytes.fromhex(wire)
    assert encode_reply(reply) == data
    host = HostDecoder(1)
    host.expect(poll)
    assert feed(host, [data[i : i + 1] for i in range(len(data))]) == [reply]
    assert host.expected is None


def test_a_stream_of_polls_gives_the_same_events_whole_split_and_byte_by_byte():
    stream = b"".join(bytes.fromhex(w) for _, w, _ in GOLDEN_POLLS)
    polls = [p for p, _, _ in GOLDEN_POLLS]
    assert feed(EgmDecoder(1), [stream]) == polls
    assert feed(EgmDecoder(1), [stream[i : i + 1] for i in range(len(stream))]) == polls
    for cut in range(len(stream)):
        assert feed(EgmDecoder(1), [stream[:cut], stream[cut:]]) == polls


def test_polls_for_other_machines_are_skipped_with_their_bodies():
    # Machine 2's ROM signature poll carries a seed whose bytes look like our address and our
    # general poll; an M poll to machine 3 carries the same; a general poll to machine 5.
    other = (encode_poll(LongPoll(2, 0x21, b"\x01\x81")) + encode_poll(LongPoll(3, 0x6F, b"\x81\x01\x01"))
             + encode_poll(GeneralPoll(5)) + encode_poll(LongPoll(2, 0x1A)))
    ours = encode_poll(LongPoll(1, 0x1A))
    events = feed(EgmDecoder(1), [other[i : i + 1] for i in range(len(other))] + [ours])
    assert events == [OtherAddress(2, 0x21), OtherAddress(3, 0x6F), OtherAddress(5),
                      OtherAddress(2, 0x1A), LongPoll(1, 0x1A)]


def test_a_broadcast_long_poll_is_decoded_and_no_reply_is_expected_on_the_host():
    poll = LongPoll(0, 0x7F, m.DateTime(dt.datetime(2026, 11, 27, 20, 15, 0)).encode())
    egm = EgmDecoder(1)
    egm.receive_data(encode_poll(poll))
    assert egm.events() == [poll]
    host = HostDecoder(1)
    host.expect(poll)
    host.receive_data(b"\x01")
    assert host.events() == [Chirp(1)]


def test_a_bad_crc_drops_the_address_byte_and_the_next_poll_survives():
    bad = bytearray(encode_poll(LongPoll(1, 0x21, b"\x12\x34")))
    bad[-1] ^= 0x01
    good = encode_poll(GeneralPoll(1)) + encode_poll(LongPoll(1, 0x4D, b"\x00"))
    events = feed(EgmDecoder(1), [bytes(bad) + good])
    assert events[0] == Garbage(b"\x01", "bad CRC")
    assert events[-2:] == [GeneralPoll(1), LongPoll(1, 0x4D, b"\x00")]
    assert not any(isinstance(e, LongPoll) and e.command == 0x21 for e in events)


def test_a_stray_byte_equal_to_our_address_does_not_swallow_the_poll_after_it():
    # Noise 0x01 turns "01 21 00 00 ..." into an S poll 0x01 whose CRC fails: resync at the next
    # byte finds the real poll.
    poll = LongPoll(1, 0x21, b"\x00\x00")
    events = feed(EgmDecoder(1), [b"\x01" + encode_poll(poll)])
    assert events == [Garbage(b"\x01", "bad CRC"), poll]


def test_an_unknown_long_poll_drops_only_the_address_byte():
    # A stray byte equal to our address before a general poll must not swallow it.
    events = feed(EgmDecoder(1), [b"\x01" + encode_poll(GeneralPoll(1))])
    assert events == [Garbage(b"\x01", "unknown long poll 0x81"), GeneralPoll(1)]
    events = feed(EgmDecoder(1), [b"\x02" + encode_poll(GeneralPoll(1))])
    assert events == [OtherAddress(2, 0x81), GeneralPoll(1)]


# What the independent host sas-comm-py 0.1.0 wrote to the pty (tests/sas/test_independent_host.py):
# a 0x80 byte (its "wakeup bit") before each message, R polls without CRC, an M poll with the
# length byte its caller asks for and the CRC over the bytes from the address on.
SAS_COMM_PY_WIRE = [
    ("80 01 54", LongPoll(1, 0x54)),
    ("80 01 1F", LongPoll(1, 0x1F)),
    ("80 01 2F 04 00 00 0B 0C E8 24", LongPoll(1, 0x2F, bytes.fromhex("00 00 0B 0C"))),
    ("80 01 6F 06 00 00 0C 00 A0 00 48 4F", LongPoll(1, 0x6F, bytes.fromhex("00 00 0C 00 A0 00"))),
    ("80 81", GeneralPoll(1)),
]
WAKEUP_BYTE = Garbage(b"\x80", "general poll to address 0 (a wakeup byte)")


def test_a_host_that_sends_0x80_before_each_message_is_framed_and_can_repeat_a_poll():
    stream = b"".join(bytes.fromhex(w) for w, _ in SAS_COMM_PY_WIRE)
    expected = [e for _, poll in SAS_COMM_PY_WIRE for e in (WAKEUP_BYTE, poll)]
    assert feed(EgmDecoder(1), [stream]) == expected
    assert feed(EgmDecoder(1), [stream[i : i + 1] for i in range(len(stream))]) == expected
    # 0x80 polls no machine, so it is no poll to another one: the same general poll again is
    # the host's retry (the exception is sent again, not dropped), a long poll acknowledges it.
    log = ReplyLog()

    def verdicts(wire: str) -> list:
        return [log.on_event(e) for e in feed(EgmDecoder(1), [bytes.fromhex(wire)])]

    assert verdicts("80 81") == [None, Verdict(repeat=False)]
    log.sent(b"\x11")
    assert verdicts("80 81") == [None, Verdict(repeat=True)]
    assert verdicts("80 01 1A") == [None, Verdict(repeat=False, acknowledged=b"\x11")]


def test_sas_comm_pys_m_poll_without_its_length_byte_is_not_a_poll_and_the_next_one_is():
    # write_type_M without add_length_binary=True (its default) leaves out the length byte.
    malformed = bytes.fromhex("80 01 2F 00 00 0B 0C 82 20")
    events = feed(EgmDecoder(1), [malformed + bytes.fromhex("80 01 1A")])
    assert [e for e in events if isinstance(e, LongPoll | GeneralPoll)] == [LongPoll(1, 0x1A)]


def test_host_sees_the_chirp_and_rejects_replies_it_did_not_ask_for():
    host = HostDecoder(1)
    host.receive_data(b"\x01\x01\x07")
    assert host.events() == [Chirp(1), Chirp(1), Garbage(b"\x07", "byte while no reply is due")]
    host.expect(LongPoll(1, 0x10))
    wire = bytearray(encode_reply(Reply(1, 0x10, bytes.fromhex("00000042"))))
    wire[3] ^= 0x10
    host.receive_data(bytes(wire))
    events = host.events()
    assert len(events) == 1 and isinstance(events[0], Garbage) and events[0].reason == "bad CRC"
    host.expect(LongPoll(1, 0x10))
    host.receive_data(encode_reply(Reply(1, 0x11, bytes(4))))
    assert host.events()[0] == Garbage(b"\x01", "reply to 0x11, not 0x10")


def test_a_repeated_poll_asks_for_the_last_reply_and_a_new_poll_acknowledges_it():
    log = ReplyLog()
    meters = LongPoll(1, 0x10)
    assert log.on_event(GeneralPoll(1)).repeat is False
    log.sent(b"\x51")                                          # handpay pending
    # The host lost the exception and asks again: resend, do not dequeue the next one.
    assert log.on_event(GeneralPoll(1)).repeat is True
    verdict = log.on_event(meters)                              # a different poll: implied ACK
    assert verdict.repeat is False and verdict.acknowledged == b"\x51"
    log.sent(b"meter reply")
    assert log.on_event(Garbage(b"\x01", "bad CRC")) is None     # a garbled retry changes nothing
    assert log.on_event(meters).repeat is True
    # A poll to another machine in between: the same poll again is a new one.
    log.on_event(OtherAddress(2, 0x10))
    verdict = log.on_event(meters)
    assert verdict.repeat is False and verdict.acknowledged == b"meter reply"
    # A poll we never answered cannot be repeated.
    assert log.on_event(meters).repeat is False


def test_link_goes_down_after_five_seconds_without_a_poll():
    watch = LinkWatch()
    assert not watch.up(0.0)
    watch.polled(10.0)
    assert watch.up(14.9)
    assert not watch.up(15.0)


def test_bcd_meters_roll_over_at_their_width():
    assert to_bcd(12345678, 4) == bytes.fromhex("12345678")
    assert to_bcd(123456789, 4) == bytes.fromhex("23456789")
    assert to_bcd(100_000_000, 4) == bytes(4)
    assert rollover(1_234_567, 2) == 4567
    assert from_bcd(bytes.fromhex("00012345")) == 12345
    with pytest.raises(ValueError):
        from_bcd(b"\x1a")
    with pytest.raises(ValueError):
        to_bcd(-1, 4)
    reply = m.Meters(0x18, (("games_since_power_up", 123_456), ("games_since_door_closed", 7)))
    assert reply.encode() == bytes.fromhex("3456 0007")
    assert m.Meters.decode_for(0x18, reply.encode())["games_since_power_up"] == 3456


def test_the_table_covers_every_long_poll_of_the_issue_with_a_source():
    wanted = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0E, *range(0x0F, 0x1F), 0x1F, 0x20, 0x21,
              0x2F, 0x48, 0x4C, 0x4D, 0x51, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x6F, 0x70, 0x71,
              0x72, 0x74, 0x75, 0x7B, 0x7C, 0x7D, 0x7E, 0x7F, 0x94, 0xA0, 0xAF, 0xB5]
    assert sorted(LONG_POLLS) == sorted(wanted)
    for spec in LONG_POLLS.values():
        assert spec.name and spec.source
        assert (spec.request is None) == (spec.type is PollType.M)
        assert spec.reply_kind is not ReplyKind.FIXED or spec.reply > 0
    assert set(m.METER_LAYOUTS) <= set(LONG_POLLS)


def test_the_exception_table_names_what_the_terminal_reports():
    assert ExceptionCode.CASHOUT_TICKET_PRINTED == 0x3D
    assert ExceptionCode.TICKET_INSERTED == 0x67 and ExceptionCode.TICKET_TRANSFER_COMPLETE == 0x68
    assert ExceptionCode.EXCEPTION_BUFFER_OVERFLOW == 0x70
    assert BILL_ACCEPTED_BY_DOLLARS[20] == ExceptionCode.BILL_20_ACCEPTED == 0x4A
    assert exception_name(0x51) == "HANDPAY_PENDING" and exception_name(0xFE) == "0xFE"


def test_encoders_refuse_what_sas_cannot_carry():
    with pytest.raises(LocalProtocolError, match="outside 1-127"):
        encode_poll(GeneralPoll(0))
    with pytest.raises(LocalProtocolError, match="carries 2 data bytes, not 1"):
        encode_poll(LongPoll(1, 0x21, b"\x00"))
    with pytest.raises(LocalProtocolError, match="carries no data"):
        encode_poll(LongPoll(1, 0x10, b"\x00"))
    with pytest.raises(LocalProtocolError, match="not in the SAS table"):
        encode_poll(LongPoll(1, 0x99))
    with pytest.raises(LocalProtocolError, match="answered by ACK/NACK"):
        encode_reply(Reply(1, 0x01))
    with pytest.raises(LocalProtocolError, match="carries 4 data bytes"):
        encode_reply(Reply(1, 0x10, b"\x00"))
    with pytest.raises(LocalProtocolError, match="not in the SAS table"):
        HostDecoder(1).expect(LongPoll(1, 0x99))


# Typed bodies: request or reply, command, body. Each must survive the wire in its direction.
BODIES = [
    ("reply", 0x1C, m.Meters(0x1C, tuple((name, 10**7 + i) for i, (name, _) in enumerate(
        m.METER_LAYOUTS[0x1C])))),
    ("reply", 0x1F, m.MachineInfo("AT", "001", 0x01, 5, 0, 0, "BJ0001", "9650")),
    ("reply", 0x54, m.SasVersion("602", "EGM-000123")),
    ("request", 0x21, m.RomSignatureRequest(0xBEEF)),
    ("reply", 0x21, m.RomSignature(0x1234)),
    ("reply", 0x48, m.LastBill(0, 7, 42)),
    ("reply", 0x7E, m.DateTime(dt.datetime(2026, 11, 27, 20, 15, 59))),
    ("request", 0x7F, m.DateTime(dt.datetime(2030, 1, 2, 3, 4, 5))),
    ("request", 0x2F, m.SelectedMetersRequest(0, (0x00, 0x0C, 0x0D))),
    ("reply", 0x2F, m.SelectedMeters(0, ((0x00, 1234), (0x0C, 50), (0x0D, 123456789)))),
    ("request", 0x6F, m.ExtendedMetersRequest(1, (0x0000, 0x00A0))),
    ("reply", 0xAF, m.ExtendedMeters(1, ((0x0000, 5, 1234), (0x00A0, 7, 10**13)))),
    ("request", 0x4C, m.ValidationId(0x010203, 42)),
    ("reply", 0x4D, m.EnhancedValidation(0x00, 1, 11272026, 201500, 1234567890123456, 2500, 17,
                                          0, 0, 0)),
    ("reply", 0x57, m.PendingCashout(0x00, 12345)),
    ("request", 0x58, m.ValidationNumber(0, 1234567890123456)),
    ("reply", 0x70, m.TicketValidationData(0x00, 2500, 0x00, to_bcd(123456789012345678, 9))),
    ("request", 0x71, m.RedeemTicket(0x00, 2500, 0x00, to_bcd(123456789012345678, 9), 0, 0)),
    ("request", 0x71, m.RedeemTicket(0x80, 0, 0x00, to_bcd(123456789012345678, 9))),
    ("request", 0x74, m.AftLockRequest(0x00, 0x03, 1000)),
    ("reply", 0x74, m.AftStatus(1234, 0x00, 0x03, 0x00, 0xB0, 0x7F, 2500, 0, 0, 100_000, 0, 0)),
    ("request", 0x72, m.AftInterrogate(0xFF, 0x00)),
    ("request", 0x72, m.AftTransfer(0x00, 0x00, 0x00, 2500, 0, 0, 0x00, 1234, bytes(20), "TX1",
                                    0, 0, b"", 0)),
    ("reply", 0x72, m.AftTransferReply(0x00, 0x00, 0xFF, 0x00, 2500, 0, 0, 0x00, 1234, "TX1",
                                       11272026, 201500, 0, 0, 2500, 0, 0)),
    ("request", 0x7B, m.ExtendedValidationStatus(0x0003, 0x0003, 30, 30)),
    ("reply", 0x7B, m.ExtendedValidationStatusReply(1234, 0x0003, 30, 30)),
    ("request", 0x7C, m.ExtendedTicketData(((0x00, b"CASINO"), (0x01, b"MAIN STREET")))),
    ("request", 0x7D, m.TicketData(1, 30, "CASINO", "MAIN STREET", "TOWN")),
    ("reply", 0x7D, m.Status(0x01)),
]


@pytest.mark.parametrize(("direction", "command", "body"), BODIES)
def test_typed_bodies_round_trip_over_the_wire(direction, command, body):
    if direction == "request":
        poll = LongPoll(1, command, body.encode())
        egm = EgmDecoder(1)
        egm.receive_data(encode_poll(poll))
        (event,) = egm.events()
        assert m.parse_request(command, event.data) == body
    else:
        host = HostDecoder(1)
        host.expect(LongPoll(1, command))
        host.receive_data(encode_reply(Reply(1, command, body.encode())))
        (event,) = host.events()
        assert m.parse_reply(command, event.data) == body


def test_typed_bodies_have_the_lengths_sas_gives():
    assert len(m.MachineInfo("AT", "001", 1, 5, 0, 0, "BJ0001", "9650").encode()) == LONG_POLLS[0x1F].reply
    assert len(m.AftStatus(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0).encode()) == 0x23
    assert len(m.EnhancedValidation(0, 0, 0, 0, 0, 0, 0, 0, 0, 0).encode()) == LONG_POLLS[0x4D].reply
    for command, layout in m.METER_LAYOUTS.items():
        assert sum(width for _, width in layout) == LONG_POLLS[command].reply


def test_malformed_bodies_are_value_errors_and_untyped_polls_keep_their_bytes():
    for command, data in ((0x1F, b"AT"), (0x74, bytes(34)), (0x2F, b"\x00\x01\x99\x00"),
                          (0x7E, bytes.fromhex("13 32 2026 25 00 00"))):
        with pytest.raises(ValueError):
            m.parse_reply(command, data)
    with pytest.raises(ValueError):
        m.parse_reply(0xB5, b"\x01\x02")                     # typed now (drivers/sas/game_info.py)
    assert m.parse_request(0x53, b"\x00\x12") == m.GameNumber(12)
    assert m.parse_request(0x01, b"") == b""                 # ACK-only polls carry no body
