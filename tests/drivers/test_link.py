"""Product link (shoe, I/O board): framing, resynchronisation, and exactly-once in-order delivery
over a channel that drops, repeats and reorders nothing else but loses and duplicates frames."""

from __future__ import annotations

import contextlib
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA, Garbage, LocalProtocolError
from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes
from drivers.link.reliable import Receiver, Sender, control_seq, next_seq
from drivers.shoe.messages import ShoeType, card_payload, decode
from firmware.cards.card import Card


def _events(chunks):
    codec = LinkCodec()
    out = []
    for c in chunks:
        codec.receive_data(c)
        out += codec.events()
    return out


def test_frame_layout_is_the_documented_one():
    # STX LEN SEQ_H SEQ_L TYPE PAYLOAD CRC_L CRC_H; CRC-16/KERMIT over STX..PAYLOAD.
    frame = encode(LinkFrame(0x0102, ShoeType.CARD, b"As"))
    assert frame[:7] == bytes.fromhex("02 05 01 02 20 41 73")
    assert len(frame) == 9
    assert _events([frame]) == [LinkFrame(0x0102, ShoeType.CARD, b"As")]


def test_split_byte_by_byte_and_garbage():
    frames = [LinkFrame(1, ShoeType.CARD, b"Kd"), LinkFrame(0, LinkType.ACK, seq_bytes(7)),
              LinkFrame(2, ShoeType.EMPTY)]
    stream = b"".join(encode(f) for f in frames)
    assert _events([stream[i:i + 1] for i in range(len(stream))]) == frames
    bad = bytearray(encode(frames[0]))
    bad[5] ^= 0xFF
    got = _events([b"\xff\x00" + bytes(bad) + b"\x02\x01" + stream])
    assert [g for g in got if isinstance(g, LinkFrame)] == frames
    assert {g.reason for g in got if isinstance(g, Garbage)} >= {"bytes before STX", "bad CRC"}
    codec = LinkCodec()
    assert codec.next_event() is NEED_DATA


def test_the_receiver_delivers_in_order_once_and_asks_for_gaps():
    rx = Receiver()
    f1, f2, f3 = (LinkFrame(s, ShoeType.CARD, b"As") for s in (1, 2, 3))
    assert rx.receive(f1) == (f1, LinkFrame(0, LinkType.ACK, seq_bytes(1)))
    assert rx.receive(f1) == (None, LinkFrame(0, LinkType.ACK, seq_bytes(1)))       # duplicate
    assert rx.receive(f3) == (None, LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(2)))  # gap
    assert rx.receive(f2)[0] == f2 and rx.receive(f3)[0] == f3
    assert (rx.delivered, rx.duplicates, rx.gaps) == (3, 1, 1)
    assert rx.resync() == LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(4))
    with pytest.raises(LocalProtocolError):
        rx.receive(LinkFrame(0, LinkType.ACK, seq_bytes(1)))


def test_the_sender_keeps_until_acknowledged_resends_and_bounds_its_window():
    tx = Sender(retry_s=1.0, window=3)
    sent = [tx.send(ShoeType.CARD, b"As", now=0.0) for _ in range(3)]
    assert [f.seq for f in sent] == [1, 2, 3]
    with pytest.raises(LocalProtocolError, match="3 frames await"):
        tx.send(ShoeType.CARD, b"Ks", now=0.0)
    assert tx.due(0.5) == [] and tx.due(1.0) == [sent[0]]
    tx.acknowledged(2)
    assert tx.unacknowledged == [sent[2]]
    assert tx.resend_from(3, now=2.0) == [sent[2]]
    tx.acknowledged(99)                               # unknown: nothing released
    assert tx.unacknowledged == [sent[2]]
    assert tx.resend_from(4, now=2.0) == [] and tx.unacknowledged == []
    assert next_seq(0xFFFF) == 1
    assert control_seq(LinkFrame(0, LinkType.ACK, seq_bytes(513))) == 513
    assert control_seq(LinkFrame(0, LinkType.ACK, b"\x01")) is None


