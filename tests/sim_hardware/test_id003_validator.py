"""The simulated ID-003 validator's state machine, driven through the host role of the codec (no pty)."""

from __future__ import annotations

import pytest

from drivers.codec import NEED_DATA, Garbage, Role
from drivers.id003.codec import Command, Frame, Id003Codec, Status, encode
from drivers.id003.settings import (
    BARCODE_FUNCTION,
    INHIBIT_OFF,
    INHIBIT_ON,
    USD_TABLE,
    barcode_inhibit,
    enable_mask,
    parse_assignment,
)
from sim_hardware.id003_validator import (
    AFTER_DWELL,
    OPERATIONS,
    STATUS_OF,
    Id003Simulator,
    Note,
    State,
    Ticket,
)

TICKET = "123456789012345678"
IDLING = Frame(Status.IDLING)
ACK = Frame(Status.ACK)
INVALID = Frame(Status.INVALID_COMMAND)


class Host:
    """The terminal's end, sans-I/O: encodes commands, decodes what the simulator writes."""

    def __init__(self, sim: Id003Simulator) -> None:
        self.sim = sim
        self.codec = Id003Codec(Role.HOST)
        self.writes: list[bytes] = []

    def send_raw(self, data: bytes) -> list:
        self.writes = self.sim.feed(data)
        self.codec.receive_data(b"".join(self.writes))
        return self.codec.events()

    def ask(self, code: int, data: bytes = b"") -> list:
        return self.send_raw(self.codec.send(Frame(code, data)))

    def one(self, code: int, data: bytes = b"") -> Frame:
        replies = self.ask(code, data)
        assert len(replies) == 1, replies
        return replies[0]

    def poll(self) -> Frame:
        return self.one(Command.STATUS_REQUEST)

    def polls(self, n: int) -> list[Frame]:
        return [self.poll() for _ in range(n)]

    def ready(self, *, enabled=(0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67), tickets=True) -> None:
        """Reset and configure like the driver does; the validator ends up IDLING."""
        assert self.one(Command.RESET) == ACK
        self.one(Command.SET_ENABLE, enable_mask(enabled))
        self.one(Command.SET_BARCODE_FUNCTION, BARCODE_FUNCTION)
        self.one(Command.SET_BARCODE_INHIBIT, barcode_inhibit(notes=True, tickets=tickets))
        self.one(Command.SET_INHIBIT, INHIBIT_OFF)
        assert self.polls(2) == [Frame(Status.INITIALIZE), IDLING]

    def escrow(self, value: int = 20) -> Frame:
        assert self.sim.insert_note(value)
        assert self.poll() == Frame(Status.ACCEPTING)
        return self.poll()


@pytest.fixture
def sim() -> Id003Simulator:
    return Id003Simulator()


@pytest.fixture
def host(sim) -> Host:
    return Host(sim)


def test_every_state_reports_a_status_and_the_tables_only_name_states():
    assert set(STATUS_OF) == set(State) - {State.OFF, State.POWER_UP}
    for table in (OPERATIONS, AFTER_DWELL):
        assert all(isinstance(s, State) for s in table)
    with pytest.raises(ValueError):
        Id003Simulator(dwell=0)


def test_power_up_until_reset_then_initialize_then_disabled(host, sim):
    assert host.polls(3) == [Frame(Status.POWER_UP)] * 3
    assert host.one(Command.STACK_1) == INVALID
    assert host.one(Command.RESET) == ACK
    assert host.polls(2) == [Frame(Status.INITIALIZE), Frame(Status.DISABLED)]
    assert sim.state is State.DISABLED and sim.inhibited
    assert sim.received[Command.STATUS_REQUEST] == 5


def test_dwell_counts_status_requests():
    sim = Id003Simulator(dwell=3)
    host = Host(sim)
    host.one(Command.RESET)
    assert host.polls(4) == [Frame(Status.INITIALIZE)] * 3 + [Frame(Status.DISABLED)]


