"""ITL SSP codec: golden frames, byte stuffing, the sequence flag, resynchronisation, fuzz."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError, Role
from drivers.crc import crc16_ssp
from drivers.ssp.barcode import parse_barcode_data
from drivers.ssp.codec import Command, Packet, Response, SspCodec, encode, parse_events

SYNC = bytes.fromhex("7F 80 01 11 65 82")       # docs/protocols/frames.md
OK = bytes.fromhex("7F 80 01 F0 23 80")


def _events(codec, chunks):
    out = []
    for chunk in chunks:
        codec.receive_data(chunk)
        out += codec.events()
    return out


def test_golden_sync_and_ok_in_both_roles():
    host, device = SspCodec(Role.HOST), SspCodec(Role.DEVICE)
    assert host.command(bytes([Command.SYNC])) == SYNC
    device.receive_data(SYNC)
    assert device.next_event() == Packet(0, True, bytes([Command.SYNC]))
    assert device.reply(bytes([Response.OK])) == OK
    host.receive_data(OK)
    reply = host.next_event()
    assert reply == Packet(0, True, bytes([Response.OK])) and reply.seq == host.expected_seq
    assert host.next_event() is NEED_DATA


def test_whole_split_and_byte_by_byte():
    stream = SYNC + OK + SYNC
    expected = [Packet(0, True, b"\x11"), Packet(0, True, b"\xf0"), Packet(0, True, b"\x11")]
    assert _events(SspCodec(Role.HOST), [stream]) == expected
    assert _events(SspCodec(Role.HOST), [stream[i:i + 1] for i in range(len(stream))]) == expected
    for cut in range(len(stream)):
        assert _events(SspCodec(Role.HOST), [stream[:cut], stream[cut:]]) == expected


def _data_with_crc_byte_7f() -> bytes:
    for value in range(1 << 16):
        data = value.to_bytes(2, "big")
        crc = crc16_ssp(bytes((0x80, 2)) + data)
        if 0x7F in (crc & 0xFF, crc >> 8):
            return data
    raise AssertionError("no such data")


def test_every_7f_after_stx_is_doubled_data_and_crc_alike():
    frame = encode(0, True, b"\x7f\x01\x7f")
    assert frame.count(b"\x7f\x7f") >= 2 and frame[0] == 0x7F
    codec = SspCodec(Role.HOST)
    codec.receive_data(frame)
    assert codec.next_event() == Packet(0, True, b"\x7f\x01\x7f")
    data = _data_with_crc_byte_7f()
    codec.receive_data(encode(0, True, data))
    assert codec.next_event() == Packet(0, True, data)
    # Address 0x7F in SEQ/ID is stuffed too.
    codec.receive_data(encode(0x7F, False, b"\x07"))
    assert codec.next_event() == Packet(0x7F, False, b"\x07")


def test_the_sequence_flag_toggles_and_a_repeat_is_recognised():
    host, device = SspCodec(Role.HOST), SspCodec(Role.DEVICE)
    first = host.command(b"\x07")
    again = host.repeat(b"\x07")
    second = host.command(b"\x07")
    assert first == again and first[1] == 0x80 and second[1] == 0x00
    device.receive_data(first)
    assert device.next_event().repeated is False
    reply = device.reply(b"\xf0")
    device.receive_data(again)
    assert device.next_event().repeated is True          # resend, do not act again
    assert device.last_reply == reply
    device.receive_data(second)
    assert device.next_event().repeated is False


def test_garbage_bad_crc_and_cut_frames_resynchronise():
    bad = bytearray(OK)
    bad[-1] ^= 1
    events = _events(SspCodec(Role.HOST), [b"\x00junk" + bytes(bad) + OK[:3] + SYNC + b"\x01"])
    assert isinstance(events[0], Garbage) and events[0].reason == "bytes before STX"
    assert any(isinstance(e, Garbage) and e.reason == "bad CRC" for e in events)
    assert any(isinstance(e, Garbage) and e.reason == "frame cut short by a new STX" for e in events)
    assert [e for e in events if isinstance(e, Packet)] == [Packet(0, True, b"\x11")]


def test_misuse_is_a_local_error():
    with pytest.raises(LocalProtocolError):
        SspCodec(Role.DEVICE).command(b"\x07")
    with pytest.raises(LocalProtocolError):
        SspCodec(Role.HOST).reply(b"\xf0")
    with pytest.raises(LocalProtocolError, match="replies only to a command"):
        SspCodec(Role.DEVICE).reply(b"\xf0")
    with pytest.raises(LocalProtocolError):
        SspCodec(Role.HOST, address=200)
    with pytest.raises(ValueError):
        encode(0, True, bytes(256))


packets = st.builds(lambda a, s, d: (a, s, d), st.integers(0, 0x7F), st.booleans(),
                    st.binary(max_size=40))
noise = st.binary(max_size=20).map(lambda b: b.replace(b"\x7f", b""))


def _roundtrip(pieces, cuts):
    stream = b"".join(n + encode(*p) for n, p in pieces)
    chunks, last = [], 0
    for cut in sorted(c % (len(stream) + 1) for c in cuts):
        chunks.append(stream[last:cut])
        last = cut
    chunks.append(stream[last:])
    got = [(e.address, e.seq, e.data) for e in _events(SspCodec(Role.HOST), chunks)
           if isinstance(e, Packet)]
    assert got == [p for _, p in pieces]


@given(st.lists(st.tuples(noise, packets), max_size=6), st.lists(st.integers(0, 5000), max_size=5))
def test_packets_among_noise_decode_in_order(pieces, cuts):
    _roundtrip(pieces, cuts)


@given(st.binary(max_size=800))
def test_arbitrary_bytes_never_raise(data):
    codec = SspCodec(Role.DEVICE)
    codec.receive_data(data)
    codec.events()
    assert codec.buffered <= codec.max_buffer


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=2000), st.lists(st.tuples(noise, packets), max_size=6),
       st.lists(st.integers(0, 5000), max_size=5))
def test_fuzz_ssp_codec(data, pieces, cuts):
    codec = SspCodec(Role.DEVICE)
    codec.receive_data(data)
    codec.events()
    _roundtrip(pieces, cuts)
    _decode_replies(data)
    for _, (_, _, packet_data) in pieces:
        _decode_replies(packet_data)


def _decode_replies(data: bytes) -> None:
    """The reply decoders (poll events, bar-code data) take any bytes: a result or ValueError."""
    for decoder in (parse_events, parse_barcode_data):
        with contextlib.suppress(ValueError):
            decoder(data)


@given(st.binary(max_size=300))
def test_reply_decoders_take_any_bytes(data):
    _decode_replies(data)
