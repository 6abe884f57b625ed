"""Real-time event responses in the SAS codec: golden frames (both roles) and the host's framing.

Layouts: the Aristocrat Monaco platform's SAS client (tejvirc/Platform, ``SasClient.HandleGeneralPoll``
sends address, 0xFF, the exception's bytes, CRC; ``*ExceptionBuilder.cs`` give each event's data);
docs/protocols/sas.md, "Real-time event reporting". The CRCs were computed with the independent
calculator ``drivers.crc.crc16_kermit``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import Garbage, LocalProtocolError
from drivers.sas.codec import (
    Chirp,
    EventReply,
    ExceptionReply,
    GeneralPoll,
    HostDecoder,
    encode_reply,
)
from drivers.sas.events import (
    BillAcceptedEvent,
    GameEndedEvent,
    GameSelectedEvent,
    GameStartedEvent,
    data_length,
    parse_event,
)
from tests.drivers.streams import cut, feed

#: (frame, the event it carries, its typed data).
GOLDEN = [
    ("01 FF 00 1C A5", EventReply(1, 0x00), None),                          # no activity
    ("01 FF 11 14 A4", EventReply(1, 0x11), None),                          # slot door opened
    ("01 FF 3D 7A 4F", EventReply(1, 0x3D), None),                          # ticket printed: no data
    ("01 FF 4F 00 03 00 00 00 02 F8 5F", EventReply(1, 0x4F, bytes.fromhex("00 03 00 00 00 02")),
     BillAcceptedEvent(0, 3, 2)),
    ("01 FF 7E 00 25 00 00 00 25 02 00 2A DA", EventReply(1, 0x7E, bytes.fromhex("00 25 00 00 00 25 02 00")),
     GameStartedEvent(25, 25, 0x02, 0)),
    ("01 FF 7F 00 00 00 75 DA 39", EventReply(1, 0x7F, bytes.fromhex("00 00 00 75")), GameEndedEvent(75)),
    ("01 FF 8C 00 03 42 55", EventReply(1, 0x8C, bytes.fromhex("00 03")), GameSelectedEvent(3)),
]


def host(real_time: bool = True) -> HostDecoder:
    decoder = HostDecoder(1)
    decoder.real_time = real_time
    decoder.expect(GeneralPoll(1))
    return decoder


@pytest.mark.parametrize(("frame", "event", "body"), GOLDEN)
def test_event_responses_encode_and_frame_as_the_golden_bytes(frame, event, body):
    wire = bytes.fromhex(frame)
    assert encode_reply(event) == wire
    decoder = host()
    decoder.receive_data(wire)
    assert list(decoder.events()) == [event]
    assert parse_event(event.code, event.data) == body


@pytest.mark.parametrize(("frame", "event"), [(f, e) for f, e, _ in GOLDEN])
def test_an_event_response_in_pieces_is_framed_as_a_whole(frame, event):
    decoder = host()
    seen = []
    for byte in bytes.fromhex(frame):
        decoder.receive_data(bytes((byte,)))
        seen += list(decoder.events())
    assert seen == [event]


def test_a_corrupted_event_response_is_garbage():
    decoder = host()
    decoder.receive_data(bytes.fromhex("01 FF 7F 00 00 00 76 DA 39"))      # one data bit flipped
    [event] = decoder.events()
    assert isinstance(event, Garbage) and event.reason == "bad CRC"


def test_without_real_time_reporting_the_address_byte_is_an_exception():
    decoder = host(real_time=False)
    decoder.receive_data(bytes.fromhex("01"))
    assert list(decoder.events()) == [ExceptionReply(0x01)]


def test_with_real_time_reporting_a_bare_exception_byte_is_still_read():
    decoder = host()
    decoder.receive_data(bytes.fromhex("00"))                               # not the address
    assert list(decoder.events()) == [ExceptionReply(0x00)]
    decoder = host()
    decoder.receive_data(bytes.fromhex("01 11"))                            # the address, then no FF
    assert list(decoder.events())[0] == ExceptionReply(0x01)


def test_an_event_with_the_wrong_data_length_is_refused():
    with pytest.raises(LocalProtocolError):
        encode_reply(EventReply(1, 0x7F, b"\x00\x75"))
    with pytest.raises(LocalProtocolError):
        encode_reply(EventReply(1, 0x11, b"\x00"))
    with pytest.raises(ValueError):
        parse_event(0x11, b"\x00")


@st.composite
def events(draw: st.DrawFn) -> EventReply:
    code = draw(st.integers(0, 255))
    size = data_length(code)
    return EventReply(1, code, draw(st.binary(min_size=size, max_size=size)))


@settings(max_examples=80, deadline=None)
@given(st.lists(events(), max_size=8), st.lists(st.integers(0, 10_000), max_size=6))
def test_event_responses_survive_the_wire_however_they_are_cut(sent, cuts):
    decoder = HostDecoder(1)
    decoder.real_time = True
    got = []
    for event in sent:
        decoder.expect(GeneralPoll(1))
        got += feed(decoder, cut(encode_reply(event), cuts))
    assert got == sent


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=400), st.lists(st.just(GeneralPoll(1)), max_size=4))
def test_random_bytes_with_real_time_reporting_give_only_the_codecs_own_events(data, expects):
    decoder = HostDecoder(1)
    decoder.real_time = True
    shares = [len(data) * k // (len(expects) + 1) for k in range(1, len(expects) + 1)]
    for i, chunk in enumerate(cut(data, shares)):
        if i < len(expects):
            decoder.expect(expects[i])
        decoder.receive_data(chunk)
        assert all(isinstance(e, EventReply | ExceptionReply | Chirp | Garbage) for e in decoder.events())
    assert decoder.buffered <= decoder.max_buffer