def test_golden_frames_from_the_vectors(host, sim):
    # docs/protocols/frames.md: host set inhibit off; validator idling, escrow 0x63, vend valid.
    host.ask(Command.RESET)
    assert host.send_raw(bytes.fromhex("FC 06 C3 00 04 D6")) == [Frame(Command.SET_INHIBIT, b"\0")]
    assert host.writes == [bytes.fromhex("FC 06 C3 00 04 D6")]
    host.polls(2)
    host.send_raw(bytes.fromhex("FC 05 11 27 56"))
    assert host.writes == [bytes.fromhex("FC 05 11 27 56")]
    sim.insert_note(5)
    host.poll()
    host.send_raw(bytes.fromhex("FC 05 11 27 56"))
    assert host.writes == [bytes.fromhex("FC 06 13 63 A2 D8")]
    host.one(Command.STACK_1)
    host.poll()
    host.send_raw(bytes.fromhex("FC 05 11 27 56"))
    assert host.writes == [bytes.fromhex("FC 05 15 03 10")]


def test_settings_are_echoed_and_read_back(host, sim):
    host.one(Command.RESET)
    for setter, data in [(Command.SET_ENABLE, b"\x10\x00"), (Command.SET_SECURITY, b"\x01\x00"),
                         (Command.SET_COMMUNICATION_MODE, b"\x00"),
                         (Command.SET_INHIBIT, INHIBIT_OFF), (Command.SET_DIRECTION, b"\x0f"),
                         (Command.SET_OPTIONAL_FUNCTION, b"\x03\x00"),
                         (Command.SET_BARCODE_FUNCTION, BARCODE_FUNCTION),
                         (Command.SET_BARCODE_INHIBIT, b"\xfe")]:
        assert host.one(setter, data) == Frame(setter, data)
        assert host.one(setter - 0x40) == Frame(setter - 0x40, data)
        assert sim.setting(setter) == data
    assert sim.enabled_codes == frozenset({0x61, 0x62, 0x63, 0x64, 0x66, 0x67, 0x68})  # 0x65 off
    # Wrong lengths and values are refused and change nothing.
    assert host.one(Command.SET_ENABLE, b"\x00") == INVALID
    assert host.one(Command.SET_INHIBIT, b"\x02") == INVALID
    assert sim.setting(Command.SET_ENABLE) == b"\x10\x00"
    assert host.send_raw(encode(Frame(0x20))) == [INVALID]            # not an ID-003 command
    assert host.one(Command.GET_VERSION).data.startswith(b"EGM-SIM ID003")
    assert host.one(Command.GET_BOOT_VERSION).code == Command.GET_BOOT_VERSION


def test_inhibit_moves_between_idling_and_disabled(host, sim):
    host.ready()
    assert host.one(Command.SET_INHIBIT, INHIBIT_ON) == Frame(Command.SET_INHIBIT, INHIBIT_ON)
    assert host.poll() == Frame(Status.DISABLED)
    assert sim.insert_note(20) is False                 # a disabled validator takes nothing
    assert host.poll() == Frame(Status.DISABLED)
    host.one(Command.SET_INHIBIT, INHIBIT_OFF)
    assert host.poll() == IDLING


def test_the_currency_assignment_is_the_documented_usd_table(host):
    table = parse_assignment(host.one(Command.GET_CURRENCY_ASSIGNMENT).data)
    assert table == USD_TABLE
    assert {d.code: d.value for d in table} == {0x61: 1, 0x62: 2, 0x63: 5, 0x64: 10, 0x65: 20,
                                               0x66: 50, 0x67: 100}


def test_a_note_is_escrowed_stacked_and_vended_until_the_host_acks(host, sim):
    host.ready()
    assert host.escrow(20) == Frame(Status.ESCROW, b"\x65")
    assert host.polls(3) == [Frame(Status.ESCROW, b"\x65")] * 3       # held until the host decides
    assert host.one(Command.STACK_1) == ACK
    assert host.polls(4) == [Frame(Status.STACKING)] + [Frame(Status.VEND_VALID)] * 3
    assert sim.cashbox == []                                           # not before the ACK
    assert host.ask(Command.ACK) == [] and host.writes == []           # an ACK is not answered
    assert host.polls(2) == [Frame(Status.STACKED), IDLING]
    assert sim.cashbox == [Note(0x65, 20)]
    assert host.ask(Command.ACK) == []                                 # a stray ACK changes nothing
    assert host.poll() == IDLING and sim.cashbox == [Note(0x65, 20)]


