"""The real ID-003 driver against the simulator over a real pty, end to end.

Every test here checks that it leaves no thread and no file descriptor behind. The contract class
at the bottom also runs against a real validator when ``EGM_HW_BILL_VALIDATOR`` names its port.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest
import serial

from drivers.id003.codec import Command, Status
from drivers.id003.driver import Id003Validator
from drivers.id003.settings import USD_TABLE, notes_in_cents
from hal import registry
from hal.base import Lifecycle
from hal.errors import BackendError, DeviceGoneError, DeviceInitError, DeviceOperationError
from hal.events import (
    DeviceEvent,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    FaultKind,
    NoteEscrowed,
    NoteStacked,
    Rejected,
    Returned,
    TicketEscrowed,
    TicketStacked,
)
from sim_hardware.id003_validator import Id003Simulator, Note, State, Ticket
from sim_hardware.pty_link import PtyLink, run_on_pty
from tests.drivers.events import collect
from tests.drivers.hardware import contract_params
from tests.drivers.leaks import open_fds
from tests.drivers.validator_contract import BillValidatorContract, HardwareWorld, SimulatedWorld

NAME = "validator"
TICKET = "000111222333444555"
HW_PORT = os.environ.get("EGM_HW_BILL_VALIDATOR", "")
#: Reply time-out of the driver under test: generous, the test machine is shared.
REPLY_S = 0.5


pytestmark = pytest.mark.usefixtures("no_leaks")


# --- rig ----------------------------------------------------------------------------------------
@pytest.fixture
def sim() -> Id003Simulator:
    return Id003Simulator()


@pytest.fixture
def validator(link) -> Iterator[Id003Validator]:
    dev = Id003Validator(NAME, port=link.path, timeout=REPLY_S, poll_interval=0.01)
    yield dev
    dev.close()


@pytest.fixture
def ready(validator) -> Id003Validator:
    """Open, every note and tickets enabled, the Online event consumed."""
    validator.open()
    assert validator.next_event(1.0) == DeviceOnline(NAME)
    validator.enable([d.cents for d in USD_TABLE])
    return validator


@pytest.fixture
def idle(ready, sim) -> Id003Validator:
    """Ready, and the validator through INITIALIZE to IDLING with no event on the way."""
    assert settle(ready, sim, State.IDLING) == []
    return ready


def settle(dev: Id003Validator, sim: Id003Simulator, state: State, polls: int = 8,
           timeout: float = 3.0) -> list[DeviceEvent]:
    """Wait for the simulator to reach ``state`` and the driver to poll it ``polls`` more times;
    every event queued meanwhile (a repeated credit would show up here)."""
    deadline = time.monotonic() + timeout
    while sim.state is not state:
        assert time.monotonic() < deadline, f"simulator stuck in {sim.state}"
        time.sleep(0.005)
    start = sim.received[Command.STATUS_REQUEST]
    while sim.received[Command.STATUS_REQUEST] < start + polls:
        assert time.monotonic() < deadline, "the driver stopped polling"
        time.sleep(0.005)
    return dev.drain_events()


def escrow(dev: Id003Validator, sim: Id003Simulator, dollars: int) -> None:
    assert sim.insert_note(dollars)
    assert collect(dev, lambda e: isinstance(e, NoteEscrowed)) == [
        NoteEscrowed(NAME, dollars * 100)]


# --- the pty itself -----------------------------------------------------------------------------
def test_the_pty_is_raw_and_carries_every_byte_value_both_ways(no_leaks):
    data = bytes(range(256))                  # 0x11/0x13 are XON/XOFF, 0x0D/0x0A CR/LF
    with PtyLink() as link, serial.Serial(link.path, timeout=0.5) as port:
        port.write(data)
        got = b""
        while len(got) < len(data):
            chunk = link.port.read(0.5)
            assert chunk, got
            got += chunk
        assert got == data
        link.port.write(data)
        assert port.read(len(data)) == data
    assert link.closed and link.port.closed


def test_open_close_cycles_leave_nothing_behind(no_leaks, sim):
    before = len(open_fds())
    for _ in range(3):
        with run_on_pty(sim) as link, Id003Validator(NAME, port=link.path, timeout=REPLY_S,
                                                     poll_interval=0.01) as dev:
            assert dev.poll() in (Status.INITIALIZE, Status.DISABLED)
            assert any(t.name == f"id003-poll-{NAME}" for t in threading.enumerate())
    assert len(open_fds()) == before


# --- open, settings -----------------------------------------------------------------------------
def test_open_resets_configures_and_reads_the_currency_table(validator, sim):
    assert sim.state is State.POWER_UP
    validator.open()
    assert validator.next_event(1.0) == DeviceOnline(NAME)
    assert sim.received[Command.RESET] == 1
    assert sim.received[Command.GET_CURRENCY_ASSIGNMENT] == 1
    assert validator.notes == notes_in_cents(USD_TABLE)
    assert sim.inhibited and sim.setting(Command.SET_BARCODE_FUNCTION) == b"\x01\x12"
    assert settle(validator, sim, State.DISABLED) == []
    assert validator.poll() is Status.DISABLED


def test_enable_and_disable_set_the_denominations_and_the_inhibit(ready, sim):
    ready.enable([500, 2000], tickets=False)
    assert sim.enabled_codes == {0x63, 0x65} and not sim.inhibited
    assert settle(ready, sim, State.IDLING) == []
    ready.disable()
    assert sim.inhibited
    settle(ready, sim, State.DISABLED)
    assert ready.poll() is Status.DISABLED
    with pytest.raises(ValueError, match=r"no note of \[300\] cents"):
        ready.enable([300])


# --- the acceptance ------------------------------------------------------------------------------
@pytest.mark.parametrize("repeat", [False, True], ids=["clean", "every-frame-repeated"])
def test_a_20_dollar_note_is_escrowed_stacked_on_command_and_credited_exactly_once(
        validator, sim, repeat):
    sim.repeat_replies(repeat)
    validator.open()
    validator.enable([2000])
    assert settle(validator, sim, State.IDLING) == [DeviceOnline(NAME)]
    assert sim.insert_note(20)
    events = collect(validator, lambda e: isinstance(e, NoteEscrowed))
    assert events == [NoteEscrowed(NAME, 2000)]
    time.sleep(0.05)                                   # escrow holds until the host decides
    assert sim.state is State.ESCROW and validator.drain_events() == []
    validator.stack()
    assert collect(validator, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert settle(validator, sim, State.IDLING) == []  # no second credit, however long we poll
    assert sim.cashbox == [Note(0x65, 20)]
    assert sim.received[Command.ACK] == 1
    if repeat:
        assert validator.counters["stale"] > 0         # the duplicates did reach the driver


def test_a_dropped_ack_and_a_corrupted_crc_are_survived(idle, sim):
    sim.corrupt_next_crc(to=Command.STATUS_REQUEST)
    escrow(idle, sim, 20)
    assert idle.counters["bad_crc"] == 1
    sim.drop_next_reply(to=Command.STACK_1)            # STACK_1 arrives, its ACK does not
    idle.stack()
    assert idle.counters["timeouts"] >= 1
    assert sim.received[Command.STACK_1] == 1          # confirmed by a poll, not sent twice
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert settle(idle, sim, State.IDLING) == []
    assert sim.cashbox == [Note(0x65, 20)]


def test_a_lost_ack_of_vend_valid_is_acked_again_and_credits_once(idle, sim):
    escrow(idle, sim, 20)
    sim.lose_next_command(Command.ACK)
    idle.stack()
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert settle(idle, sim, State.IDLING) == []
    assert sim.received[Command.ACK] == 1 and len(sim.cashbox) == 1   # one lost, one arrived


def test_repeated_frames_and_a_lost_ack_together_still_credit_once(idle, sim):
    escrow(idle, sim, 100)
    sim.repeat_replies()
    sim.lose_next_command(Command.ACK)
    idle.stack()
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 10_000)]
    assert settle(idle, sim, State.IDLING) == []
    assert sim.received[Command.ACK] == 1 and sim.cashbox == [Note(0x67, 100)]
    assert idle.counters["stale"] > 0


def test_return_on_request(idle, sim):
    escrow(idle, sim, 10)
    idle.return_escrow()
    assert collect(idle, lambda e: isinstance(e, Returned)) == [Returned(NAME)]
    assert settle(idle, sim, State.IDLING) == []
    assert sim.returned == [Note(0x64, 10)] and sim.cashbox == []
    with pytest.raises(DeviceOperationError, match="nothing in escrow"):
        idle.stack()


def test_a_ticket_is_escrowed_held_and_stacked_once(idle, sim):
    assert sim.insert_ticket(TICKET)
    assert collect(idle, lambda e: isinstance(e, TicketEscrowed)) == [
        TicketEscrowed(NAME, TICKET)]
    idle.hold()                                       # while the host validates it
    settle(idle, sim, State.HOLDING)
    idle.stack()
    assert collect(idle, lambda e: isinstance(e, TicketStacked)) == [
        TicketStacked(NAME, TICKET)]
    assert settle(idle, sim, State.IDLING) == []
    assert sim.cashbox == [Ticket(TICKET)]


def test_an_inhibited_denomination_is_rejected_with_its_reason(ready, sim):
    ready.enable([500])
    settle(ready, sim, State.IDLING)
    assert sim.insert_note(20)
    assert collect(ready, lambda e: isinstance(e, Rejected)) == [
        Rejected(NAME, "return by inhibit")]
    assert settle(ready, sim, State.IDLING) == []
    escrow(ready, sim, 5)


@pytest.mark.parametrize(("inject", "kind", "detail"), [
    (lambda s: s.jam(), FaultKind.JAM, "jam in acceptor"),
    (lambda s: s.jam(in_stacker=True), FaultKind.JAM, "jam in stacker"),
    (lambda s: s.stacker_full(), FaultKind.STACKER_FULL, "stacker full"),
    (lambda s: s.remove_stacker(), FaultKind.STACKER_OPEN, "stacker open (removed)"),
    (lambda s: s.cheat(), FaultKind.CHEAT, "cheat detected"),
    (lambda s: s.fail(0xA5), FaultKind.FAILURE, "failure 0xA5: transport motor speed failure"),
], ids=["jam-acceptor", "jam-stacker", "stacker-full", "stacker-open", "cheat", "failure"])
def test_each_fault_is_reported_and_cleared(idle, sim, inject, kind, detail):
    inject(sim)
    assert collect(idle, lambda e: isinstance(e, DeviceFault)) == [DeviceFault(NAME, kind, detail)]
    assert settle(idle, sim, State.INITIALIZE) == []  # reported once, however long it lasts
    sim.clear_fault()
    assert collect(idle, lambda e: isinstance(e, DeviceFault)) == [
        DeviceFault(NAME, kind, detail, cleared=True)]
    escrow(idle, sim, 1)                              # and the validator works again


def test_power_loss_mid_frame_returns_the_escrow_and_restores_the_settings(idle, sim):
    idle.enable([2000])
    escrow(idle, sim, 20)
    sim.power_loss_mid_frame(to=Command.STATUS_REQUEST)
    assert collect(idle, lambda e: isinstance(e, Returned)) == [Returned(NAME)]
    assert settle(idle, sim, State.IDLING) == []
    assert idle.counters["reinit"] == 1 and sim.received[Command.RESET] == 2
    assert sim.enabled_codes == {0x65} and not sim.inhibited
    assert sim.returned == [Note(0x65, 20)]
    escrow(idle, sim, 20)


def test_an_unplugged_validator_is_reported_offline(idle, sim):
    sim.unplug()
    events = collect(idle, lambda e: isinstance(e, DeviceOffline))
    assert events[-1].reason.startswith("port error")
    assert idle.lifecycle is Lifecycle.GONE and sim.unplugged
    with pytest.raises(DeviceGoneError):
        idle.stack()
    idle.close()
    assert idle.lifecycle is Lifecycle.CLOSED


def test_a_silent_validator_is_lost_after_missed_polls_and_reopens(idle, sim):
    sim.power_off()
    events = collect(idle, lambda e: isinstance(e, DeviceOffline))
    assert events[-1] == DeviceOffline(NAME, "no answer to 3 status requests in a row")
    sim.power_on()
    idle.reopen()
    assert idle.next_event(1.0) == DeviceOnline(NAME)
    assert sim.received[Command.RESET] == 2
    assert sim.inhibited                   # back inhibited: the cabinet enables it when ready
    idle.enable([2000])
    assert settle(idle, sim, State.IDLING) == []
    escrow(idle, sim, 20)


def test_open_fails_cleanly(link, sim, tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        Id003Validator(NAME, port=str(tmp_path / "ttyNONE"), timeout=0.1).open()
    sim.power_off()
    dev = Id003Validator(NAME, port=link.path, timeout=0.1, poll_interval=0.01)
    with pytest.raises(DeviceInitError, match="no answer to status requests"):
        dev.open()
    assert dev.lifecycle is Lifecycle.CLOSED and dev.drain_events() == []


def test_the_registry_builds_it_from_settings(link):
    dev = registry.create("bill_validator", "id003", NAME,
                          {"port": link.path, "timeout": REPLY_S, "poll_interval": 0.01})
    assert isinstance(dev, Id003Validator) and not dev.is_open
    with pytest.raises(BackendError, match="settings are port, timeout, poll_interval"):
        registry.create("bill_validator", "id003", NAME, {"port": link.path, "baud": 9600})
    with pytest.raises(BackendError, match="poll_interval must be positive"):
        registry.create("bill_validator", "id003", NAME, {"port": link.path, "poll_interval": 0})


# --- the contract: simulator always, real hardware when attached ---------------------------------
@pytest.fixture(params=contract_params(
    HW_PORT, "no bill validator hardware attached: set EGM_HW_BILL_VALIDATOR=<port> to run this "
             "contract on a real one"))
def contract(request, no_leaks) -> Iterator[tuple[Id003Validator, SimulatedWorld | HardwareWorld]]:
    if request.param == "hardware":
        with Id003Validator(NAME, port=HW_PORT, timeout=1.0, poll_interval=0.2) as dev:
            yield dev, HardwareWorld(request)
        return
    sim = Id003Simulator()
    with run_on_pty(sim) as link, Id003Validator(NAME, port=link.path, timeout=REPLY_S,
                                                 poll_interval=0.01) as dev:
        yield dev, SimulatedWorld(sim.insert_note)


def _wait_status(dev: Id003Validator, wanted: Status, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while (status := dev.poll()) is not wanted:
        assert time.monotonic() < deadline, f"status {status!r}, wanted {wanted.name}"
        time.sleep(0.02)


class TestBillValidatorContract(BillValidatorContract):
    """What the cabinet relies on from any bill validator backend."""

    def test_opens_online_and_disabled(self, contract):
        dev, world = contract
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        _wait_status(dev, Status.DISABLED, world.wait_s)

    def test_enable_idles_and_disable_disables(self, contract):
        dev, world = contract
        dev.enable([100, 2000])
        _wait_status(dev, Status.IDLING, world.wait_s)
        dev.disable()
        _wait_status(dev, Status.DISABLED, world.wait_s)

    def ready(self, dev, world) -> None:
        _wait_status(dev, Status.IDLING, world.wait_s)


def test_a_crashed_serve_loop_is_raised_when_the_link_closes(no_leaks):
    class Broken:
        def serve(self, port, stop):
            raise ZeroDivisionError("simulator bug")

    with pytest.raises(RuntimeError, match="serve loop failed") as info, run_on_pty(Broken()):
        pass
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_with_ack_on_record_the_vend_valid_waits_for_the_cabinets_record(idle, sim):
    # The cabinet sets ack_on_record: a credit is ACKed only once critical memory holds it, so a
    # power loss in between leaves a credited note in the validator's path, never an uncredited
    # note in the cash box.
    idle.ack_on_record = True
    escrow(idle, sim, 20)
    idle.stack()
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    time.sleep(5 * idle.poll_interval)                 # polls go on; VEND_VALID repeats unACKed
    assert sim.state is State.VEND_VALID and sim.cashbox == []
    assert sim.received.get(Command.ACK, 0) == 0
    idle.credit_recorded()
    assert settle(idle, sim, State.IDLING) == []       # ACKed at the next poll, credited once
    assert sim.received[Command.ACK] == 1 and sim.cashbox == [Note(0x65, 20)]
