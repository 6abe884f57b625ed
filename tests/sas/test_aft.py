"""AFT over a real ledger: 0x72 transfers in and out exactly once, their interrogation and history,
the 0x74 lock, hostile requests refused without change, and AFT off."""

from __future__ import annotations

import pytest

from drivers.sas.aft import TransferFlag
from drivers.sas.codec import LongPoll, encode_poll
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host_aft import aft_lock, aft_transfer, ask
from drivers.sas.messages import AftInterrogate, AftShortReply, AftTransfer, AftTransferReply
from firmware.ledger.ledger import accounting_difference
from tests.sas.aft_helpers import ASSET, LIMIT, Cabinet, Clock, aft_machine, exchange_with
from tests.sas.helpers import ADDRESS, general

KEY = bytes(20)


def request(tid: str, cents: int, *, out: bool = False, code: int = 0, flags: int = 0, asset: int = ASSET,
            restricted: int = 0, lock_timeout: int = 0) -> bytes:
    return AftTransfer(code, 0, 0x80 if out else 0x00, cents, restricted, 0, flags, asset, KEY, tid, 0, 0,
                       b"\x00\x02OK", lock_timeout).encode()


def send(machine, data: bytes):
    return ask(exchange_with(machine), LongPoll(ADDRESS, 0x72, data))


def interrogate(machine, index: int = 0, code: int = 0xFF):
    return send(machine, AftInterrogate(code, index).encode())


def test_a_transfer_in_credits_once_records_and_raises_0x69(ledger):
    cabinet = Cabinet()
    machine, _ = aft_machine(ledger, cabinet)
    reply = send(machine, request("IN-1", 2500))
    assert isinstance(reply, AftTransferReply)
    assert (reply.transfer_status, reply.buffer_position, reply.cashable, reply.transaction_id) == (0x00, 1, 2500, "IN-1")
    assert reply.cumulative_cashable == 2500 and (reply.date, reply.time) == (11272026, 210509)
    assert ledger.credits_cents == 2500 and ledger.meters["transfers_in"] == 2500
    [record] = ledger.records_for("IN-1")
    assert record["kind"] == "transfer_in" and record["body"]["receipt_data"] == "00024f4b"
    assert cabinet.shown == [("in", 2500)]
    assert general(machine) == X.AFT_TRANSFER_COMPLETE
    assert accounting_difference(ledger.meters) == 0


def test_a_transfer_out_to_the_host_takes_the_credits_once(ledger):
    ledger.bill_in(2000)
    machine, _ = aft_machine(ledger)
    reply = send(machine, request("OUT-1", 1500, out=True))
    assert (reply.transfer_status, reply.transfer_type, reply.cumulative_cashable) == (0x00, 0x80, 1500)
    assert ledger.credits_cents == 500 and ledger.meters["transfers_out"] == 1500
    assert accounting_difference(ledger.meters) == 0


def test_the_same_request_again_is_answered_and_never_applied_twice(ledger):
    machine, _ = aft_machine(ledger)
    first = send(machine, request("IN-1", 2500))
    again = send(machine, request("IN-1", 2500))
    assert again == first and ledger.credits_cents == 2500
    other = send(machine, request("IN-1", 5000))                 # same ID, another transfer
    assert other.transfer_status == 0x81 and ledger.credits_cents == 2500


def test_partial_transfers_take_what_is_possible(ledger):
    ledger.bill_in(1000)
    cabinet = Cabinet(room=3000)
    machine, _ = aft_machine(ledger, cabinet)
    assert send(machine, request("IN-1", 5000)).transfer_status == 0x84        # full only: refused
    partial = send(machine, request("IN-2", 5000, code=0x01))
    assert (partial.transfer_status, partial.cashable) == (0x01, 3000)
    out = send(machine, request("OUT-1", 9000, out=True, code=0x01))
    assert (out.transfer_status, out.cashable) == (0x01, 4000)
    assert ledger.credits_cents == 0 and accounting_difference(ledger.meters) == 0


@pytest.mark.parametrize(("data", "status"), [
    (request("X", 2500, asset=99), 0x93),                      # another machine's asset number
    (request("X", 2501), 0x85),                                # not a whole number of 5-cent credits
    (request("X", 0), 0x83),                                   # nothing to transfer
    (request("X", LIMIT + 5), 0x84),                           # over the transfer limit
    (request("X", 2500, restricted=100), 0x82),                # restricted: not supported
    (request("X", 2500, flags=TransferFlag.ONLY_IF_LOCKED), 0x94),
    (request("X", 2500, out=True), 0x84),                      # more than the credit meter holds
    (request("X", 2500)[:3] + b"\x00\x00\x0A\x00\x00" + request("X", 2500)[8:], 0x83),   # bad BCD
    (request("X", 2500)[:43] + b"\x15" + b"X" * 21 + request("X", 2500)[45:], 0x95),    # ID too long
])
def test_hostile_or_impossible_requests_are_refused_and_change_nothing(ledger, data, status):
    machine, _ = aft_machine(ledger)
    before = (dict(ledger.meters), ledger.rows)
    reply = send(machine, data)
    assert reply.transfer_status == status and reply.buffer_position == 0
    assert (dict(ledger.meters), ledger.rows) == before
    assert interrogate(machine) == reply                      # the host learns the refusal


def test_an_unsupported_transfer_code_gets_the_short_reply(ledger):
    machine, _ = aft_machine(ledger)
    assert send(machine, request("X", 2500, code=0x02)) == AftShortReply(0, 0xC1)
    assert ledger.credits_cents == 0