def test_return_and_hold(host, sim):
    host.ready()
    host.escrow(10)
    assert host.one(Command.HOLD) == ACK
    assert host.polls(2) == [Frame(Status.HOLDING)] * 2
    assert host.one(Command.WAIT) == ACK
    assert host.one(Command.RETURN) == ACK
    assert host.polls(2) == [Frame(Status.RETURNING), IDLING]
    assert sim.returned == [Note(0x64, 10)] and sim.cashbox == []
    host.escrow(100)
    host.one(Command.HOLD)
    assert host.one(Command.STACK_2) == ACK
    assert host.polls(2) == [Frame(Status.STACKING), Frame(Status.VEND_VALID)]


def test_operations_outside_escrow_are_invalid(host):
    host.ready()
    for command in (Command.STACK_1, Command.STACK_2, Command.RETURN, Command.HOLD):
        assert host.one(command) == INVALID
    host.escrow()
    host.one(Command.STACK_1)
    assert host.one(Command.RETURN) == INVALID                # too late once stacking


def test_inhibited_denominations_and_unreadable_notes_are_rejected_with_a_reason(host, sim):
    host.ready(enabled=(0x63,))
    assert host.escrow(20) == Frame(Status.REJECTING, b"\x79")
    assert host.polls(1) == [IDLING]
    assert host.escrow(5) == Frame(Status.ESCROW, b"\x63")
    host.one(Command.RETURN)
    host.polls(2)
    assert sim.insert_bad_note(0x77)
    assert host.polls(3) == [Frame(Status.ACCEPTING), Frame(Status.REJECTING, b"\x77"), IDLING]
    assert sim.rejected == [0x79, 0x77]
    # Barcode inhibit can shut notes off while tickets stay on.
    host.one(Command.SET_BARCODE_INHIBIT, barcode_inhibit(notes=False, tickets=True))
    assert host.escrow(5) == Frame(Status.REJECTING, b"\x79")
    with pytest.raises(ValueError):
        sim.insert_note(3)
    with pytest.raises(ValueError):
        sim.insert_bad_note(0x20)


def test_tickets_need_the_barcode_function_and_are_escrowed_with_their_digits(host, sim):
    host.one(Command.RESET)
    host.one(Command.SET_INHIBIT, INHIBIT_OFF)
    host.polls(2)
    assert sim.insert_ticket(TICKET)                          # barcode function still off
    assert host.polls(3) == [Frame(Status.ACCEPTING), Frame(Status.REJECTING, b"\x79"), IDLING]
    host.one(Command.SET_BARCODE_FUNCTION, BARCODE_FUNCTION)
    assert sim.insert_ticket(TICKET)
    assert host.polls(2)[1] == Frame(Status.ESCROW, b"\x6f" + TICKET.encode())
    host.one(Command.STACK_1)
    host.polls(2)
    host.ask(Command.ACK)
    host.polls(2)
    assert sim.cashbox == [Ticket(TICKET)]
    assert sim.insert_ticket("1234")                          # wrong length for the function
    assert host.polls(2)[1].code == Status.REJECTING
    with pytest.raises(ValueError):
        sim.insert_ticket("12a4")


@pytest.mark.parametrize(("inject", "status", "data"), [
    (lambda s: s.jam(), Status.JAM_IN_ACCEPTOR, b""),
    (lambda s: s.jam(in_stacker=True), Status.JAM_IN_STACKER, b""),
    (lambda s: s.stacker_full(), Status.STACKER_FULL, b""),
    (lambda s: s.remove_stacker(), Status.STACKER_OPEN, b""),
    (lambda s: s.cheat(), Status.CHEATED, b""),
    (lambda s: s.fail(0xA6), Status.FAILURE, b"\xa6"),
])
def test_each_fault_is_reported_until_cleared(host, sim, inject, status, data):
    host.ready()
    host.escrow(50)
    inject(sim)
    assert host.polls(3) == [Frame(status, data)] * 3
    assert host.one(Command.STACK_1) == INVALID
    assert host.one(Command.RESET) == ACK                     # a reset does not clear a jam
    assert host.poll() == Frame(status, data)
    assert sim.insert_note(5) is False
    sim.clear_fault()
    assert host.polls(2) == [Frame(Status.INITIALIZE), IDLING]
    assert sim.cashbox == [] and sim.returned == []           # the caught note is nobody's credit


