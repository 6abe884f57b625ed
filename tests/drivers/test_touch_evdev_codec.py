"""The evdev decoder: golden records, any split of the stream, multitouch slots, single touch."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.codec import NEED_DATA
from drivers.touch.evdev_codec import (
    ABS_MT_POSITION_X,
    ABS_MT_POSITION_Y,
    ABS_MT_SLOT,
    ABS_MT_TRACKING_ID,
    ABS_X,
    ABS_Y,
    BTN_TOUCH,
    EV_ABS,
    EV_KEY,
    EV_MSC,
    EV_SYN,
    RECORD,
    SYN_DROPPED,
    SYN_REPORT,
    Contact,
    InputEvent,
    Phase,
    RecordDecoder,
    TouchDecoder,
    TouchEncoder,
)


def rec(type_: int, code: int, value: int, sec: int = 0, usec: int = 0) -> bytes:
    """A record packed independently of the codec (64-bit little-endian Linux layout)."""
    return struct.pack("<qqHHi", sec, usec, type_, code, value)


def syn() -> bytes:
    return rec(EV_SYN, SYN_REPORT, 0)


#: One finger down at raw (1000, 2000) in slot 0, as a type-B device sends it.
TAP_DOWN = (rec(EV_ABS, ABS_MT_TRACKING_ID, 7) + rec(EV_ABS, ABS_MT_POSITION_X, 1000)
            + rec(EV_ABS, ABS_MT_POSITION_Y, 2000) + rec(EV_KEY, BTN_TOUCH, 1) + syn())
TAP_UP = rec(EV_ABS, ABS_MT_TRACKING_ID, -1) + rec(EV_KEY, BTN_TOUCH, 0) + syn()


def decode(data: bytes, chunk: int | None = None) -> list[Contact]:
    dec = TouchDecoder()
    out: list[Contact] = []
    step = chunk or max(len(data), 1)
    for i in range(0, len(data), step):
        dec.receive_data(data[i:i + step])
        out += dec.events()
    assert dec.buffered == 0
    return out


def test_the_record_layout_is_24_bytes_native_and_golden():
    assert RECORD.size == 24
    golden = bytes.fromhex("0100000000000000" "0200000000000000" "0300" "3500" "e8030000")
    assert InputEvent(EV_ABS, ABS_MT_POSITION_X, 1000, 1, 2).encode() == golden
    dec = RecordDecoder()
    dec.receive_data(golden)
    assert dec.next_event() == InputEvent(EV_ABS, ABS_MT_POSITION_X, 1000, 1, 2)
    negative = bytes.fromhex("00" * 16 + "0300" "3900" "ffffffff")
    assert InputEvent(EV_ABS, ABS_MT_TRACKING_ID, -1).encode() == negative


def test_a_tap_whole_split_and_byte_by_byte():
    expected = [Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 1000, 2000, Phase.UP)]
    for chunk in (None, 1, 5, 23, 24, 25, 47):
        assert decode(TAP_DOWN + TAP_UP, chunk) == expected, chunk


def test_nothing_is_reported_before_syn_report():
    dec = TouchDecoder()
    dec.receive_data(TAP_DOWN[:-24])
    assert dec.next_event() is NEED_DATA
    dec.receive_data(TAP_DOWN[-24:])
    assert dec.events() == [Contact(0, 1000, 2000, Phase.DOWN)]


def test_a_partial_record_waits_for_the_rest():
    dec = TouchDecoder()
    dec.receive_data(TAP_DOWN + syn()[:23])
    assert dec.events() == [Contact(0, 1000, 2000, Phase.DOWN)]
    assert dec.buffered == 23
    dec.receive_data(syn()[23:] + TAP_UP)
    assert dec.events() == [Contact(0, 1000, 2000, Phase.UP)]
    assert dec.buffered == 0


def test_records_the_decoder_does_not_use_are_ignored():
    noise = (rec(EV_MSC, 5, 123456) + rec(EV_KEY, 0x110, 1) + rec(EV_ABS, 0x30, 9)
             + rec(0x1F, 0xFFFF, -5) + rec(EV_SYN, 2, 0))
    assert decode(noise + TAP_DOWN + noise + TAP_UP + noise) == [
        Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 1000, 2000, Phase.UP)]


def test_misaligned_garbage_shifts_every_later_record_and_never_crashes():
    # The documented limit: no sync, no checksum. Three stray bytes misalign the stream for good;
    # the decoder must survive it (no exception, bounded buffer), not recover from it.
    dec = TouchDecoder()
    dec.receive_data(b"\x01\x02\x03" + TAP_DOWN + TAP_UP)
    contacts = dec.events()
    assert Contact(0, 1000, 2000, Phase.DOWN) not in contacts
    assert dec.buffered == 3


def test_two_fingers_in_slots_move_and_lift_independently():
    data = (rec(EV_ABS, ABS_MT_TRACKING_ID, 1) + rec(EV_ABS, ABS_MT_POSITION_X, 100)
            + rec(EV_ABS, ABS_MT_POSITION_Y, 200)
            + rec(EV_ABS, ABS_MT_SLOT, 1) + rec(EV_ABS, ABS_MT_TRACKING_ID, 2)
            + rec(EV_ABS, ABS_MT_POSITION_X, 300) + rec(EV_ABS, ABS_MT_POSITION_Y, 400) + syn()
            # slot 1 is still selected: only its X changes
            + rec(EV_ABS, ABS_MT_POSITION_X, 310) + syn()
            + rec(EV_ABS, ABS_MT_SLOT, 0) + rec(EV_ABS, ABS_MT_TRACKING_ID, -1) + syn()
            + rec(EV_ABS, ABS_MT_SLOT, 1) + rec(EV_ABS, ABS_MT_POSITION_Y, 410) + syn()
            + rec(EV_ABS, ABS_MT_TRACKING_ID, -1) + syn())
    assert decode(data, 7) == [
        Contact(0, 100, 200, Phase.DOWN), Contact(1, 300, 400, Phase.DOWN),
        Contact(1, 310, 400, Phase.MOVE),
        Contact(0, 100, 200, Phase.UP),
        Contact(1, 310, 410, Phase.MOVE),
        Contact(1, 310, 410, Phase.UP),
    ]


def test_a_new_tracking_id_in_a_busy_slot_is_an_up_then_a_down():
    data = (TAP_DOWN + rec(EV_ABS, ABS_MT_TRACKING_ID, 8) + rec(EV_ABS, ABS_MT_POSITION_X, 50)
            + syn())
    assert decode(data) == [Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 1000, 2000, Phase.UP),
                            Contact(0, 50, 2000, Phase.DOWN)]


def test_an_out_of_range_slot_is_counted_and_ignored():
    dec = TouchDecoder(max_slots=2)
    dec.receive_data(rec(EV_ABS, ABS_MT_SLOT, 5) + rec(EV_ABS, ABS_MT_TRACKING_ID, 1)
                     + rec(EV_ABS, ABS_MT_POSITION_X, 1) + syn()
                     + rec(EV_ABS, ABS_MT_SLOT, 0) + TAP_DOWN)
    assert dec.events() == [Contact(0, 1000, 2000, Phase.DOWN)]
    assert dec.counters["bad_slot"] == 2


def test_syn_dropped_discards_up_to_the_next_report():
    data = (TAP_DOWN + rec(EV_SYN, SYN_DROPPED, 0) + rec(EV_ABS, ABS_MT_POSITION_X, 5) + syn()
            + rec(EV_ABS, ABS_MT_POSITION_Y, 6) + syn())
    dec = TouchDecoder()
    dec.receive_data(data)
    assert dec.events() == [Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 1000, 6, Phase.MOVE)]
    assert dec.counters["dropped"] == 1


def test_single_touch_devices_report_slot_0_and_pointer_emulation_is_ignored_with_mt():
    single = (rec(EV_ABS, ABS_X, 10) + rec(EV_ABS, ABS_Y, 20) + rec(EV_KEY, BTN_TOUCH, 1) + syn()
              + rec(EV_ABS, ABS_X, 11) + syn() + rec(EV_KEY, BTN_TOUCH, 0) + syn()
              + rec(EV_ABS, ABS_X, 99) + syn())                 # hovering: not a touch
    assert decode(single, 3) == [Contact(0, 10, 20, Phase.DOWN), Contact(0, 11, 20, Phase.MOVE),
                                 Contact(0, 11, 20, Phase.UP)]
    emulated = rec(EV_ABS, ABS_X, 1) + rec(EV_ABS, ABS_Y, 2)
    assert decode(TAP_DOWN + emulated + syn() + TAP_UP) == [
        Contact(0, 1000, 2000, Phase.DOWN), Contact(0, 1000, 2000, Phase.UP)]


def test_the_encoder_speaks_what_the_decoder_reads_in_both_protocols():
    for single in (False, True):
        enc = TouchEncoder(single_touch=single)
        data = (enc.frame([(0, Phase.DOWN, 5, 6)]) + enc.frame([(0, Phase.MOVE, 7, 6)])
                + enc.frame([(0, Phase.UP, 0, 0)]))
        assert decode(data) == [Contact(0, 5, 6, Phase.DOWN), Contact(0, 7, 6, Phase.MOVE),
                                Contact(0, 7, 6, Phase.UP)]
    enc = TouchEncoder()
    assert enc.frame([(0, Phase.DOWN, 1000, 2000)]) == (
        rec(EV_ABS, ABS_MT_TRACKING_ID, 0) + rec(EV_ABS, ABS_MT_POSITION_X, 1000)
        + rec(EV_ABS, ABS_MT_POSITION_Y, 2000) + rec(EV_KEY, BTN_TOUCH, 1) + syn())
    with pytest.raises(ValueError, match="not touching"):
        enc.frame([(3, Phase.MOVE, 1, 1)])
    with pytest.raises(ValueError, match="already touching"):
        enc.frame([(0, Phase.DOWN, 1, 1)])
    with pytest.raises(ValueError, match="slot 0 only"):
        TouchEncoder(single_touch=True).frame([(1, Phase.DOWN, 1, 1)])


_changes = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 40000), st.integers(0, 40000)),
                    max_size=30)


def _script(steps):
    """Random touch activity on 4 slots, the contacts it must produce, and the records."""
    enc, active, expected, data = TouchEncoder(), {}, [], b""
    for slot, x, y in steps:
        if slot in active and x % 3 == 0:
            expected.append(Contact(slot, *active.pop(slot), Phase.UP))
            data += enc.frame([(slot, Phase.UP, 0, 0)])
            continue
        phase = Phase.MOVE if slot in active else Phase.DOWN
        if active.get(slot) == (x, y):
            continue
        active[slot] = (x, y)
        expected.append(Contact(slot, x, y, phase))
        data += enc.frame([(slot, phase, x, y)])
    return expected, data


@settings(max_examples=200, deadline=None)
@given(_changes, st.integers(1, 60))
def test_any_activity_round_trips_through_any_split(steps, chunk):
    expected, data = _script(steps)
    assert decode(data, chunk) == expected


@pytest.mark.fuzz
@settings(max_examples=20_000, deadline=None)
@given(st.binary(max_size=400), st.integers(1, 50))
def test_fuzz_any_bytes_never_crash_and_the_buffer_stays_bounded(data, chunk):
    dec = TouchDecoder(max_slots=4)
    for i in range(0, len(data), chunk):
        dec.receive_data(data[i:i + chunk])
        for contact in dec.events():
            assert 0 <= contact.slot < 4
        assert dec.buffered < RECORD.size
