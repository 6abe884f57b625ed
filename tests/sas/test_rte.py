"""Real-time event reporting through ``SasMachine`` on a real ledger: 0x0E turns it on and off, a
general poll is then answered with the queue head's event, whose data are the ledger's figures at
the record that raised it; a lost reply is sent again, and a power cut loses no event or data.
Layouts and their source: tests/drivers/test_sas_events.py, docs/protocols/sas.md."""

from __future__ import annotations

import threading

from drivers.sas.codec import EventReply, ExceptionReply, GeneralPoll, HostDecoder, encode_poll
from drivers.sas.events import (
    BillAcceptedEvent,
    GameEndedEvent,
    GameSelectedEvent,
    GameStartedEvent,
    parse_event,
)
from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.host import SasHost
from firmware.cabinet.sas_port import SasService, build_sas
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.games.registry import available
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.sas import rte
from firmware.sas.control import ControlPolls
from firmware.sas.exceptions import SETTING as QUEUE_SETTING
from firmware.sas.link import SasLink
from firmware.sas.responder import SasMachine
from firmware.sas.view import LedgerView
from tests.sas.helpers import ADDRESS, IDENTITY, NOW
from tests.sas.test_control_polls import Recorder
from tests.sas.test_meters import play_a_round

ON = "01 0E 01 45 D1"           # 0x0E 01 and 00 (golden frames of tests/sas/test_control_polls.py)
OFF = "01 0E 00 CC C0"
OTHER_MACHINE = bytes((0x80 | 2,))      # a general poll to machine 2: the implied ACK


class KeptReporting(Recorder):
    """The controls, with 0x0E kept in critical memory as the cabinet keeps it."""

    def __init__(self, ledger: Ledger) -> None:
        super().__init__()
        self.ledger = ledger

    def real_time_events(self, enabled: bool) -> None:
        self.ledger.store_setting(rte.SETTING, {"enabled": enabled})


def machine_on(ledger: Ledger) -> SasMachine:
    return SasMachine(ADDRESS, LedgerView(ledger, IDENTITY, clock=lambda: NOW),
                      polls=[ControlPolls(KeptReporting(ledger))])


def general(machine: SasMachine, *, real_time: bool = True) -> tuple[bytes, object]:
    """The wire of a general poll's reply and what a host with reporting on reads in it."""
    wire = machine.receive(encode_poll(GeneralPoll(ADDRESS)))
    host = HostDecoder(ADDRESS)
    host.real_time = real_time
    host.expect(GeneralPoll(ADDRESS))
    host.receive_data(wire)
    [event] = host.events()
    return wire, event


def next_event(machine: SasMachine) -> EventReply:
    """The next event, then the implied ACK (a poll to another machine)."""
    _wire, event = general(machine)
    machine.receive(OTHER_MACHINE)
    assert isinstance(event, EventReply), event
    return event


def test_0x0E_turns_event_responses_on_and_off(ledger):
    machine = machine_on(ledger)
    ledger.event("door_open", door="main")
    ledger.event("door_close", door="main")
    assert general(machine, real_time=False) == (bytes((X.SLOT_DOOR_OPENED,)), ExceptionReply(X.SLOT_DOOR_OPENED))
    assert machine.receive(bytes.fromhex(ON)) == bytes((ADDRESS,))          # ACK; and the implied ACK
    assert general(machine) == (bytes.fromhex("01 FF 12 8F 96"), EventReply(ADDRESS, X.SLOT_DOOR_CLOSED))
    machine.receive(OTHER_MACHINE)
    assert general(machine) == (bytes.fromhex("01 FF 00 1C A5"), EventReply(ADDRESS, 0))   # no activity
    assert machine.receive(bytes.fromhex(OFF)) == bytes((ADDRESS,))
    assert general(machine, real_time=False) == (b"\x00", ExceptionReply(0))


