"""The simulated card-reading shoe, driven sans-I/O through the link codec (no pty), and the shoe's
HELLO / STATUS payloads pinned by golden frames."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import Garbage
from drivers.link.codec import LinkFrame, LinkType, encode, seq_bytes
from drivers.link.hello import Hello, HelloCause
from drivers.shoe.control import SHOE_KIND, ShoeState
from drivers.shoe.messages import MisreadReason, ShoeType, card_payload
from firmware.cards.card import Card, parse_cards
from sim_hardware.shoe import ShoeSimulator
from tests.sim_hardware.link_host import Host as LinkHost
from tests.sim_hardware.link_host import kermit

CARDS = parse_cards("Qs 2d 3h Ah Td Ts 6c 9s")


class Host(LinkHost):
    """The terminal's end, asking the shoe for its STATUS too."""

    def status(self) -> ShoeState:
        (frame,) = [f for f in self.send(LinkFrame(0, LinkType.STATUS_REQUEST))
                    if f.type == LinkType.STATUS]
        return ShoeState.decode(frame.payload)


@pytest.fixture
def sim(clock) -> ShoeSimulator:
    return ShoeSimulator(CARDS, clock=clock)


@pytest.fixture
def host(sim) -> Host:
    host = Host(sim)
    host.tick()                                   # the power-up HELLO and the first LOADED
    host.reset()
    host.ack(1)
    return host


def hello(cause: HelloCause, next_seq: int) -> LinkFrame:
    return LinkFrame(0, LinkType.HELLO, Hello(SHOE_KIND, (1, 0), next_seq, cause).encode())


def test_golden_frames():
    # HELLO: kind 1, firmware 1.0, next SEQ 1, cause power-up.
    golden_hello = bytes.fromhex("02 09 00 00 03 01 01 00 00 01 00 f5 50")
    # STATUS: door open + cut card out, 416 cards left, next SEQ 258, 2 pending.
    golden_status = bytes.fromhex("02 09 00 00 05 05 01 a0 01 02 02 0f e9")
    # link.md: the 258th card, the ace of spades.
    golden_card = bytes.fromhex("02 05 01 02 20 41 73 97 0c")
    for golden in (golden_hello, golden_status, golden_card):
        crc = kermit(golden[:-2])
        assert golden[-2:] == bytes((crc & 0xFF, crc >> 8))
    assert encode(hello(HelloCause.POWER_UP, 1)) == golden_hello
    state = ShoeState(door_open=True, cut_card=True, left=416, next_seq=258, pending=2)
    assert encode(LinkFrame(0, LinkType.STATUS, state.encode())) == golden_status
    (frame,) = Host(ShoeSimulator())._read([golden_status])
    assert ShoeState.decode(frame.payload) == state
    assert encode(LinkFrame(0x0102, ShoeType.CARD, card_payload(Card.parse("As")))) == golden_card


def test_hello_and_status_refuse_malformed_payloads():
    assert Hello.decode(bytes.fromhex("01 01 00 00 01 02")).cause is HelloCause.RESET
    for bad in (b"", bytes(5), bytes.fromhex("01 01 00 00 01 09"), bytes.fromhex("01 01 00 00 00 00")):
        with pytest.raises(ValueError):
            Hello.decode(bad)
    for bad in (bytes(5), bytes.fromhex("10 00 00 00 01 00"), bytes.fromhex("00 00 00 00 00 00")):
        with pytest.raises(ValueError):
            ShoeState.decode(bad)


def test_power_up_says_hello_then_reset_restarts_at_seq_1_and_reports_the_load(clock):
    sim = ShoeSimulator(CARDS, clock=clock)
    host = Host(sim)
    assert host.tick() == [encode_loaded(1, 8), hello(HelloCause.POWER_UP, 2)]
    assert host.reset() == [hello(HelloCause.RESET, 1), encode_loaded(1, 8)]
    assert [f.seq for f in sim.discarded] == [1]          # the first LOADED, never acknowledged
    assert host.ack(1) == [] and sim.unacknowledged == []


def encode_loaded(seq: int, count: int) -> LinkFrame:
    return LinkFrame(seq, ShoeType.LOADED, count.to_bytes(2, "big"))


def test_draws_become_numbered_cards_kept_until_acknowledged(host, sim, clock):
    assert sim.draw() == CARDS[0] and sim.burn() == CARDS[1]
    assert host.tick() == [LinkFrame(2, ShoeType.CARD, b"Qs"), LinkFrame(3, ShoeType.BURN, b"2d")]
    assert [f.seq for f in sim.unacknowledged] == [2, 3]
    clock.now += 0.2                                      # the retry timer: the oldest again
    assert host.tick() == [LinkFrame(2, ShoeType.CARD, b"Qs")]
    assert host.ack(3) == [] and sim.unacknowledged == []     # ACK is cumulative
    assert sim.dealt == [CARDS[0]] and sim.burned == [CARDS[1]]
    assert host.status() == ShoeState(left=6, next_seq=4)


def test_resend_from_re_sends_what_it_holds(host, sim):
    for _ in range(3):
        sim.draw()
    host.tick()
    sent = host.send(LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(3)))
    assert [(f.seq, f.payload) for f in sent] == [(3, b"2d"), (4, b"3h")]
    assert [f.seq for f in sim.unacknowledged] == [3, 4]


def test_a_full_window_refuses_the_card_which_stays_in_the_shoe(clock):
    sim = ShoeSimulator(CARDS, clock=clock, window=3)
    host = Host(sim)
    host.tick()
    host.reset()
    host.ack(1)
    assert sim.draw() and sim.draw() and sim.draw()
    assert sim.window_full and sim.draw() is None and sim.refused == 1
    assert sim.left == 5 and host.status().window_full
    assert sim.cut_card() is False and sim.open_door() is False
    host.ack(4)
    assert sim.draw() == CARDS[3]


