"""The MicroTouch Format Tablet codec: golden frames in both roles, any split, resynchronisation.

The golden bytes are computed by hand from 3M's layout (``docs/protocols/touch.md``), not by the
codec: a report is ``S X x Y y``, S = 0x80 | 0x40 while touching, X and Y 14 bits, low 7 bits
first. For example X = 1000 = 7 * 128 + 104 is ``68 07``; Y = 2000 = 15 * 128 + 80 is ``50 0F``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError, Role
from drivers.touch.contact import Contact, Phase
from drivers.touch.microtouch_codec import (
    MAX_TEXT,
    RAW_MAX,
    Command,
    ContactTracker,
    MicroTouchCodec,
    Report,
    Response,
    TouchDecoder,
    encode,
)
from tests.drivers.streams import cut, feed

H = bytes.fromhex

#: (meaning, bytes, message): the device's side.
DEVICE_GOLDEN = [
    ("X=16383 Y=0, touching", H("C07F7F0000"), Report(16383, 0, True)),
    ("X=0 Y=0, lift-off", H("8000000000"), Report(0, 0, False)),
    ("X=1000 Y=2000, touching", H("C06807500F"), Report(1000, 2000, True)),
    ("X=1000 Y=2000, lift-off", H("806807500F"), Report(1000, 2000, False)),
    ("X=8192 Y=16383, touching", H("C000407F7F"), Report(8192, 16383, True)),
    ("positive response <SOH>0<CR>", H("01300D"), Response("0")),
    ("negative response <SOH>1<CR>", H("01310D"), Response("1")),
    ("Output Identity answer <SOH>EG0001<CR>", H("014547303030310D"), Response("EG0001")),
]
#: The host's side.
HOST_GOLDEN = [
    ("Format Tablet <SOH>FT<CR>", H("0146540D"), Command("FT")),
    ("Mode Stream <SOH>MS<CR>", H("014D530D"), Command("MS")),
    ("Null <SOH>Z<CR>", H("015A0D"), Command("Z")),
    ("Reset <SOH>R<CR>", H("01520D"), Command("R")),
    ("Output Identity <SOH>OI<CR>", H("014F490D"), Command("OI")),
]


def decode(role: Role, data: bytes, chunk: int | None = None) -> list:
    codec = MicroTouchCodec(role)
    step = chunk or max(len(data), 1)
    events = feed(codec, [data[i:i + step] for i in range(0, len(data), step)])
    assert codec.buffered == 0
    return events


@pytest.mark.parametrize(("meaning", "data", "message"), DEVICE_GOLDEN, ids=[g[0] for g in DEVICE_GOLDEN])
def test_device_golden_frames_encode_and_decode_in_any_split(meaning, data, message):
    assert MicroTouchCodec(Role.DEVICE).send(message) == data
    for chunk in range(1, len(data) + 1):
        assert decode(Role.HOST, data, chunk) == [message], chunk


@pytest.mark.parametrize(("meaning", "data", "message"), HOST_GOLDEN, ids=[g[0] for g in HOST_GOLDEN])
def test_host_golden_frames_encode_and_decode_in_any_split(meaning, data, message):
    assert MicroTouchCodec(Role.HOST).send(message) == data
    for chunk in range(1, len(data) + 1):
        assert decode(Role.DEVICE, data, chunk) == [message], chunk


def test_the_whole_golden_stream_in_every_chunk_size():
    stream = b"".join(g[1] for g in DEVICE_GOLDEN)
    expected = [g[2] for g in DEVICE_GOLDEN]
    for chunk in range(1, len(stream) + 1):
        assert decode(Role.HOST, stream, chunk) == expected, chunk


def test_roles_and_texts_are_checked_when_sending():
    with pytest.raises(LocalProtocolError, match="does not send Report"):
        MicroTouchCodec(Role.HOST).send(Report(1, 2, True))
    with pytest.raises(LocalProtocolError, match="does not send Command"):
        MicroTouchCodec(Role.DEVICE).send(Command("FT"))
    for bad in ("", "F\rT", "\x01FT", "é", "X" * (MAX_TEXT + 1)):
        with pytest.raises(LocalProtocolError, match="printable ASCII"):
            encode(Command(bad))
    with pytest.raises(ValueError, match="0..16383"):
        Report(RAW_MAX + 1, 0, True)
    with pytest.raises(ValueError, match="0..16383"):
        Report(0, -1, True)


def test_a_partial_report_waits_for_its_end():
    codec = MicroTouchCodec(Role.HOST)
    codec.receive_data(H("C06807"))
    assert codec.next_event() is NEED_DATA
    assert codec.buffered == 3
    codec.receive_data(H("500F"))
    assert codec.events() == [Report(1000, 2000, True)]


def test_a_torn_report_is_dropped_and_the_new_sync_byte_starts_the_next():
    # 3 bytes of a report, then a whole one: the data byte due is a sync byte
    events = decode(Role.HOST, H("C06807") + H("C07F7F0000"))
    assert events == [Garbage(H("C06807"), "report torn by a new sync byte"),
                      Report(16383, 0, True)]
    # a lone sync byte
    assert decode(Role.HOST, H("80") + H("8000000000")) == [
        Garbage(H("80"), "report torn by a new sync byte"), Report(0, 0, False)]


def test_noise_outside_frames_is_skipped_up_to_a_sync_byte_or_soh():
    events = decode(Role.HOST, b"\x00\x13noise\x0d" + H("C06807500F") + b"zz" + H("01300D"))
    assert events == [Garbage(b"\x00\x13noise\x0d", "bytes outside a report or a response"),
                      Report(1000, 2000, True),
                      Garbage(b"zz", "bytes outside a report or a response"), Response("0")]


def test_responses_between_reports_and_a_response_cut_by_a_report():
    stream = H("C06807500F") + H("01300D") + H("806807500F")
    assert decode(Role.HOST, stream, 1) == [Report(1000, 2000, True), Response("0"),
                                            Report(1000, 2000, False)]
    assert decode(Role.HOST, H("0130") + H("C07F7F0000")) == [
        Garbage(H("0130"), "response cut short"), Report(16383, 0, True)]
    assert decode(Role.HOST, H("0130") + H("01310D")) == [
        Garbage(H("0130"), "response cut short"), Response("1")]
    assert decode(Role.HOST, H("010D")) == [Garbage(H("010D"), "empty response")]


def test_a_response_longer_than_allowed_is_garbage():
    long = b"\x01" + b"A" * (MAX_TEXT + 1) + b"\x0d"
    events = decode(Role.HOST, long + H("01300D"))
    assert isinstance(events[0], Garbage) and "longer than" in events[0].reason
    assert events[-1] == Response("0")


def test_the_device_side_skips_bytes_before_soh_and_cut_commands():
    assert decode(Role.DEVICE, b"xy" + H("0146540D")) == [
        Garbage(b"xy", "bytes before <SOH>"), Command("FT")]
    assert decode(Role.DEVICE, H("0146") + H("014D530D")) == [
        Garbage(H("0146"), "command cut short"), Command("MS")]
    # a report's bytes mean nothing to the controller
    assert decode(Role.DEVICE, H("C06807500F") + H("015A0D")) == [
        Garbage(H("C06807500F"), "bytes before <SOH>"), Command("Z")]


def test_the_tracker_turns_reports_into_down_move_up():
    tracker = ContactTracker()
    reports = [Report(5, 6, False),                      # a lift-off while up: stray
               Report(10, 20, True), Report(10, 20, True),  # down, then Mode Stream repeats it
               Report(11, 20, True), Report(11, 20, False), Report(11, 20, False)]
    got = [c for r in reports if (c := tracker.feed(r)) is not None]
    assert got == [Contact(0, 10, 20, Phase.DOWN), Contact(0, 11, 20, Phase.MOVE),
                   Contact(0, 11, 20, Phase.UP)]
    assert tracker.counters == {"reports": 6, "repeats": 1, "stray_lift": 2, "lost_lift": 0}


def test_a_lost_lift_off_makes_the_next_touch_a_move():
    # The documented limit: the protocol has no touch counter, so a lost lift-off report (a torn
    # report) leaves the contact down; the next touch moves it.
    dec = TouchDecoder()
    dec.receive_data(H("C06807500F") + H("8068") + H("C000407F7F") + H("8000407F7F"))
    assert dec.events() == [Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 8192, 16383, Phase.MOVE),
                            Contact(0, 8192, 16383, Phase.UP)]
    assert dec.counters["garbage"] == 1


def test_the_touch_decoder_passes_responses_and_counts_garbage():
    dec = TouchDecoder()
    dec.receive_data(H("01300D") + b"\x00" + H("C06807500F") + H("806807500F"))
    assert dec.events() == [Response("0"), Contact(0, 1000, 2000, Phase.DOWN),
                            Contact(0, 1000, 2000, Phase.UP)]
    assert dec.counters == {"reports": 2, "repeats": 0, "stray_lift": 0, "lost_lift": 0, "garbage": 1,
                            "garbage_bytes": 1, "responses": 1}
    assert not dec.touching


# --- properties ----------------------------------------------------------------------------------
_points = st.tuples(st.integers(0, RAW_MAX), st.integers(0, RAW_MAX))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_points, st.booleans()), max_size=30), st.lists(st.integers(0, 400)))
def test_any_reports_round_trip_through_any_split(reports, cuts):
    messages = [Report(x, y, t) for (x, y), t in reports]
    stream = b"".join(encode(m) for m in messages)
    codec = MicroTouchCodec(Role.HOST)
    assert feed(codec, cut(stream, cuts)) == messages
    assert codec.buffered == 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), _points, st.booleans(), st.lists(st.integers(0, 300)))
def test_garbage_never_raises_and_a_valid_report_after_it_decodes(garbage, point, touching, cuts):
    report = Report(*point, touching)
    codec = MicroTouchCodec(Role.HOST)
    events = feed(codec, cut(garbage + encode(report), cuts))
    assert events[-1] == report
    assert codec.buffered == 0
    assert all(isinstance(e, Report | Response | Garbage) for e in events)


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=400), st.integers(1, 50), st.sampled_from([Role.HOST, Role.DEVICE]))
def test_fuzz_any_bytes_never_crash_and_the_buffer_stays_bounded(data, chunk, role):
    codec = MicroTouchCodec(role)
    dec = TouchDecoder()
    for i in range(0, len(data), chunk):
        codec.receive_data(data[i:i + chunk])
        codec.events()
        assert codec.buffered <= MAX_TEXT + 1
        dec.receive_data(data[i:i + chunk])
        for event in dec.events():
            if isinstance(event, Contact):
                assert event.slot == 0 and 0 <= event.x <= RAW_MAX and 0 <= event.y <= RAW_MAX
        assert dec.buffered <= MAX_TEXT + 1


def test_a_lost_lift_off_expires_so_the_next_touch_is_a_touch_down():
    tracker = ContactTracker()
    assert tracker.expire() is None                                  # nothing down: nothing to lift
    assert tracker.feed(Report(10, 20, True)) == Contact(0, 10, 20, Phase.DOWN)
    # the lift-off report is lost on the line; the driver sees the finger silent and expires it
    assert tracker.expire() == Contact(0, 10, 20, Phase.UP)
    assert tracker.feed(Report(900, 40, True)) == Contact(0, 900, 40, Phase.DOWN)   # not a MOVE
    assert tracker.counters["lost_lift"] == 1
