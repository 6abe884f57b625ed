"""The exception queue in critical memory, read by general polls with implied ACK and retry."""

from __future__ import annotations

from drivers.sas.codec import LongPoll
from drivers.sas.exceptions import ExceptionCode as X
from firmware.ledger.ledger import Ledger
from firmware.sas.exceptions import QUEUE_SIZE
from tests.sas.helpers import ADDRESS, ask, general, machine_on


def test_an_exception_survives_a_power_cut_and_is_delivered_until_the_host_takes_it(tmp_path):
    state = tmp_path / "state"
    with Ledger.open(state, denomination=5) as ledger:
        ledger.event("door_open", door="main")
        assert machine_on(ledger).terminal.exceptions.pending() == [X.SLOT_DOOR_OPENED]
    # power cut: nothing but critical memory is left
    with Ledger.open(state, denomination=5) as ledger:
        machine = machine_on(ledger)
        assert general(machine) == X.SLOT_DOOR_OPENED
        assert general(machine) == X.SLOT_DOOR_OPENED        # the same poll again: a retry, resent
        assert ask(machine, LongPoll(ADDRESS, 0x1A)) is not None   # another poll: implied ACK
        assert general(machine) == X.NO_ACTIVITY
    with Ledger.open(state, denomination=5) as ledger:       # the take is in critical memory too
        assert general(machine_on(ledger)) == X.NO_ACTIVITY


def test_a_poll_to_another_machine_acknowledges_and_a_broadcast_gets_no_reply(ledger):
    ledger.event("door_open", door="logic")
    ledger.event("door_close", door="logic")
    machine = machine_on(ledger)
    assert general(machine) == X.CARD_CAGE_OPENED
    assert machine.receive(bytes([0x80 | 2])) == b""          # general poll to machine 2
    assert general(machine) == X.CARD_CAGE_CLOSED
    assert machine.receive(bytes([0x00, 0x1A])) == b""         # broadcast: implied ACK, no reply
    assert general(machine) == X.NO_ACTIVITY


def test_events_after_the_machine_started_are_queued_in_order(ledger):
    machine = machine_on(ledger)
    ledger.event("power_up")
    ledger.bill_in(2000)
    seen = []
    for _ in range(3):
        seen.append(general(machine))
        machine.receive(bytes([0x80 | 2]))                    # the host polls the next machine
    assert seen == [X.AC_POWER_APPLIED, X.BILL_20_ACCEPTED, X.NO_ACTIVITY]


def test_priority_exceptions_go_first(ledger):
    ledger.event("door_open", door="main")
    ledger.ticket_in(500, "000000000000000001")
    ledger.ticket_out(500, "000000000000000002")
    queue = machine_on(ledger).terminal.exceptions
    assert queue.pending() == [X.TICKET_TRANSFER_COMPLETE, X.CASHOUT_TICKET_PRINTED, X.SLOT_DOOR_OPENED]


def test_a_full_queue_raises_buffer_overflow_and_keeps_what_it_holds(tmp_path):
    state = tmp_path / "state"
    with Ledger.open(state, denomination=5) as ledger:
        machine = machine_on(ledger)
        for i in range(QUEUE_SIZE + 3):
            ledger.event("door_open" if i % 2 == 0 else "door_close", door="main")
        queue = machine.terminal.exceptions
        assert len(queue) == QUEUE_SIZE + 1
        assert general(machine) == X.EXCEPTION_BUFFER_OVERFLOW
        machine.receive(bytes([0x80 | 2]))
        assert general(machine) == X.SLOT_DOOR_OPENED         # the oldest, kept
    with Ledger.open(state, denomination=5) as ledger:
        assert machine_on(ledger).terminal.exceptions.pending() == [
            X.SLOT_DOOR_CLOSED if i % 2 else X.SLOT_DOOR_OPENED for i in range(QUEUE_SIZE)]
