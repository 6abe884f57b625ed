"""The SSP sequence flag as ITL's SSP manual states it (SYNC, 0x11): "A SYNC command resets the seq
bit of the packet so that the slave device expects the next seq bit to be 0. The host then sets its
next seq bit to 0." Golden byte exchanges, the SYNC with either flag, then several commands and a
repeat after a lost reply (``ssp_frames.py``): the device codec's view of each packet, then the
simulator's replies. Every golden frame's CRC is checked here by an independent routine.
"""

from __future__ import annotations

import pytest

from drivers.codec import Role
from drivers.ssp.codec import Command, Packet, SspCodec
from sim_hardware.ssp_validator import SspSimulator
from tests.drivers.ssp_frames import (
    BEFORE,
    EXCHANGES,
    OK_CLEAR,
    OK_SET,
    POLL_CLEAR,
    SERIAL_CLEAR,
    SERIAL_REPLY,
    SETUP_SET,
    SYNC_CLEAR,
    SYNC_SET,
    crc_8005,
)


def _frame(text: str) -> bytes:
    return bytes.fromhex(text)


def test_every_golden_frame_has_a_good_crc():
    frames = {f for steps in EXCHANGES.values() for step in steps for f in step[:2]}
    frames |= {f for steps in BEFORE.values() for f in steps}
    for text in frames:
        frame = _frame(text)
        assert frame[2] == len(frame) - 5 and 0x7F not in frame[1:]
        assert crc_8005(frame[1:-2]) == frame[-2] | frame[-1] << 8, text


@pytest.mark.parametrize("before", BEFORE.values(), ids=BEFORE.keys())
@pytest.mark.parametrize("steps", EXCHANGES.values(), ids=EXCHANGES.keys())
def test_the_device_codec_takes_the_command_after_sync_with_the_flag_clear_as_new(steps, before):
    device = SspCodec(Role.DEVICE)
    for text in before:
        device.receive_data(_frame(text))
        assert device.next_event().repeated is False
        device.reply(b"\xf0")
    for host, reply, repeated in steps:
        frame = _frame(host)
        device.receive_data(frame)
        packet = device.next_event()
        assert packet == Packet(0, bool(frame[1] & 0x80), frame[3:-2], repeated), host
        if not repeated:
            assert device.reply(_frame(reply)[3:-2]) == _frame(reply)
        else:
            assert device.last_reply == _frame(reply)


@pytest.mark.parametrize("before", BEFORE.values(), ids=BEFORE.keys())
@pytest.mark.parametrize("steps", EXCHANGES.values(), ids=EXCHANGES.keys())
def test_the_simulator_answers_each_command_after_sync_rightly(steps, before):
    sim = SspSimulator()
    for text in before:
        assert len(sim.feed(_frame(text))) == 1
    polls = sim.received[Command.POLL]
    for host, reply, _ in steps:
        assert sim.feed(_frame(host)) == [_frame(reply)], host
    assert sim.received[Command.GET_SERIAL_NUMBER] == 1 and sim.received[Command.SYNC] == 1
    assert sim.received[Command.POLL] == polls + 2 and sim.resent == 1


@pytest.mark.parametrize(("sync", "ok"), [(SYNC_SET, OK_SET), (SYNC_CLEAR, OK_CLEAR)])
def test_a_repeated_sync_is_acted_on_and_a_set_flag_after_sync_repeats_its_reply(sync, ok):
    """The host lost the SYNC's reply and sends it again: answered anew. A command with the flag
    set right after SYNC carries the flag of a repeat (the device expects it clear): the SYNC's
    reply again, the command not acted on (this product's reading of the manual's two rules)."""
    sim = SspSimulator()
    sim.drop_next_reply()
    assert sim.feed(_frame(sync)) == []
    assert sim.feed(_frame(sync)) == [_frame(ok)]
    assert sim.feed(_frame(SETUP_SET)) == [_frame(ok)]
    assert sim.received[Command.SETUP_REQUEST] == 0 and sim.resent == 1
    assert sim.feed(_frame(SERIAL_CLEAR)) == [_frame(SERIAL_REPLY)]


def test_the_host_sends_sync_with_the_flag_set_and_the_next_command_clear():
    for earlier in ([], [b"\x07"], [b"\x07", b"\x07"], [b"\x07"] * 3):
        host = SspCodec(Role.HOST)
        for data in earlier:
            host.command(data)
        sync = host.command(bytes((Command.SYNC,)))
        assert sync == _frame(SYNC_SET) and host.expected_seq is True
        assert host.repeat(bytes((Command.SYNC,))) == sync       # its reply lost: same bytes
        assert host.command(bytes((Command.GET_SERIAL_NUMBER,))) == _frame(SERIAL_CLEAR)
        assert host.repeat(bytes((Command.GET_SERIAL_NUMBER,))) == _frame(SERIAL_CLEAR)
        assert host.command(bytes((Command.SETUP_REQUEST,))) == _frame(SETUP_SET)
        assert host.command(bytes((Command.POLL,))) == _frame(POLL_CLEAR)