def test_fault_injection_refuses_non_faults(sim):
    with pytest.raises(ValueError):
        sim.inject_fault(Status.IDLING)
    with pytest.raises(ValueError):
        sim.fail(0x01)


def test_a_corrupted_crc_hits_one_reply_only(host, sim):
    host.ready()
    sim.corrupt_next_crc()
    events = host.ask(Command.STATUS_REQUEST)
    assert any(isinstance(e, Garbage) and e.reason == "bad CRC" for e in events)
    assert IDLING not in events
    assert host.poll() == IDLING


def test_a_dropped_reply_still_takes_effect(host, sim):
    host.ready()
    host.escrow()
    sim.drop_next_reply()
    assert host.ask(Command.STACK_1) == [] and host.writes == []
    assert host.poll() == Frame(Status.STACKING)


def test_repeated_replies_are_written_twice(host, sim):
    host.ready()
    sim.repeat_replies()
    assert host.ask(Command.STATUS_REQUEST) == [IDLING, IDLING]
    assert len(host.writes) == 2 and host.writes[0] == host.writes[1]
    sim.repeat_replies(False)
    assert host.ask(Command.STATUS_REQUEST) == [IDLING]


def test_power_loss_mid_frame_cuts_the_reply_and_powers_up_with_the_bill_in_the_acceptor(host, sim):
    host.ready()
    host.escrow(20)
    sim.power_loss_mid_frame()
    assert host.ask(Command.STATUS_REQUEST) == []
    assert host.writes == [encode(Frame(Status.ESCROW, b"\x65"))[:3]]
    assert host.codec.next_event() is NEED_DATA and host.codec.buffered == 3
    host.codec = Id003Codec(Role.HOST)                          # the driver starts afresh
    assert host.poll() == Frame(Status.POWER_UP_BILL_IN_ACCEPTOR)
    assert sim.inhibited and sim.setting(Command.SET_BARCODE_FUNCTION) == b"\0\0"
    host.one(Command.RESET)
    assert sim.returned == [Note(0x65, 20)]
    assert host.polls(2) == [Frame(Status.INITIALIZE), Frame(Status.DISABLED)]


def test_power_loss_while_stacking_stacks_the_bill_without_a_vend(host, sim):
    host.ready()
    host.escrow(20)
    host.one(Command.STACK_1)
    host.poll()
    sim.power_off()
    assert host.ask(Command.STATUS_REQUEST) == [] and host.writes == []      # silent
    sim.power_on()
    assert host.poll() == Frame(Status.POWER_UP_BILL_IN_STACKER)
    host.one(Command.RESET)
    assert sim.cashbox == [Note(0x65, 20)] and sim.received[Command.ACK] == 0


def test_a_lost_ack_leaves_vend_valid_repeating(host, sim):
    host.ready()
    host.escrow()
    host.one(Command.STACK_1)
    host.polls(2)
    sim.lose_next_command(Command.ACK)
    assert host.poll() == Frame(Status.VEND_VALID)            # not the ACK: this one arrives
    host.ask(Command.ACK)                                     # lost
    assert host.poll() == Frame(Status.VEND_VALID)
    host.ask(Command.ACK)
    assert host.polls(2) == [Frame(Status.STACKED), IDLING]
    assert sim.received[Command.ACK] == 1 and len(sim.cashbox) == 1


def test_a_damaged_command_is_answered_communication_error(host):
    host.ready()
    bad = bytearray(encode(Frame(Command.STACK_1)))
    bad[-1] ^= 0x01
    assert host.send_raw(bytes(bad)) == [Frame(Status.COMMUNICATION_ERROR)]


def test_commands_fed_byte_by_byte_and_among_noise(host, sim):
    host.ready()
    stream = b"\x00\xffnoise" + encode(Frame(Command.STATUS_REQUEST)) + b"\x13"
    replies = []
    for i in range(len(stream)):
        replies += host.send_raw(stream[i:i + 1])
    assert replies == [IDLING]
    assert sim.received[Command.STATUS_REQUEST] == 3


def test_unplug_is_a_flag_the_serve_loop_acts_on(sim):
    sim.unplug()
    assert sim.feed(Id003Codec(Role.HOST).send(Frame(Command.STATUS_REQUEST))) == []
