"""The SAS line over time: link up and down in the ledger's history, the chirp, the queue kept."""

from __future__ import annotations

from drivers.sas.codec import GeneralPoll, LongPoll, encode_poll
from firmware.sas.exceptions import SETTING, ExceptionQueue
from firmware.sas.link import SasLink
from tests.sas.helpers import ADDRESS, machine_on


def link_events(ledger):
    return [(e["state"], e["address"]) for e in reversed(ledger.events(100)) if e["event"] == "sas_link"]


def test_the_first_poll_brings_the_link_up_and_five_quiet_seconds_take_it_down_each_in_history(ledger):
    link = SasLink(machine_on(ledger), ledger)
    assert link.tick(0.0) == bytes((ADDRESS,)) and not link.up           # down from the start: no event
    assert link_events(ledger) == []
    assert link.receive(encode_poll(GeneralPoll(ADDRESS)), 1.0) == b"\x00"
    assert link.up and link.status() == {"address": ADDRESS, "link": "up", "polls": 1, "exceptions_pending": 0}
    link.receive(encode_poll(LongPoll(ADDRESS, 0x1A)), 5.5)
    link.tick(10.4)
    assert link.up                                                        # 4.9 s since the last poll
    link.tick(10.5)
    assert not link.up and link.status()["link"] == "down"
    link.receive(encode_poll(GeneralPoll(ADDRESS)), 20.0)
    assert link_events(ledger) == [("up", ADDRESS), ("down", ADDRESS), ("up", ADDRESS)]


def test_polls_to_other_machines_do_not_keep_our_link_up(ledger):
    link = SasLink(machine_on(ledger), ledger)
    link.receive(encode_poll(GeneralPoll(ADDRESS)), 0.0)
    for second in range(1, 7):
        assert link.receive(encode_poll(GeneralPoll(9)) + encode_poll(LongPoll(9, 0x1A)), float(second)) == b""
    link.tick(6.0)
    assert not link.up


def test_the_machine_chirps_its_address_every_200_ms_while_the_link_is_down_and_never_while_up(ledger):
    link = SasLink(machine_on(ledger), ledger)
    heard = [t / 100 for t in range(0, 100, 5) if link.tick(t / 100)]
    assert heard == [0.0, 0.2, 0.4, 0.6, 0.8]
    link.receive(encode_poll(GeneralPoll(ADDRESS)), 1.0)
    assert not any(link.tick(1.0 + t / 100) for t in range(0, 490, 5))   # up: silent
    assert link.tick(6.0) == bytes((ADDRESS,))                           # down again: chirps at once
    assert link.chirps == 6


def test_the_queue_is_kept_after_enough_records_or_a_minute_while_no_host_takes_exceptions(ledger):
    link = SasLink(machine_on(ledger), ledger, save_after=10, save_interval=60.0)
    link.tick(0.0)
    for _ in range(3):
        ledger.event("door_open", door="main")
    link.tick(30.0)
    assert ledger.setting(SETTING) is None                              # 3 records, 30 s: not yet
    link.tick(60.0)
    saved = ledger.setting(SETTING)
    assert saved is not None and saved["fifo"] == [0x11, 0x11, 0x11]
    for _ in range(10):
        ledger.event("door_close", door="main")
    link.tick(61.0)                                                     # 10 records: at once
    assert ledger.setting(SETTING)["fifo"] == [0x11] * 3 + [0x12] * 10
    reopened = ExceptionQueue(ledger)
    assert reopened.pending() == link.machine.terminal.exceptions.pending()
    assert reopened.unsaved <= 1                                        # only the setting's own record


# --- resynchronising after a silence ---------------------------------------------------------------
def _meters_reply(wire: bytes) -> bool:
    return wire[:2] == bytes([ADDRESS, 0x1C]) and len(wire) == 2 + 32 + 2


def test_an_m_poll_that_never_finishes_is_dropped_after_a_silence_and_the_next_poll_answered(ledger):
    link = SasLink(machine_on(ledger), ledger)
    # noise that reads as the start of an M poll to us (0x72) announcing 255 data bytes: content
    # framing alone would swallow the next 258 bytes, the host's polls with them
    assert link.receive(bytes([ADDRESS, 0x72, 0xFF, 0x12, 0x34]), 10.0) == b""
    assert link.receive(encode_poll(LongPoll(ADDRESS, 0x1C)), 10.1) == b""      # still inside it
    assert link.resyncs == 0
    wire = link.receive(encode_poll(LongPoll(ADDRESS, 0x1C)), 10.7)              # after a silence
    assert _meters_reply(wire) and link.resyncs == 1


def test_a_poll_written_in_pieces_with_short_pauses_is_still_one_poll(ledger):
    link = SasLink(machine_on(ledger), ledger)
    poll = encode_poll(LongPoll(ADDRESS, 0x2F, bytes.fromhex("0000 0C")))      # an M poll, in three pieces
    assert link.receive(poll[:1], 20.0) == b""                                 # the address ...
    assert link.receive(poll[1:3], 20.3) == b""                                # ... the port reopened ...
    wire = link.receive(poll[3:], 20.6)                                        # ... the rest
    assert wire[:2] == bytes([ADDRESS, 0x2F]) and link.resyncs == 0
    assert _meters_reply(link.receive(encode_poll(LongPoll(ADDRESS, 0x1C)), 30.0))   # nothing left over