def test_events_carry_the_ledger_figures_of_the_record_that_raised_them(ledger):
    machine = machine_on(ledger)
    machine.receive(bytes.fromhex(ON))
    ledger.bill_in(2000)
    ledger.bill_in(2000)
    play_a_round(ledger)                                  # baccarat-war: 25 credits staked, 75 back
    ledger.event("game_selected", game="holdem-war")
    events = [next_event(machine) for _ in range(6)]
    assert [e.code for e in events] == [X.BILL_ACCEPTED, X.BILL_ACCEPTED, X.GAME_STARTED, X.GAME_ENDED,
                                        X.GAME_SELECTED, X.NO_ACTIVITY]
    bills = [parse_event(e.code, e.data) for e in events[:2]]
    assert bills == [BillAcceptedEvent(0, 0x04, 1), BillAcceptedEvent(0, 0x04, 2)]   # $20: bill code 04
    assert ledger.meters["bills_in_by_denom.2000"] == 2
    acct = IDENTITY.accounting_denom_cents
    started = parse_event(X.GAME_STARTED, events[2].data)
    assert started == GameStartedEvent(25, ledger.meters["coin_in"] // acct, 0x02, 0)   # 5-cent game: code 02
    ended = parse_event(X.GAME_ENDED, events[3].data)
    assert ended == GameEndedEvent(ledger.meters["coin_out"] // acct) == GameEndedEvent(75)
    assert parse_event(X.GAME_SELECTED, events[4].data) == GameSelectedEvent(available().index("holdem-war") + 1)


def test_an_event_keeps_the_meter_of_its_record_when_the_meters_move_on(tmp_path):
    state = tmp_path / "state"
    with Ledger.open(state, denomination=5) as ledger:
        machine = machine_on(ledger)
        machine.receive(bytes.fromhex(ON))
        for _ in range(3):
            ledger.bill_in(500)
        live = machine.terminal.exceptions.pending_events()
    with Ledger.open(state, denomination=5) as ledger:              # nothing kept: rebuilt from the log
        machine = machine_on(ledger)
        assert machine.terminal.exceptions.pending_events() == live
        counts = [parse_event(X.BILL_ACCEPTED, next_event(machine).data).count for _ in range(3)]
        assert counts == [1, 2, 3] and ledger.meters["bills_in_by_denom.500"] == 3


def test_a_lost_reply_is_sent_again_and_the_event_stays_until_acknowledged(ledger):
    machine = machine_on(ledger)
    machine.receive(bytes.fromhex(ON))
    ledger.bill_in(2000)
    first, event = general(machine)
    again, _ = general(machine)                           # the same poll again: the host lost it
    assert again == first and isinstance(event, EventReply) and event.code == X.BILL_ACCEPTED
    assert machine.terminal.exceptions.pending() == [X.BILL_20_ACCEPTED]
    machine.receive(OTHER_MACHINE)                        # implied ACK, applied at the next poll
    assert general(machine)[1] == EventReply(ADDRESS, 0)
    assert machine.terminal.exceptions.pending() == []


def test_a_priority_exception_is_its_code_alone(ledger):
    machine = machine_on(ledger)
    machine.receive(bytes.fromhex(ON))
    ledger.bill_in(500)
    ledger.ticket_out(500, "000000000000000002")
    assert general(machine)[0] == bytes.fromhex("01 FF 3D 7A 4F")        # golden: the ticket first


def test_a_power_cut_keeps_pending_events_with_their_data(tmp_path):
    state = tmp_path / "state"
    with Ledger.open(state, denomination=5) as ledger:
        machine = machine_on(ledger)
        machine.receive(bytes.fromhex(ON))
        ledger.bill_in(2000)
        ledger.bill_in(2000)
        play_a_round(ledger)
        before = machine.terminal.exceptions.pending_events()
        assert next_event(machine).data == before[0][1:]
        machine.receive(bytes.fromhex(ON))                          # the next poll: taken, queue kept
        ledger.bill_in(2000)                                        # read after the save: rebuilt
        before = machine.terminal.exceptions.pending_events()
    with Ledger.open(state, denomination=5) as ledger:              # power cut: critical memory only
        machine = machine_on(ledger)
        assert machine.terminal.exceptions.pending_events() == before
        assert len(before) == 4 and before[-1] == bytes.fromhex("4F 00 04 00 00 00 03")
        events = [next_event(machine) for _ in range(4)]            # reporting is still on
        assert [bytes((e.code,)) + e.data for e in events] == before


def test_a_queue_kept_before_events_opens_with_zero_data(tmp_path):
    state = tmp_path / "state"
    with Ledger.open(state, denomination=5) as ledger:
        ledger.store_setting(QUEUE_SETTING, {"cursor": ledger.rows + 1, "priority": [],
                                             "fifo": [X.SLOT_DOOR_OPENED, X.BILL_20_ACCEPTED, X.GAME_ENDED]})
    with Ledger.open(state, denomination=5) as ledger:
        queue = machine_on(ledger).terminal.exceptions
        assert queue.pending() == [X.SLOT_DOOR_OPENED, X.BILL_20_ACCEPTED, X.GAME_ENDED]
        assert queue.pending_events() == [b"\x11", bytes.fromhex("4F 00 00 00 00 00 00"),
                                          bytes.fromhex("7F 00 00 00 00")]


def test_the_terminal_reports_events_to_a_host_over_a_pty(tmp_path):
    cfg = Config.model_validate({"sas": {"enabled": True, "address": 3}})
    ledger = Ledger.open(tmp_path)
    terminal = Terminal(cfg, ledger, RngService.seeded(7), Devices(), VoucherBook(ledger, terminal_id="T1"),
                        sas=lambda t: SasService(t, SasLink(build_sas(t, cfg), t.ledger), "pty"))
    terminal.power_up()
    service = terminal.sas
    assert isinstance(service, SasService)
    runner = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.02}, name="terminal")
    service.open()
    runner.start()
    try:
        with SasHost(service.path, 3, timeout=5.0) as host:
            host.real_time_events(True)
            assert host.general_poll() == EventReply(3, X.AC_POWER_APPLIED)
            terminal.call("game", game="holdem-war")
            number = available().index("holdem-war") + 1
            assert host.general_poll() == EventReply(3, X.GAME_SELECTED, GameSelectedEvent(number).encode())
            host.real_time_events(False)
            assert host.general_poll() == X.NO_ACTIVITY
    finally:
        terminal.stop()
        runner.join(5)
        service.close()
        ledger.close()


def test_notes_recorded_in_one_batch_each_carry_their_own_count(ledger):
    machine = machine_on(ledger)
    machine.receive(bytes.fromhex(ON))
    with ledger.batch():                                   # the listeners hear both after both
        ledger.bill_in(1000)
        ledger.bill_in(1000)
    counts = [parse_event(X.BILL_ACCEPTED, next_event(machine).data).count for _ in range(2)]
    assert counts == [1, 2]
