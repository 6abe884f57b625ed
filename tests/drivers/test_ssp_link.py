"""The real SSP/eSSP driver against the simulator over a real pty, end to end, with and without
encryption. Every test checks that it leaves no thread and no file descriptor behind. The contract
class at the bottom also runs against a real validator when ``EGM_HW_BILL_VALIDATOR_SSP`` names its
port (and ``EGM_HW_BILL_VALIDATOR_SSP_KEY`` its fixed key, for eSSP).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest

from drivers.ssp.codec import Command, Packet, PollEvent
from drivers.ssp.driver import SspValidator
from drivers.ssp.setup import USD_SETUP
from hal import registry
from hal.base import Lifecycle
from hal.errors import (
    BackendError,
    DeviceGoneError,
    DeviceInitError,
    DeviceOperationError,
    DeviceTimeoutError,
)
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
from sim_hardware.pty_link import run_on_pty
from sim_hardware.ssp_validator import Note, SspSimulator, State, Ticket
from tests.drivers.events import collect
from tests.drivers.hardware import contract_params
from tests.drivers.validator_contract import BillValidatorContract, HardwareWorld, SimulatedWorld

NAME = "validator"
TEST_FIXED_KEY = 0x0F1E2D3C4B5A6978          # a test key only, never a machine's
HW_PORT = os.environ.get("EGM_HW_BILL_VALIDATOR_SSP", "")
HW_KEY = os.environ.get("EGM_HW_BILL_VALIDATOR_SSP_KEY", "")
REPLY_S = 0.2
TICKET = "000111222333444555"                # an 18-digit validation number


pytestmark = pytest.mark.usefixtures("no_leaks")


def _driver(path: str, encryption: bool, **kw) -> SspValidator:
    return SspValidator(NAME, port=path, timeout=REPLY_S, poll_interval=0.01,
                        encryption=encryption,
                        fixed_key=f"{TEST_FIXED_KEY:016X}" if encryption else "", **kw)


@pytest.fixture(params=[False, True], ids=["ssp", "essp"])
def encryption(request) -> bool:
    return request.param


@pytest.fixture
def sim(encryption) -> SspSimulator:
    return SspSimulator(encryption=encryption, fixed_key=TEST_FIXED_KEY)


@pytest.fixture
def validator(link, encryption) -> Iterator[SspValidator]:
    dev = _driver(link.path, encryption)
    yield dev
    dev.close()


@pytest.fixture
def idle(validator, sim) -> SspValidator:
    """Open, every note enabled, Online consumed, polling an idle validator."""
    validator.open()
    assert validator.next_event(1.0) == DeviceOnline(NAME)
    validator.enable([d * 100 for d in USD_SETUP.channel_values])
    assert settle(validator, sim) == []
    return validator


def settle(dev: SspValidator, sim: SspSimulator, state: State = State.IDLE, polls: int = 8,
           timeout: float = 3.0) -> list[DeviceEvent]:
    """Wait for ``state`` and ``polls`` more POLL or HOLD commands; the events queued meanwhile."""
    deadline = time.monotonic() + timeout
    while sim.state is not state:
        assert time.monotonic() < deadline, f"simulator stuck in {sim.state}"
        time.sleep(0.005)
    def count() -> int:
        return sim.received[Command.POLL] + sim.received[Command.HOLD]
    start = count()
    while count() < start + polls:
        assert time.monotonic() < deadline, "the driver stopped polling"
        time.sleep(0.005)
    return dev.drain_events()


def escrow(dev: SspValidator, sim: SspSimulator, dollars: int) -> None:
    assert sim.insert_note(dollars)
    assert collect(dev, lambda e: isinstance(e, NoteEscrowed)) == [
        NoteEscrowed(NAME, dollars * 100)]


# --- open ---------------------------------------------------------------------------------------
def test_open_syncs_negotiates_reads_the_setup_and_stays_disabled(validator, sim, encryption):
    validator.open()
    assert validator.next_event(1.0) == DeviceOnline(NAME)
    assert validator.notes == USD_SETUP.notes
    assert validator.serial_number == sim.serial_number
    assert sim.keyed is encryption and sim.protocol == 6
    assert sim.received[Command.REQUEST_KEY_EXCHANGE] == (1 if encryption else 0)
    assert not sim.enabled and sim.enabled_channels == set()
    assert PollEvent.DISABLED in validator.poll()
    validator.enable([500, 2000])
    assert sim.enabled and sim.enabled_channels == {3, 5}
    validator.disable()
    assert not sim.enabled
    with pytest.raises(ValueError, match=r"no note of \[300\] cents"):
        validator.enable([300])


class RecordingSimulator(SspSimulator):
    """The simulator, keeping every packet it receives as the device codec saw it."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.packets: list[Packet] = []

    def _on_packet(self, packet: Packet) -> list[bytes]:
        self.packets.append(packet)
        return super()._on_packet(packet)


