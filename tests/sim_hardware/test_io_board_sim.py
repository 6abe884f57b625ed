"""The I/O board's message table pinned by golden frames in both roles, the link codec fed them
adversarially, a fuzz target for the decoder, and the simulated board driven sans-I/O (no pty) on
a fake clock: meter pulses acknowledged only when done, never doubled; snapshots; power cycle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import Garbage
from drivers.io_board.messages import (
    IO_KIND,
    IoMessage,
    IoState,
    IoType,
    Meter,
    TowerPattern,
    decode,
    input_payload,
    lamps_of,
    lamps_payload,
    meter_payload,
    snapshot_payload,
    states_of,
    tower_payload,
)
from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes
from drivers.link.hello import Hello, HelloCause
from hal.events import Button, Door, KeySwitch
from sim_hardware.io_board import IoBoardSimulator
from tests.drivers.streams import feed
from tests.sim_hardware.link_host import Host, kermit

G = bytes.fromhex
#: (frame, its message); from docs/protocols/io-board.md.
GOLDEN = [
    (G("02 05 00 01 40 00 01 78 28"), LinkFrame(1, IoType.INPUT, b"\x00\x01"),
     IoMessage(IoType.INPUT, input=Door.MAIN, state=True)),
    (G("02 05 00 02 41 00 03 7B 74"), LinkFrame(2, IoType.SNAPSHOT, b"\x00\x03"),
     IoMessage(IoType.SNAPSHOT, mask=3)),
    (G("02 05 00 01 50 00 03 FF 8E"), LinkFrame(1, IoType.TOWER, b"\x00\x03"),
     IoMessage(IoType.TOWER, tier=0, pattern=TowerPattern.FLASH_FAST)),
    (G("02 06 00 01 51 00 01 02 81 AB"), LinkFrame(1, IoType.METER_PULSE, b"\x00\x01\x02"),
     IoMessage(IoType.METER_PULSE, meter=Meter.COIN_IN, count=258)),
    (G("02 04 00 01 52 09 1C 02"), LinkFrame(1, IoType.BUTTON_LAMPS, b"\x09"),
     IoMessage(IoType.BUTTON_LAMPS, mask=9)),
]
HELLO = G("02 09 00 00 03 02 01 00 00 01 00 88 5C")
STATUS = G("02 0A 00 00 05 00 09 00 03 01 00 28 7A 75")


@pytest.mark.parametrize(("wire", "frame", "message"), GOLDEN)
def test_golden_frames_both_ways(wire, frame, message):
    assert kermit(wire[:-2]) == wire[-2] | wire[-1] << 8
    assert encode(frame) == wire
    codec = LinkCodec()
    codec.receive_data(wire)
    assert codec.events() == [frame]
    assert decode(frame.type, frame.payload) == message


def test_payload_builders_match_the_golden_frames():
    assert input_payload(Door.MAIN, True) == GOLDEN[0][1].payload
    assert snapshot_payload(3) == GOLDEN[1][1].payload
    assert tower_payload(0, TowerPattern.FLASH_FAST) == GOLDEN[2][1].payload
    assert meter_payload(Meter.COIN_IN, 258) == GOLDEN[3][1].payload
    assert lamps_payload({Button.DEAL, Button.CASH_OUT}) == GOLDEN[4][1].payload
    assert lamps_of(9) == {Button.DEAL, Button.CASH_OUT}
    assert encode(LinkFrame(0, LinkType.HELLO, Hello(IO_KIND, (1, 0), 1,
                                                     HelloCause.POWER_UP).encode())) == HELLO
    assert encode(LinkFrame(0, LinkType.STATUS, IoState(9, 3, 1, 40).encode())) == STATUS
    state = IoState.decode(STATUS[5:-2])
    assert state == IoState(9, 3, 1, 40)
    assert state.is_on(Door.MAIN) and state.is_on(KeySwitch.AUDIT) and not state.is_on(Door.LOGIC)
    assert states_of(9)[KeySwitch.AUDIT] and kermit(HELLO[:-2]) == HELLO[-2] | HELLO[-1] << 8


STREAM = b"".join(g[0] for g in GOLDEN)
FRAMES = [g[1] for g in GOLDEN]


def _decode_in(chunks) -> list:
    return feed(LinkCodec(), chunks)


def test_whole_split_byte_by_byte_and_with_garbage():
    assert _decode_in([STREAM]) == FRAMES
    assert _decode_in([STREAM[:7], STREAM[7:20], STREAM[20:]]) == FRAMES
    assert _decode_in([bytes((b,)) for b in STREAM]) == FRAMES
    events = _decode_in([b"\xff\x00\x13", STREAM, b"\x99\x98"])
    assert isinstance(events[0], Garbage) and [e for e in events if isinstance(e, LinkFrame)] == FRAMES


def test_a_bad_crc_is_reported_and_the_next_frame_still_read():
    bad = bytearray(STREAM)
    bad[len(GOLDEN[0][0]) - 1] ^= 0xFF
    events = _decode_in([bytes(bad)])
    assert isinstance(events[0], Garbage) and events[0].reason == "bad CRC"
    assert [e for e in events if isinstance(e, LinkFrame)] == FRAMES[1:]


@pytest.mark.parametrize(("type_", "payload", "error"), [
    (0x40, b"\x0b\x01", "bad input"), (0x40, b"\x00\x02", "bad input"), (0x40, b"\x00", "expected 2"),
    (0x41, b"\x08\x00", "unknown inputs"), (0x50, b"\x04\x00", "bad tier"),
    (0x50, b"\x00\x04", "pattern"), (0x51, b"\x00\x00\x00", "count 0"),
    (0x51, b"\x10\x00\x01", "bad meter"), (0x52, b"\x40", "unknown buttons"),
    (0x5F, b"", "unknown I/O board message type"),
])
def test_malformed_messages_are_refused_clearly(type_, payload, error):
    with pytest.raises(ValueError, match=error):
        decode(type_, payload)


def test_builders_refuse_what_cannot_be_sent():
    with pytest.raises(ValueError):
        meter_payload(0, 0)
    with pytest.raises(ValueError):
        meter_payload(16, 1)
    with pytest.raises(ValueError):
        tower_payload(4, TowerPattern.ON)
    with pytest.raises(ValueError):
        IoState.decode(b"\x00" * 6)


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.integers(0, 0xFF), st.binary(max_size=8), st.binary(max_size=64))
def test_fuzz_decoder_and_codec_never_crash(type_, payload, noise):
    try:
        message = decode(type_, payload)
    except ValueError:
        pass
    else:
        assert message.type == type_
    events = _decode_in([noise, STREAM[:9]])
    assert all(isinstance(e, LinkFrame | Garbage) for e in events)


# --- the simulator, sans-I/O --------------------------------------------------------------------
@pytest.fixture
def board(clock):
    sim = IoBoardSimulator(pulse_s=0.1, clock=clock)
    host = Host(sim)
    host.tick()                                   # the power-up HELLO and SNAPSHOT
    out = host.send(LinkFrame(0, LinkType.RESET))
    assert [f.type for f in out] == [LinkType.HELLO, IoType.SNAPSHOT]
    host.send(LinkFrame(0, LinkType.ACK, seq_bytes(1)))
    return sim, host


def test_reset_answers_hello_then_a_snapshot_of_the_inputs(clock):
    sim = IoBoardSimulator(clock=clock)
    sim.open_door(Door.CASH_BOX)
    host = Host(sim)
    assert [f.type for f in host.tick()][:2] == [LinkType.HELLO, IoType.SNAPSHOT]
    hello, snap = host.send(LinkFrame(0, LinkType.RESET))
    assert Hello.decode(hello.payload) == Hello(IO_KIND, (1, 0), 1, HelloCause.RESET)
    assert snap == LinkFrame(1, IoType.SNAPSHOT, b"\x00\x02")


def test_edges_are_reliable_input_frames(board):
    sim, host = board
    sim.open_door(Door.MAIN)
    sim.turn_key(KeySwitch.AUDIT)
    sim.press(Button.DEAL)
    frames = host.tick()
    assert [(f.seq, decode(f.type, f.payload).input, decode(f.type, f.payload).state)
            for f in frames] == [(2, Door.MAIN, True), (3, KeySwitch.AUDIT, True),
                                 (4, Button.DEAL, True), (5, Button.DEAL, False)]
    assert sim.open_door(Door.MAIN) and host.tick() == []       # no edge, no frame


def test_a_meter_command_is_acknowledged_only_after_its_pulses_and_never_doubled(board, clock):
    sim, host = board
    meter = LinkFrame(1, IoType.METER_PULSE, meter_payload(Meter.DROP, 3))
    assert host.send(meter) == []                                # pulse 1 now, no ACK yet
    assert sim.meters[Meter.DROP] == 1 and sim.pulses_left == 2
    tower = LinkFrame(2, IoType.TOWER, tower_payload(1, TowerPattern.ON))
    assert host.send(tower) == [] and sim.tower == {}           # busy: not taken, not acked
    assert host.send(meter) == []                                # a re-send while pulsing
    clock.now = 0.2
    assert host.tick() == [LinkFrame(0, LinkType.ACK, seq_bytes(1))]
    assert sim.meters[Meter.DROP] == 3
    assert host.send(meter) == [LinkFrame(0, LinkType.ACK, seq_bytes(1))]   # duplicate: re-ack
    assert sim.meters[Meter.DROP] == 3
    assert host.send(tower) == [LinkFrame(0, LinkType.ACK, seq_bytes(2))]
    assert sim.tower == {1: TowerPattern.ON}


def test_a_power_cycle_resumes_the_pulse_job_and_sends_a_snapshot(board, clock):
    sim, host = board
    host.send(LinkFrame(1, IoType.METER_PULSE, meter_payload(Meter.COIN_IN, 4)))
    sim.open_door(Door.LOGIC)
    sim.power_off()
    clock.now = 1.0
    assert host.tick() == [] and sim.meters[Meter.COIN_IN] == 1   # no pulse without power
    sim.power_on()
    hello, snap = host.tick()
    assert Hello.decode(hello.payload).cause is HelloCause.POWER_UP
    assert snap == LinkFrame(1, IoType.SNAPSHOT, snapshot_payload(0b100))
    host.send(LinkFrame(0, LinkType.ACK, seq_bytes(1)))
    clock.now = 1.3
    assert host.tick() == [LinkFrame(0, LinkType.ACK, seq_bytes(1))]
    assert sim.meters[Meter.COIN_IN] == 4


def test_a_full_window_coalesces_edges_into_one_snapshot(clock):
    sim = IoBoardSimulator(window=2, clock=clock)
    host = Host(sim)
    host.send(LinkFrame(0, LinkType.RESET))                      # SNAPSHOT 1 pending
    sim.open_door(Door.MAIN)                                      # INPUT 2: window full
    sim.open_door(Door.CASH_BOX)
    sim.turn_key(KeySwitch.JACKPOT_RESET)
    assert host.tick() == [LinkFrame(2, IoType.INPUT, input_payload(Door.MAIN, True))]
    host.send(LinkFrame(0, LinkType.ACK, seq_bytes(2)))
    assert host.tick() == [LinkFrame(3, IoType.SNAPSHOT, snapshot_payload(0b10011))]


def test_status_lamps_and_a_malformed_command_is_naked(board):
    sim, host = board
    host.send(LinkFrame(1, IoType.BUTTON_LAMPS, lamps_payload({Button.BET})))
    assert sim.lamps == {Button.BET}
    out = host.send(LinkFrame(2, IoType.METER_PULSE, b"\x00\x00\x00"))
    assert out == [LinkFrame(0, LinkType.ACK, seq_bytes(2)),
                   LinkFrame(0, LinkType.NAK, seq_bytes(2) + b"\x01")]
    (status,) = host.send(LinkFrame(0, LinkType.STATUS_REQUEST))
    assert IoState.decode(status.payload) == IoState(0, 2, 0, 0)