def test_misread_empty_cut_card_and_door(host, sim):
    sim.misread_next(MisreadReason.TWO_CARDS)
    assert sim.draw() == CARDS[0] and sim.misread == [CARDS[0]] and sim.dealt == []
    assert sim.open_door() and sim.open_door()             # already open: reported once
    assert sim.close_door()
    sim.cut_card()
    while sim.draw() is not None:
        pass
    frames = host.tick()
    assert [(f.type, f.payload) for f in frames[:4]] == [
        (ShoeType.MISREAD, b"\x02"), (ShoeType.DOOR, b"\x01"), (ShoeType.DOOR, b"\x00"),
        (ShoeType.CUT_CARD, b"")]
    assert frames[-1].type == ShoeType.EMPTY and len(frames) == 4 + 7 + 1
    assert sim.dealt == CARDS[1:]
    state = host.status()
    assert state.empty and state.cut_card and state.left == 0 and not state.door_open


def test_the_cut_card_comes_out_at_its_position(clock):
    sim = ShoeSimulator(CARDS, clock=clock, cut_at=2)
    host = Host(sim)
    host.tick()
    host.reset()
    for _ in range(3):
        sim.draw()
    assert [f.type for f in host.tick()] == [ShoeType.CARD, ShoeType.CARD, ShoeType.CUT_CARD,
                                             ShoeType.CARD]
    with pytest.raises(ValueError):
        sim.load(CARDS, cut_at=9)


def test_a_shuffled_shoe_is_eight_decks_and_repeatable():
    a, b = ShoeSimulator(seed=7), ShoeSimulator(seed=7)
    assert a.left == 416 and a.peek(20) == b.peek(20) != ShoeSimulator(seed=8).peek(20)
    assert sorted(a.peek(416)) == sorted(Card(i % 52) for i in range(416))


def test_wire_faults_drop_repeat_lose_and_corrupt(host, sim):
    sim.drop_next()
    sim.draw()
    assert host.tick() == [] and [f.seq for f in sim.unacknowledged] == [2]
    sim.repeat()
    sim.draw()
    assert [f.seq for f in host.tick()] == [3, 3]
    sim.repeat(False)
    sim.lose_next_from_host()
    assert host.send(LinkFrame(0, LinkType.STATUS_REQUEST)) == []
    assert host.status().next_seq == 4
    sim.corrupt_next_crc()
    sim.draw()
    events = host.tick()
    assert events and isinstance(events[0], Garbage) and events[0].reason == "bad CRC"
    assert not any(isinstance(e, LinkFrame) for e in events)
    with pytest.raises(ValueError):
        sim.disturb(loss=1.0)


def test_frames_from_the_host_byte_by_byte_among_noise(host, sim):
    stream = b"\x00\xffnoise" + encode(LinkFrame(0, LinkType.STATUS_REQUEST)) + b"\x02\x01"
    out = []
    for i in range(len(stream)):
        out += host._read(sim.feed(stream[i:i + 1]))
    assert [f.type for f in out] == [LinkType.STATUS]
    assert sim.received[LinkType.STATUS_REQUEST] == 1


def test_expect_is_acknowledged_once_and_a_malformed_command_is_naked(host, sim):
    expect = LinkFrame(1, ShoeType.EXPECT, b"\x00\x06")
    assert host.send(expect) == [LinkFrame(0, LinkType.ACK, seq_bytes(1))]
    assert host.send(expect) == [LinkFrame(0, LinkType.ACK, seq_bytes(1))]     # a duplicate
    assert sim.expected_cards == 6
    assert host.send(LinkFrame(3, ShoeType.EXPECT, b"\x00\x09")) == [
        LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(2))]                       # a gap
    assert host.send(LinkFrame(2, ShoeType.CARD, b"As")) == [
        LinkFrame(0, LinkType.ACK, seq_bytes(2)), LinkFrame(0, LinkType.NAK, b"\x00\x02\x01")]
    assert sim.expected_cards == 6


def test_power_cycle_loses_the_frames_and_restarts_at_seq_1(host, sim):
    sim.draw()
    sim.draw()
    host.tick()
    sim.power_off()
    assert sim.draw() is None and host.tick() == [] and host.reset() == []
    sim.power_on()
    assert host.tick() == [hello(HelloCause.POWER_UP, 1)]
    assert [f.seq for f in sim.discarded] == [1, 2, 3]
    assert sim.left == 6 and sim.draw() == CARDS[2]       # the cards stayed in the shoe
    assert host.tick() == [LinkFrame(1, ShoeType.CARD, b"3h")]


def test_a_silent_line_comes_back_with_hello_reconnect(host, sim):
    sim.unplug(close_port=False)
    sim.draw()
    assert host.tick() == [] and host.send(LinkFrame(0, LinkType.STATUS_REQUEST)) == []
    sim.replug()
    assert host.tick() == [hello(HelloCause.RECONNECT, 3)]
    assert [(f.seq, f.payload) for f in host.send(
        LinkFrame(0, LinkType.RESEND_FROM, seq_bytes(2)))] == [(2, b"Qs")]


@given(st.binary(max_size=12))
def test_hello_and_status_payloads_decode_or_refuse_never_crash(payload):
    for parse in (Hello.decode, ShoeState.decode):
        with contextlib.suppress(ValueError):
            assert parse(payload).encode() == payload


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=12))
def test_fuzz_hello_and_status_payloads(payload):
    test_hello_and_status_payloads_decode_or_refuse_never_crash.hypothesis.inner_test(payload)