def test_the_driver_syncs_with_the_flag_set_then_goes_clear_and_repeats_a_lost_reply(encryption):
    """ITL: after SYNC "the host then sets its next seq bit to 0". Two sessions (the second SYNC
    comes in the middle of the simulator's sequence); the reply to the first command after the
    first SYNC is lost, and the driver sends that command again with the same flag."""
    sim = RecordingSimulator(encryption=encryption, fixed_key=TEST_FIXED_KEY)
    first = Command.SET_GENERATOR if encryption else Command.HOST_PROTOCOL_VERSION
    sim.drop_next_reply(to=first)
    with run_on_pty(sim) as link:
        dev = _driver(link.path, encryption)
        try:
            dev.open()
            dev.reopen()
        finally:
            dev.close()
    packets = sim.packets
    syncs = [i for i, p in enumerate(packets) if p.data == bytes((Command.SYNC,))]
    assert len(syncs) == 2
    for i in syncs:
        assert packets[i].seq is True
        assert packets[i + 1].seq is False and not packets[i + 1].repeated
    lost, again = packets[syncs[0] + 1], packets[syncs[0] + 2]
    assert again == Packet(0, False, lost.data, repeated=True)
    assert sim.resent == 1 and sim.received[first] == 2                 # once per session
    for before, packet in zip(packets[syncs[0]:], packets[syncs[0] + 1:], strict=False):
        if packet.data != bytes((Command.SYNC,)):
            assert packet.seq == (before.seq if packet.repeated else not before.seq)


def test_a_plain_driver_is_told_the_validator_wants_essp(no_leaks):
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY)
    with run_on_pty(sim) as link:
        dev = _driver(link.path, False)
        with pytest.raises(DeviceInitError, match="wants eSSP"):
            dev.open()
        assert dev.lifecycle is Lifecycle.CLOSED
        # A wrong fixed key: the key exchange works, the first encrypted command gets no answer.
        wrong = SspValidator(NAME, port=link.path, timeout=0.05, encryption=True,
                             fixed_key=f"{TEST_FIXED_KEY ^ 1:016X}")
        with pytest.raises(DeviceInitError, match="no answer to HOST_PROTOCOL_VERSION"):
            wrong.open()
        assert sim.refused == 3


