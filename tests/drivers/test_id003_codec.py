"""ID-003 codec: golden frames in both roles, fed whole, split, byte by byte, among garbage."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError, Role
from drivers.id003.codec import (
    Command,
    Escrow,
    Frame,
    Id003Codec,
    Status,
    encode,
    parse_escrow,
)

# docs/protocols/frames.md, JCM ID-003.
GOLDEN = [
    (Role.HOST, Frame(Command.STATUS_REQUEST), "FC 05 11 27 56"),
    (Role.HOST, Frame(Command.ACK), "FC 05 50 AA 05"),
    (Role.HOST, Frame(Command.RESET), "FC 05 40 2B 15"),
    (Role.DEVICE, Frame(Status.IDLING), "FC 05 11 27 56"),
    (Role.DEVICE, Frame(Status.ESCROW, b"\x63"), "FC 06 13 63 A2 D8"),
    (Role.DEVICE, Frame(Status.VEND_VALID), "FC 05 15 03 10"),
    (Role.HOST, Frame(Command.SET_INHIBIT, b"\x00"), "FC 06 C3 00 04 D6"),
]


def _events(codec: Id003Codec, chunks) -> list:
    out = []
    for chunk in chunks:
        codec.receive_data(chunk)
        out += codec.events()
    return out


@pytest.mark.parametrize(("sender", "frame", "wire"), GOLDEN)
def test_golden_frames_encode_in_the_senders_role_and_decode_in_the_other(sender, frame, wire):
    data = bytes.fromhex(wire)
    assert Id003Codec(sender).send(frame) == data
    receiver = Id003Codec(sender.peer)
    receiver.receive_data(data)
    assert receiver.next_event() == frame
    assert receiver.next_event() is NEED_DATA


def test_all_golden_frames_whole_split_and_byte_by_byte():
    stream = b"".join(bytes.fromhex(w) for _, _, w in GOLDEN)
    frames = [f for _, f, _ in GOLDEN]
    assert _events(Id003Codec(Role.HOST), [stream]) == frames
    assert _events(Id003Codec(Role.HOST), [stream[i:i + 1] for i in range(len(stream))]) == frames
    for cut in range(len(stream)):
        assert _events(Id003Codec(Role.HOST), [stream[:cut], stream[cut:]]) == frames


def test_garbage_before_and_after_is_reported_and_skipped():
    codec = Id003Codec(Role.HOST)
    codec.receive_data(b"\x00\x01junk" + bytes.fromhex("FC 06 13 63 A2 D8") + b"\xff\xfe")
    events = codec.events()
    assert events[0] == Garbage(b"\x00\x01junk", "bytes before SYNC")
    assert events[1] == Frame(Status.ESCROW, b"\x63")
    assert events[2] == Garbage(b"\xff\xfe", "bytes before SYNC")
    assert codec.buffered == 0


def test_a_bad_crc_drops_only_up_to_the_next_sync_and_the_next_frame_survives():
    bad = bytearray.fromhex("FC 06 13 63 A2 D8")
    bad[-1] ^= 0x01
    good = bytes.fromhex("FC 05 11 27 56")
    events = _events(Id003Codec(Role.HOST), [bytes(bad) + good])
    assert isinstance(events[0], Garbage) and events[0].reason == "bad CRC"
    assert events[-1] == Frame(Status.IDLING)


def test_a_corrupted_length_does_not_swallow_the_following_frame():
    good = bytes.fromhex("FC 05 11 27 56")
    for bad_len in (0, 3, 4):
        events = _events(Id003Codec(Role.HOST), [bytes((0xFC, bad_len)) + good])
        assert events[-1] == Frame(Status.IDLING), bad_len
    # A too-long LEN waits for bytes, then fails its CRC and resynchronises on the next SYNC.
    codec = Id003Codec(Role.HOST)
    events = _events(codec, [b"\xfc\x40" + good, good * 13])
    assert [e for e in events if isinstance(e, Frame)][-12:] == [Frame(Status.IDLING)] * 12
    assert any(isinstance(e, Garbage) and e.reason == "bad CRC" for e in events)


def test_an_overlong_buffer_is_discarded():
    codec = Id003Codec(Role.HOST)
    codec.receive_data(b"\xfc\xff" + b"\x00" * 2000)
    events = codec.events()
    assert events and all(isinstance(e, Garbage) for e in events)
    assert codec.buffered < codec.max_buffer


def test_a_role_sends_only_its_own_codes():
    with pytest.raises(LocalProtocolError, match="device does not send code 0x20"):
        Id003Codec(Role.DEVICE).send(Frame(0x20))
    with pytest.raises(LocalProtocolError, match="host does not send code 0x13"):
        Id003Codec(Role.HOST).send(Frame(Status.ESCROW, b"\x63"))
    # The device echoes setting commands.
    assert Id003Codec(Role.DEVICE).send(Frame(Command.SET_INHIBIT, b"\x00")) == bytes.fromhex(
        "FC 06 C3 00 04 D6")
    with pytest.raises(ValueError):
        Frame(0x100)
    with pytest.raises(ValueError):
        Frame(0x11, bytes(251))


def test_escrow_items():
    assert parse_escrow(Frame(Status.ESCROW, b"\x63")) == Escrow(note_code=0x63)
    ticket = Frame(Status.ESCROW, b"\x6f" + b"123456789012345678")
    assert parse_escrow(ticket) == Escrow(barcode="123456789012345678")
    for bad in (b"", b"\x60", b"\x63\x00", b"\x6f", b"\x6f12a4"):
        assert parse_escrow(Frame(Status.ESCROW, bad)) is None
    assert parse_escrow(Frame(Status.IDLING, b"\x63")) is None
    assert Frame(Status.ESCROW).name(Role.DEVICE) == "ESCROW"
    assert Frame(Command.SET_INHIBIT).name(Role.DEVICE) == "SET_INHIBIT"
    assert Frame(0x11).name(Role.HOST) == "STATUS_REQUEST"


frames = st.builds(Frame, st.integers(0, 255), st.binary(max_size=40))
noise = st.binary(max_size=30).map(lambda b: b.replace(b"\xfc", b""))


def _roundtrip(pieces, cuts):
    stream = b"".join(noise_before + encode(frame) for noise_before, frame in pieces)
    codec = Id003Codec(Role.HOST)
    chunks, last = [], 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts):
        chunks.append(stream[last:cut])
        last = cut
    chunks.append(stream[last:])
    got = [e for e in _events(codec, chunks) if isinstance(e, Frame)]
    assert got == [frame for _, frame in pieces]


@given(st.lists(st.tuples(noise, frames), max_size=8), st.lists(st.integers(0, 10_000), max_size=6))
def test_frames_among_noise_decode_in_order_however_the_stream_is_cut(pieces, cuts):
    _roundtrip(pieces, cuts)


@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_raise(data):
    codec = Id003Codec(Role.DEVICE)
    codec.receive_data(data)
    codec.events()
    assert codec.buffered <= codec.max_buffer


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.tuples(noise, frames), max_size=8),
       st.lists(st.integers(0, 10_000), max_size=6))
def test_fuzz_id003_codec(data, pieces, cuts):
    codec = Id003Codec(Role.HOST)
    codec.receive_data(data)
    codec.events()
    _roundtrip(pieces, cuts)