def _run_lossy(cards: list[Card], seed: int, loss: float, dup: float, disconnect_at: int | None):
    """A shoe sends every card over a channel that loses and duplicates frames both ways (and
    once drops everything for a while); the host must get each card exactly once, in order."""
    rnd = random.Random(seed)
    tx, rx = Sender(retry_s=0.05, window=16), Receiver()
    to_host: list[bytes] = []
    to_shoe: list[bytes] = []
    host_codec, shoe_codec = LinkCodec(), LinkCodec()
    got: list[Card] = []
    queue = list(cards)
    now = 0.0

    def channel(data: bytes, out: list[bytes], step: int) -> None:
        if disconnect_at is not None and disconnect_at <= step < disconnect_at + 30:
            return
        if rnd.random() < loss:
            return
        out.append(data)
        if rnd.random() < dup:
            out.append(data)

    for step in range(20_000):
        now += 0.01
        while queue and len(tx.unacknowledged) < tx.window:
            channel(encode(tx.send(ShoeType.CARD, card_payload(queue.pop(0)), now)), to_host, step)
        for frame in tx.due(now):
            channel(encode(frame), to_host, step)
        if disconnect_at is not None and step == disconnect_at + 30:
            channel(encode(rx.resync()), to_shoe, step)       # host reconnects
        while to_host:
            host_codec.receive_data(to_host.pop(0))
            for event in host_codec.events():
                deliver, reply = rx.receive(event, now)
                if deliver is not None:
                    got.append(decode(deliver.type, deliver.payload).card)
                if reply is not None:
                    channel(encode(reply), to_shoe, step)
        while to_shoe:
            shoe_codec.receive_data(to_shoe.pop(0))
            for control in shoe_codec.events():
                seq = control_seq(control)
                if control.type == LinkType.ACK:
                    tx.acknowledged(seq)
                elif control.type == LinkType.RESEND_FROM:
                    for frame in tx.resend_from(seq, now):
                        channel(encode(frame), to_host, step)
        if not queue and not tx.unacknowledged:
            break
    return got


def test_a_dealt_sequence_arrives_exactly_once_across_loss_duplication_and_a_disconnect():
    shoe = [Card(i % 52) for i in range(416)]
    assert _run_lossy(shoe, seed=1, loss=0.2, dup=0.2, disconnect_at=100) == shoe


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 51).map(Card), min_size=1, max_size=60), st.integers(0, 10**6),
       st.floats(0, 0.4), st.floats(0, 0.4), st.none() | st.integers(0, 200))
def test_exactly_once_in_order_over_any_lossy_channel(cards, seed, loss, dup, disconnect_at):
    assert _run_lossy(cards, seed, loss, dup, disconnect_at) == cards


def test_shoe_messages_decode_or_refuse():
    assert decode(ShoeType.CARD, b"Td").card == Card.parse("Td")
    assert decode(ShoeType.DOOR, b"\x01").value == 1
    assert decode(ShoeType.LOADED, b"\x01\xa0").value == 416
    assert decode(ShoeType.EMPTY, b"").type is ShoeType.EMPTY
    for type_, payload in ((ShoeType.CARD, b"Zz"), (ShoeType.CARD, b"\xff\xfe"),
                           (ShoeType.CARD, b"10d"), (ShoeType.MISREAD, b"\x09"),
                           (ShoeType.DOOR, b"\x02"), (ShoeType.EMPTY, b"x"), (0x7E, b"")):
        with pytest.raises(ValueError):
            decode(type_, payload)


@given(st.binary(max_size=600))
def test_arbitrary_bytes_never_raise(data):
    codec = LinkCodec()
    codec.receive_data(data)
    for event in codec.events():
        if isinstance(event, LinkFrame):
            with contextlib.suppress(ValueError):
                decode(event.type, event.payload)
    assert codec.buffered <= codec.max_buffer


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=2000))
def test_fuzz_link_codec(data):
    test_arbitrary_bytes_never_raise.hypothesis.inner_test(data)


def test_a_gap_is_asked_for_once_per_hold_and_answered_once_per_hold():
    """Every frame behind a gap would ask again, and every answer re-send the whole window: on a
    real line that storm fills the buffers both ways. Both halves hold a repeated request."""
    rx = Receiver(hold_s=0.1)
    rx.receive(LinkFrame(1, ShoeType.CARD, b"As"), now=0.0)
    behind = [LinkFrame(s, ShoeType.CARD, b"As") for s in (3, 4, 5)]
    assert rx.receive(behind[0], now=1.0)[1] == LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(2))
    assert rx.receive(behind[1], now=1.05) == (None, None)
    assert rx.receive(behind[2], now=1.2)[1] == LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(2))
    tx = Sender(hold_s=0.1)
    frames = [tx.send(ShoeType.CARD, b"As", now=0.0) for _ in range(3)]
    assert tx.resend_from(2, now=1.0) == frames[1:]
    assert tx.resend_from(2, now=1.05) == []
    assert tx.resend_from(2, now=1.2) == frames[1:]