# --- the acceptance -----------------------------------------------------------------------------
@pytest.mark.parametrize("repeat", [False, True], ids=["clean", "every-frame-repeated"])
def test_a_20_dollar_note_is_escrowed_stacked_on_command_and_credited_exactly_once(
        validator, sim, repeat, encryption):
    sim.repeat_replies(repeat)
    validator.open()
    validator.enable([2000])
    assert settle(validator, sim) == [DeviceOnline(NAME)]
    assert sim.insert_note(20)
    assert collect(validator, lambda e: isinstance(e, NoteEscrowed)) == [NoteEscrowed(NAME, 2000)]
    settle(validator, sim, State.ESCROW)                  # held while the host decides
    assert sim.received[Command.HOLD] >= 8 and sim.cashbox == []
    assert validator.drain_events() == []
    validator.stack()
    assert collect(validator, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert settle(validator, sim) == []                   # no second credit, however long
    assert sim.cashbox == [Note(5, 20)]
    if repeat:
        assert validator.counters["stale"] > 0            # the duplicates reached the driver
    if encryption:
        assert sim.keyed and sim.refused == 0


def test_lost_replies_are_repeated_with_the_same_flag_and_credit_once(idle, sim):
    sim.corrupt_next_crc(to=Command.POLL)
    escrow(idle, sim, 20)
    sim.drop_next_reply(to=Command.POLL)                  # the accepting POLL's reply is lost
    idle.stack()
    assert sim.resent >= 1 and idle.counters["repeats"] >= 1
    sim.lose_next_command(Command.POLL)                   # and a POLL that never arrives
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert settle(idle, sim) == []
    assert sim.cashbox == [Note(5, 20)] and idle.counters["bad_crc"] >= 1


@pytest.mark.parametrize("fault", ["command-lost", "replies-lost"])
def test_a_command_unanswered_after_every_send_is_followed_by_sync(idle, sim, encryption, fault):
    """Lost on the wire three times (the validator never saw it), or its three replies lost (it
    acted): either way the next command goes after a SYNC (and a new key), and is acted on."""
    syncs, keys = sim.received[Command.SYNC], sim.received[Command.REQUEST_KEY_EXCHANGE]
    if fault == "command-lost":
        sim.lose_next_command(Command.DISABLE, times=SspValidator.MAX_SENDS)
    else:
        sim.drop_next_reply(to=Command.DISABLE, times=SspValidator.MAX_SENDS)
    with pytest.raises(DeviceTimeoutError, match="no answer to DISABLE"):
        idle.disable()
    assert sim.enabled is (fault == "command-lost")
    idle.disable()                              # the next command: after SYNC, acted on
    assert not sim.enabled
    assert sim.received[Command.SYNC] == syncs + 1 and idle.counters["resync"] == 1
    assert sim.received[Command.REQUEST_KEY_EXCHANGE] == keys + encryption
    idle.enable([2000])
    assert sim.enabled and sim.enabled_channels == {5}
    escrow(idle, sim, 20)
    idle.stack()
    assert collect(idle, lambda e: isinstance(e, NoteStacked)) == [NoteStacked(NAME, 2000)]
    assert sim.refused == 0 and idle.counters["resync"] == 1


def test_return_on_request(idle, sim):
    escrow(idle, sim, 10)
    idle.return_escrow()
    assert collect(idle, lambda e: isinstance(e, Returned)) == [Returned(NAME)]
    assert settle(idle, sim) == []
    assert sim.returned == [Note(4, 10)] and sim.cashbox == []
    with pytest.raises(DeviceOperationError, match="nothing in escrow"):
        idle.stack()


def test_an_inhibited_note_and_a_bad_note_are_rejected_with_their_reason(idle, sim):
    idle.enable([500])
    assert sim.insert_note(20)
    assert collect(idle, lambda e: isinstance(e, Rejected)) == [Rejected(NAME, "channel inhibited")]
    assert settle(idle, sim) == []
    assert sim.insert_bad_note()
    assert collect(idle, lambda e: isinstance(e, Rejected)) == [Rejected(NAME, "invalid note")]
    assert settle(idle, sim) == []
    escrow(idle, sim, 5)


# --- bar-code tickets ---------------------------------------------------------------------------
def escrow_ticket(dev: SspValidator, sim: SspSimulator, barcode: str = TICKET) -> None:
    assert sim.insert_ticket(barcode)
    assert collect(dev, lambda e: isinstance(e, TicketEscrowed)) == [TicketEscrowed(NAME, barcode)]


@pytest.mark.parametrize("repeat", [False, True], ids=["clean", "every-frame-repeated"])
def test_an_18_digit_ticket_is_escrowed_with_its_number_stacked_on_command_and_reported_once(
        validator, sim, repeat, encryption):
    sim.repeat_replies(repeat)
    validator.open()
    assert sim.barcode_inhibit == b"\xfe"                  # opened: tickets inhibited
    validator.enable([2000])                               # tickets too, as with ID-003
    assert sim.barcode_inhibit == b"\xfc" and validator.barcode_reader
    assert settle(validator, sim) == [DeviceOnline(NAME)]
    escrow_ticket(validator, sim)
    settle(validator, sim, State.ESCROW)                   # held while the cashless layer decides
    assert sim.received[Command.GET_BARCODE_DATA] == 1 and sim.received[Command.HOLD] >= 8
    assert sim.cashbox == [] and validator.drain_events() == []
    validator.stack()
    assert collect(validator, lambda e: isinstance(e, TicketStacked)) == [
        TicketStacked(NAME, TICKET)]
    assert settle(validator, sim) == []                    # reported once, however long
    assert sim.cashbox == [Ticket(TICKET)]
    if repeat:
        assert validator.counters["stale"] > 0
    if encryption:
        assert sim.keyed and sim.refused == 0


def test_lost_replies_around_a_ticket_still_report_it_once(idle, sim):
    sim.drop_next_reply(to=Command.GET_BARCODE_DATA)
    escrow_ticket(idle, sim)
    sim.drop_next_reply(to=Command.POLL)                   # the accepting POLL's reply is lost
    idle.stack()
    sim.corrupt_next_crc(to=Command.POLL)
    assert collect(idle, lambda e: isinstance(e, TicketStacked)) == [TicketStacked(NAME, TICKET)]
    assert settle(idle, sim) == []
    assert sim.cashbox == [Ticket(TICKET)] and sim.resent >= 2


def test_a_ticket_is_returned_on_command(idle, sim):
    escrow_ticket(idle, sim)
    idle.hold()
    idle.return_escrow()
    assert collect(idle, lambda e: isinstance(e, Returned)) == [Returned(NAME)]
    assert settle(idle, sim) == []
    assert sim.returned == [Ticket(TICKET)] and sim.cashbox == []
    with pytest.raises(DeviceOperationError, match="nothing in escrow"):
        idle.return_escrow()


def test_inhibited_tickets_and_bad_bar_codes_are_not_accepted(idle, sim):
    idle.enable([2000], tickets=False)
    assert sim.barcode_inhibit == b"\xfe"
    assert sim.insert_ticket(TICKET)
    assert collect(idle, lambda e: isinstance(e, Rejected)) == [Rejected(NAME, "channel inhibited")]
    assert settle(idle, sim) == []
    idle.enable([2000])
    assert sim.insert_ticket(TICKET[:12])                  # a short bar code
    assert collect(idle, lambda e: isinstance(e, Rejected)) == [Rejected(NAME, "bar code scan fail")]
    assert settle(idle, sim) == []
    assert sim.returned == [Ticket(TICKET), Ticket(TICKET[:12])] and sim.cashbox == []
    assert sim.received[Command.GET_BARCODE_DATA] == 0
    escrow_ticket(idle, sim)                               # and a good one still goes in


def test_a_validator_without_a_reader_opens_and_takes_notes(no_leaks):
    sim = SspSimulator(barcode_reader=False)
    with run_on_pty(sim) as link, _driver(link.path, False) as dev:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        assert not dev.barcode_reader
        dev.enable([2000])                                 # tickets asked for: logged, not sent
        assert sim.received[Command.SET_BARCODE_INHIBIT] == 1     # the probe at open only
        escrow(dev, sim, 20)


@pytest.mark.parametrize(("inject", "kind", "detail"), [
    (lambda s: s.jam(), FaultKind.JAM, "safe note jam"),
    (lambda s: s.jam(safe=False), FaultKind.JAM, "unsafe note jam"),
    (lambda s: s.stacker_full(), FaultKind.STACKER_FULL, "stacker full"),
    (lambda s: s.fraud(), FaultKind.CHEAT, "fraud attempt"),
    (lambda s: s.remove_cashbox(), FaultKind.STACKER_OPEN, "cash box removed"),
], ids=["safe-jam", "unsafe-jam", "stacker-full", "fraud", "cashbox-removed"])
@pytest.mark.parametrize("encryption", [True], ids=["essp"])    # one mode: the suite stays short
def test_each_fault_is_reported_once_and_cleared(idle, sim, inject, kind, detail):
    inject(sim)
    assert collect(idle, lambda e: isinstance(e, DeviceFault)) == [DeviceFault(NAME, kind, detail)]
    assert settle(idle, sim) == []
    sim.clear_fault()
    assert collect(idle, lambda e: isinstance(e, DeviceFault)) == [
        DeviceFault(NAME, kind, detail, cleared=True)]
    escrow(idle, sim, 1)


def test_a_restarted_validator_is_set_up_again_and_its_escrow_returned(idle, sim, encryption):
    idle.enable([2000])
    escrow(idle, sim, 20)
    sim.power_off()
    sim.power_on()                                        # key lost, disabled, inhibited
    assert collect(idle, lambda e: isinstance(e, Returned)) == [Returned(NAME)]
    assert settle(idle, sim) == []
    assert idle.counters["reinit"] >= 1
    assert sim.enabled and sim.enabled_channels == {5} and sim.keyed is encryption
    assert sim.returned == [Note(5, 20)]
    escrow(idle, sim, 20)


def test_an_unplugged_validator_is_reported_offline(idle, sim):
    sim.unplug()
    events = collect(idle, lambda e: isinstance(e, DeviceOffline))
    assert events[-1].reason.startswith("port error")
    assert idle.lifecycle is Lifecycle.GONE
    with pytest.raises(DeviceGoneError):
        idle.stack()


def test_a_silent_validator_is_lost_and_reopens(idle, sim):
    sim.power_off()
    events = collect(idle, lambda e: isinstance(e, DeviceOffline))
    assert events[-1] == DeviceOffline(NAME, "no answer to 3 polls in a row")
    sim.power_on()
    idle.reopen()
    assert idle.next_event(1.0) == DeviceOnline(NAME)
    assert not sim.enabled
    idle.enable([2000])
    escrow(idle, sim, 20)


def test_open_fails_cleanly(link, sim, tmp_path, encryption):
    with pytest.raises(DeviceInitError, match="cannot open"):
        _driver(str(tmp_path / "ttyNONE"), encryption).open()
    sim.power_off()
    dev = SspValidator(NAME, port=link.path, timeout=0.05)
    with pytest.raises(DeviceInitError, match="no answer to SYNC"):
        dev.open()
    assert dev.lifecycle is Lifecycle.CLOSED and dev.drain_events() == []


def test_the_registry_builds_it_from_settings(no_leaks):
    dev = registry.create("bill_validator", "ssp", NAME,
                          {"port": "/dev/null", "encryption": True,
                           "fixed_key": f"{TEST_FIXED_KEY:016X}", "address": 0})
    assert isinstance(dev, SspValidator) and dev.encryption and not dev.is_open
    with pytest.raises(BackendError, match="encryption needs fixed_key"):
        registry.create("bill_validator", "ssp", NAME, {"port": "/dev/null", "encryption": True})
    with pytest.raises(BackendError, match="16 hex digits"):
        registry.create("bill_validator", "ssp", NAME,
                        {"port": "/dev/null", "encryption": True, "fixed_key": "1234"})
    with pytest.raises(BackendError, match="settings are port, timeout, poll_interval, address"):
        registry.create("bill_validator", "ssp", NAME, {"port": "/dev/null", "baud": 9600})


# --- the contract: simulator always, real hardware when attached ---------------------------------
@pytest.fixture(params=contract_params(
    HW_PORT, "no SSP bill validator attached: set EGM_HW_BILL_VALIDATOR_SSP=<port> "
             "(and EGM_HW_BILL_VALIDATOR_SSP_KEY=<fixed key> for eSSP)"))
def contract(request, no_leaks) -> Iterator[tuple[SspValidator, SimulatedWorld | HardwareWorld]]:
    if request.param == "hardware":
        with SspValidator(NAME, port=HW_PORT, timeout=1.0, poll_interval=0.2,
                          encryption=bool(HW_KEY), fixed_key=HW_KEY) as dev:
            yield dev, HardwareWorld(request, "SSP validator")
        return
    sim = SspSimulator(encryption=True, fixed_key=TEST_FIXED_KEY)
    with run_on_pty(sim) as link, _driver(link.path, True) as dev:
        yield dev, SimulatedWorld(sim.insert_note)


class TestSspBillValidatorContract(BillValidatorContract):
    """What the cabinet relies on from any bill validator backend, through SSP."""

    def test_opens_online_and_disabled(self, contract):
        dev, world = contract
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        assert PollEvent.DISABLED in dev.poll()
