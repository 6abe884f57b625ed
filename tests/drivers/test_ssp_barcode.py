"""SSP bar-code tickets in the codec, both roles: golden frames (CRC recomputed here by an
independent bit-by-bit CRC-16/0x8005), the bar-code inhibit register, GET_BARCODE_DATA answers and
the ticket poll events, fed whole, split at every point and byte by byte among garbage; then the
driver's tracker for tickets, sans-I/O."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from drivers.codec import Garbage, Role
from drivers.ssp.barcode import (
    POWER_UP_INHIBIT,
    BarcodeData,
    TicketStatus,
    accepts_notes,
    accepts_tickets,
    barcode_inhibit,
    encode_barcode_data,
    parse_barcode_data,
)
from drivers.ssp.codec import (
    Command,
    Packet,
    PollEvent,
    Response,
    SspCodec,
    encode,
    encode_events,
    parse_events,
)
from drivers.ssp.driver import EventTracker
from drivers.ssp.setup import USD_SETUP
from hal.events import Rejected, Returned, TicketEscrowed, TicketStacked
from tests.drivers.ssp_frames import crc_8005

TICKET = b"000111222333444555"
OK = bytes((Response.OK,))

#: (meaning, sender, sequence flag, DATA, the frame on the wire). Computed for this product (no
#: public SSP bar-code frame is published); the CRC is checked below by an independent routine.
GOLDEN = [
    ("host: SET_BARCODE_INHIBIT 0xFC (notes and tickets)", Role.HOST, True,
     bytes((Command.SET_BARCODE_INHIBIT, 0xFC)), "7F 80 02 26 FC 3B 56"),
    ("host: SET_BARCODE_INHIBIT 0xFE (notes only)", Role.HOST, True,
     bytes((Command.SET_BARCODE_INHIBIT, 0xFE)), "7F 80 02 26 FE 34 D6"),
    ("host: GET_BARCODE_INHIBIT", Role.HOST, True, bytes((Command.GET_BARCODE_INHIBIT,)),
     "7F 80 01 25 DE 02"),
    ("host: GET_BARCODE_DATA", Role.HOST, False, bytes((Command.GET_BARCODE_DATA,)),
     "7F 00 01 27 D2 08"),
    ("device: POLL reply, BARCODE_TICKET_VALIDATED", Role.DEVICE, True,
     OK + bytes((PollEvent.BARCODE_TICKET_VALIDATED,)), "7F 80 02 F0 E5 62 22"),
    ("device: GET_BARCODE_DATA reply, in escrow, 18 digits", Role.DEVICE, False,
     OK + bytes((TicketStatus.IN_ESCROW, len(TICKET))) + TICKET,
     "7F 00 15 F0 01 12 30 30 30 31 31 31 32 32 32 33 33 33 34 34 34 35 35 35 74 B0"),
    ("device: GET_BARCODE_DATA reply, no valid data", Role.DEVICE, True,
     OK + bytes((TicketStatus.NO_VALID_DATA, 0)), "7F 80 03 F0 00 00 C3 A8"),
    ("device: POLL reply, BARCODE_TICKET_ACK + STACKING", Role.DEVICE, False,
     OK + bytes((PollEvent.BARCODE_TICKET_ACK, PollEvent.STACKING)), "7F 00 03 F0 D1 CC 67 70"),
]


def _events(codec: SspCodec, chunks) -> list:
    out = []
    for chunk in chunks:
        codec.receive_data(chunk)
        out += codec.events()
    return out


@pytest.mark.parametrize(("meaning", "sender", "seq", "data", "wire"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_golden_frames_both_roles(meaning, sender, seq, data, wire):
    frame = bytes.fromhex(wire)
    body = frame[1:-2]                                   # none of these holds a 0x7F to unstuff
    assert crc_8005(body) == frame[-2] | frame[-1] << 8
    if sender is Role.HOST:
        host = SspCodec(Role.HOST)
        if not seq:
            host.command(b"\x07")                        # the flag toggles per command
        assert host.command(data) == frame
        device = SspCodec(Role.DEVICE)
        device.receive_data(frame)
        assert device.next_event() == Packet(0, seq, data)
    else:
        device = SspCodec(Role.DEVICE)
        device.receive_data(encode(0, seq, bytes((Command.POLL,))))   # a command to answer
        assert device.next_event().seq is seq
        assert device.reply(data) == frame
        host = SspCodec(Role.HOST)
        host.receive_data(frame)
        assert host.next_event() == Packet(0, seq, data)


def test_the_golden_answers_decode():
    assert parse_events(bytes.fromhex("E5")) == [(PollEvent.BARCODE_TICKET_VALIDATED, None)]
    assert parse_events(bytes.fromhex("D1 CC")) == [(PollEvent.BARCODE_TICKET_ACK, None),
                                                    (PollEvent.STACKING, None)]
    # Neither ticket event carries a byte: what follows is the next event.
    assert parse_events(bytes.fromhex("EF 00 E5 E8")) == [
        (PollEvent.READ, 0), (PollEvent.BARCODE_TICKET_VALIDATED, None), (PollEvent.DISABLED, None)]
    answer = parse_barcode_data(bytes.fromhex("01 12") + TICKET)
    assert answer == BarcodeData(TicketStatus.IN_ESCROW, TICKET)
    assert answer.digits == TICKET.decode()
    assert encode_barcode_data(answer) == bytes.fromhex("01 12") + TICKET
    assert encode_events([(PollEvent.BARCODE_TICKET_ACK, None), (PollEvent.STACKING, None)]) == \
        bytes.fromhex("D1 CC")


def test_the_barcode_inhibit_register():
    assert barcode_inhibit(notes=True, tickets=True) == b"\xfc"
    assert barcode_inhibit(notes=True, tickets=False) == b"\xfe" == POWER_UP_INHIBIT
    assert barcode_inhibit(notes=False, tickets=True) == b"\xfd"
    assert barcode_inhibit(notes=False, tickets=False) == b"\xff"
    assert accepts_notes(b"\xfe") and not accepts_tickets(b"\xfe")
    assert accepts_tickets(b"\xfd") and not accepts_notes(b"\xfd")


def test_malformed_barcode_answers_are_value_errors():
    for bad in (b"", b"\x01", b"\x01\x05123", b"\x01\xff"):
        with pytest.raises(ValueError):
            parse_barcode_data(bad)
    assert parse_barcode_data(b"\x01\x02" + b"12" + b"xx").data == b"12"   # the rest ignored
    assert BarcodeData(1, b"12a4").digits is None and BarcodeData(1).digits is None
    assert BarcodeData(1, "１２".encode()).digits is None                  # digits, but not ASCII
    with pytest.raises(ValueError):
        BarcodeData(1, bytes(251))


def test_ticket_frames_whole_split_and_byte_by_byte_among_garbage():
    frames = [bytes.fromhex(g[4]) for g in GOLDEN if g[1] is Role.DEVICE]
    stream = b"\x00\x13junk" + b"".join(f + b"\xaa\x55" for f in frames)
    expected = [Packet(0, g[2], g[3]) for g in GOLDEN if g[1] is Role.DEVICE]

    def packets(chunks):
        return [e for e in _events(SspCodec(Role.HOST), chunks) if isinstance(e, Packet)]

    assert packets([stream]) == expected
    assert packets([stream[i:i + 1] for i in range(len(stream))]) == expected
    for cut in range(len(stream)):
        assert packets([stream[:cut], stream[cut:]]) == expected
    garbage = [e for e in _events(SspCodec(Role.HOST), [stream]) if isinstance(e, Garbage)]
    assert garbage and all(g.reason == "bytes before STX" for g in garbage)


@given(st.integers(0, 255), st.binary(max_size=250))
def test_barcode_answers_round_trip_through_the_codec(status, data):
    answer = BarcodeData(status, data)
    assert parse_barcode_data(encode_barcode_data(answer)) == answer
    packet = OK + encode_barcode_data(answer)
    if len(packet) <= 255:
        codec = SspCodec(Role.HOST)
        codec.receive_data(encode(0, True, packet))
        assert parse_barcode_data(codec.next_event().data[1:]) == answer


@given(st.binary(max_size=300))
def test_arbitrary_answers_parse_or_raise_value_error(data):
    try:
        answer = parse_barcode_data(data)
    except ValueError:
        return
    assert encode_barcode_data(answer) == data[:2 + data[1]]


# --- the driver's tracker, sans-I/O -------------------------------------------------------------
NAME = "validator"
DIGITS = TICKET.decode()


def _tracker_with_ticket_waiting():
    tracker = EventTracker(NAME, USD_SETUP.notes)
    reaction = tracker.on_poll([(PollEvent.READ, 0), (PollEvent.BARCODE_TICKET_VALIDATED, None)])
    assert reaction.read_barcode and reaction.events == []
    assert tracker.reading_ticket and tracker.holding and not tracker.escrowed   # HOLD, not POLL
    return tracker


def test_tracker_a_ticket_is_escrowed_then_reported_stacked_once():
    tracker = _tracker_with_ticket_waiting()
    reaction = tracker.on_barcode(BarcodeData(TicketStatus.IN_ESCROW, TICKET))
    assert reaction.events == [TicketEscrowed(NAME, DIGITS)] and not reaction.return_escrow
    assert tracker.escrowed and tracker.holding and not tracker.reading_ticket
    # The same escrow reported again is not a second ticket.
    assert tracker.on_poll([(PollEvent.BARCODE_TICKET_VALIDATED, None)]).events == []
    tracker.item.decided = True                                  # the cabinet said stack
    first = tracker.on_poll([(PollEvent.BARCODE_TICKET_ACK, None), (PollEvent.STACKING, None)])
    assert first.events == [TicketStacked(NAME, DIGITS)]
    again = tracker.on_poll([(PollEvent.BARCODE_TICKET_ACK, None), (PollEvent.STACKED, None)])
    assert again.events == [] and not again.rejected


@pytest.mark.parametrize("answer", [
    BarcodeData(TicketStatus.NO_VALID_DATA),
    BarcodeData(TicketStatus.IN_ESCROW, b"12AB"),
    BarcodeData(TicketStatus.IN_ESCROW),
    BarcodeData(TicketStatus.REJECTED, TICKET),
    BarcodeData(0x7A, TICKET),
    None,
], ids=["no-data", "not-digits", "empty", "rejected-status", "unknown-status", "no-answer"])
def test_tracker_an_unreadable_ticket_is_returned_never_credited(answer):
    tracker = _tracker_with_ticket_waiting()
    reaction = tracker.on_barcode(answer, "GET_BARCODE_DATA refused")
    assert reaction.return_escrow and reaction.events == [Rejected(NAME, "unreadable ticket")]
    assert not tracker.holding and not tracker.escrowed
    after = tracker.on_poll([(PollEvent.REJECTING, None)])
    assert after.events == [] and not after.rejected           # no second report of it
    assert tracker.on_poll([(PollEvent.REJECTED, None)]).events == []


def test_tracker_a_ticket_returned_an_ack_without_escrow_and_stray_bar_code_data():
    tracker = _tracker_with_ticket_waiting()
    tracker.on_barcode(BarcodeData(TicketStatus.IN_ESCROW, TICKET))
    assert tracker.on_poll([(PollEvent.REJECTING, None)]).events == [Returned(NAME)]
    assert tracker.on_poll([(PollEvent.REJECTED, None)]).events == []
    assert tracker.on_poll([(PollEvent.BARCODE_TICKET_ACK, None)]).events == []   # logged only
    assert tracker.on_barcode(BarcodeData(TicketStatus.IN_ESCROW, TICKET)).events == []


def test_tracker_a_reset_or_fault_drops_a_ticket_being_read():
    tracker = _tracker_with_ticket_waiting()
    reaction = tracker.on_poll([(PollEvent.SLAVE_RESET, None)])
    assert reaction.reinitialise and tracker.item is None and not tracker.holding
    tracker = _tracker_with_ticket_waiting()
    tracker.on_poll([(PollEvent.SAFE_JAM, None)])
    assert tracker.item is None and not tracker.reading_ticket