def test_no_transfer_while_the_cabinet_cannot(ledger):
    machine, _ = aft_machine(ledger, Cabinet(refuse={"in": "a game is in progress"}))
    assert send(machine, request("IN-1", 2500)).transfer_status == 0x87
    assert ledger.credits_cents == 0


def test_interrogation_and_the_history_by_index(ledger):
    machine, polls = aft_machine(ledger)
    polls.history.size = 3                                     # a small buffer: positions 1, 2, 3, 1, ...
    assert interrogate(machine) == AftShortReply(0, 0xFF, 0xFF)
    for n in range(1, 6):
        send(machine, request(f"T{n}", 100 * n))
    assert interrogate(machine).transaction_id == "T5"
    assert interrogate(machine, code=0xFE).transaction_id == "T5"
    assert [interrogate(machine, i).transaction_id for i in (1, 2, 3)] == ["T4", "T5", "T3"]
    assert [interrogate(machine, i).transaction_id for i in (0xFF, 0xFE, 0xFD)] == ["T5", "T4", "T3"]
    assert interrogate(machine, 0xFC) == AftShortReply(0xFC, 0xFF, 0xFF)
    assert interrogate(machine, 2).buffer_position == 2
    assert send(machine, request("T1", 100)).transfer_status == 0x00 and ledger.credits_cents == 1600  # T1 left the buffer


def test_a_cancel_reports_the_current_status(ledger):
    machine, _ = aft_machine(ledger)
    done = send(machine, request("IN-1", 2500))
    assert send(machine, b"\x80") == done and ledger.credits_cents == 2500


# --- 0x74 -------------------------------------------------------------------------------------
def test_the_lock_is_given_when_idle_refused_in_a_game_and_times_out(ledger):
    ledger.bill_in(500)
    clock, cabinet = Clock(), Cabinet()
    machine, _ = aft_machine(ledger, cabinet, clock=clock)
    exchange = exchange_with(machine)
    status = aft_lock(exchange, ADDRESS, lock_code=0x00, condition=0x03, timeout_hundredths=1000)
    assert (status.game_lock_status, status.available_transfers, status.cashable) == (0x00, 0x03, 500)
    assert (status.asset_number, status.max_buffer_index, status.transfer_limit) == (ASSET, 0x7F, LIMIT)
    assert cabinet.held_until == 110.0
    clock.now = 110.0
    assert aft_lock(exchange, ADDRESS, lock_code=0xFF).game_lock_status == 0xFF
    assert cabinet.held_until is None
    cabinet.refuse["lock"] = "a game is in progress"
    assert aft_lock(exchange, ADDRESS, lock_code=0x00, condition=0x01, timeout_hundredths=500).game_lock_status == 0xFF


def test_a_lock_asking_for_a_transfer_not_available_is_refused_and_cancel_releases(ledger):
    cabinet = Cabinet()
    machine, _ = aft_machine(ledger, cabinet)
    exchange = exchange_with(machine)
    # nothing on the credit meter: no transfer from the machine, so no lock for one
    assert aft_lock(exchange, ADDRESS, lock_code=0x00, condition=0x02, timeout_hundredths=500).game_lock_status == 0xFF
    assert aft_lock(exchange, ADDRESS, lock_code=0x00, condition=0x01, timeout_hundredths=500).game_lock_status == 0x00
    assert aft_lock(exchange, ADDRESS, lock_code=0x80).game_lock_status == 0xFF and cabinet.held_until is None


def test_a_transfer_only_if_locked_and_the_lock_released_after_it(ledger):
    cabinet = Cabinet()
    machine, polls = aft_machine(ledger, cabinet)
    aft_lock(exchange_with(machine), ADDRESS, lock_code=0x00, condition=0x01, timeout_hundredths=1000)
    reply = send(machine, request("IN-1", 2500, flags=TransferFlag.ONLY_IF_LOCKED))
    assert reply.transfer_status == 0x00 and not polls.lock.locked and cabinet.held_until is None
    send(machine, request("IN-2", 500, flags=TransferFlag.LOCK_AFTER_TRANSFER, lock_timeout=300))
    assert polls.lock.locked and cabinet.held_until == 103.0


@pytest.mark.parametrize("data", [b"\x00\x01\x0A\x00", b"\x01\x01\x10\x00"])   # timeout not BCD, unknown code
def test_a_lock_request_the_machine_cannot_read_is_nacked_and_changes_nothing(ledger, data):
    cabinet = Cabinet()
    machine, polls = aft_machine(ledger, cabinet)
    assert machine.receive(encode_poll(LongPoll(ADDRESS, 0x74, data))) == bytes([ADDRESS | 0x80])
    assert not polls.lock.locked and cabinet.held_until is None


# --- AFT off ------------------------------------------------------------------------------------
def test_with_aft_off_neither_poll_is_answered(ledger):
    machine, _ = aft_machine(ledger, enabled=False)
    assert 0x72 not in machine.commands and 0x74 not in machine.commands
    assert machine.receive(encode_poll(LongPoll(ADDRESS, 0x72, request("IN-1", 2500)))) == b""
    assert machine.receive(encode_poll(LongPoll(ADDRESS, 0x74, b"\xff\x00\x00\x00"))) == b""
    assert ledger.credits_cents == 0


def test_the_host_function_makes_one_transfer(ledger):
    machine, _ = aft_machine(ledger)
    reply = aft_transfer(exchange_with(machine), ADDRESS, cents=1000, transaction_id="H-1", asset_number=ASSET)
    assert reply.transfer_status == 0x00 and ledger.credits_cents == 1000
