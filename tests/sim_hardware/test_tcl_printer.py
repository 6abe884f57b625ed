"""The simulated TCL printer, driven through the host role of the codec (no pty)."""

from __future__ import annotations

import pytest

from drivers.codec import Garbage, Role
from drivers.tcl.codec import (
    ClearErrors,
    DefineRegion,
    DefineTemplate,
    Flag,
    FormFeed,
    Print,
    Region,
    RegionKind,
    StatusRecord,
    StatusRequest,
    TclCodec,
    Template,
)
from drivers.tcl.voucher import REGIONS, TEMPLATE, fields, itf_decode, itf_encode
from hal.devices.ticket import Ticket
from sim_hardware.tcl_printer import MidTicket, TclPrinterSimulator
from tests.drivers.tickets import VOUCHER

IDLE = Flag.TOP_OF_FORM
DONE = Flag.TOP_OF_FORM | Flag.VALIDATION_DONE


class Host:
    """The terminal's end, sans-I/O."""

    def __init__(self, sim: TclPrinterSimulator) -> None:
        self.sim = sim
        self.codec = TclCodec(Role.HOST)

    def raw(self, data: bytes) -> list:
        self.codec.receive_data(b"".join(self.sim.feed(data)))
        return self.codec.events()

    def send(self, *messages) -> list:
        return self.raw(b"".join(self.codec.send(m) for m in messages))

    def poll(self) -> Flag:
        replies = self.send(StatusRequest())
        assert len(replies) == 1 and isinstance(replies[0], StatusRecord), replies
        return replies[0].flags

    def polls(self, n: int) -> list[Flag]:
        return [self.poll() for _ in range(n)]

    def define(self) -> None:
        self.send(*(DefineRegion(r) for r in REGIONS), DefineTemplate(TEMPLATE), ClearErrors())
        assert self.poll() == IDLE

    def print(self, voucher: Ticket = VOUCHER) -> None:
        assert self.send(Print(TEMPLATE.id, 1, fields(voucher))) == []


@pytest.fixture
def sim() -> TclPrinterSimulator:
    return TclPrinterSimulator()


@pytest.fixture
def host(sim) -> Host:
    h = Host(sim)
    h.define()
    return h


def test_power_up_reports_reset_until_cleared_and_keeps_nothing(sim):
    host = Host(sim)
    assert host.poll() == Flag.RESET | Flag.TOP_OF_FORM
    assert sim.templates == {} and sim.regions == {}
    host.print()
    assert host.poll() & Flag.COMMAND_ERROR and not sim.busy       # refused: not cleared yet
    host.send(ClearErrors())
    assert host.poll() == IDLE
    assert host.raw(b"\x05") == [StatusRecord(IDLE, "EGMTCL01")]
    assert host.sim.feed(b"\x05") == [b"*S|0|EGMTCL01|@|@|@|@|D|*"]   # top of form: F5 bit 2
    assert sim.received["ENQ"] == 5 and sim.received["C"] == 1


def test_a_voucher_prints_in_steps_and_reads_back_with_every_field(host, sim):
    host.print()
    assert host.polls(3) == [Flag.BUSY, Flag.BUSY, DONE]
    assert host.poll() == DONE                           # latched until the next job
    (ticket,) = sim.printed
    assert ticket.voucher() == VOUCHER
    assert ticket.texts["A"] == "TWENTY DOLLARS AND 50 CENTS"
    assert ticket.barcodes["5"] == itf_encode(VOUCHER.validation)
    assert itf_decode(ticket.barcodes["5"]) == VOUCHER.validation
    assert ticket.regions["5"].kind is RegionKind.BARCODE_I2OF5
    host.print()
    assert host.poll() == Flag.BUSY                      # a new job clears VALIDATION_DONE
    host.polls(2)
    assert len(sim.printed) == 2


def test_it_renders_from_the_definitions_it_received_not_the_drivers():
    sim = TclPrinterSimulator(print_polls=3)
    host = Host(sim)
    host.send(DefineRegion(Region("X", 0, 0, 400, 100, kind=RegionKind.BARCODE_I2OF5, length=4)),
              DefineRegion(Region("Y", 0, 0, 400, 100, length=5)),
              DefineTemplate(Template("7", 100, 400, ("Y", "X"))), ClearErrors())
    host.send(Print("7", 2, ("HELLO", "1234")))
    assert host.polls(4) == [Flag.BUSY] * 3 + [DONE]
    assert [(t.template, t.texts, t.barcode_digits("X")) for t in sim.printed] == [
        ("7", {"Y": "HELLO"}, "1234")] * 2
    with pytest.raises(ValueError):
        sim.printed[0].voucher()


@pytest.mark.parametrize(("fields", "flag"), [
    (("HELLO!", "1234"), Flag.DATA_ERROR),             # too long for region Y
    (("HELLO", "123"), Flag.DATA_ERROR),                # odd digit count
    (("HELLO", "12a4"), Flag.DATA_ERROR),
    (("HELLO",), Flag.DATA_ERROR),                       # too few fields
])
def test_a_job_that_does_not_fit_is_refused(fields, flag):
    sim = TclPrinterSimulator()
    host = Host(sim)
    host.send(DefineRegion(Region("X", 0, 0, 400, 100, kind=RegionKind.BARCODE_I2OF5, length=4)),
              DefineRegion(Region("Y", 0, 0, 400, 100, length=5)),
              DefineTemplate(Template("7", 100, 400, ("Y", "X"))), ClearErrors())
    host.send(Print("7", 1, fields))
    assert host.poll() == IDLE | flag and not sim.busy
    host.send(ClearErrors())
    assert host.poll() == IDLE


def test_undefined_templates_and_regions_and_unreadable_commands_latch_errors(host, sim):
    host.send(Print("9", 1, ()))
    assert host.poll() == IDLE | Flag.LIBRARY_REF_ERROR
    host.send(DefineTemplate(Template("8", 10, 10, ("Q",))))
    assert host.poll() & Flag.LIBRARY_LOAD_ERROR and "8" not in sim.templates
    host.raw(b"^Z|^")
    assert host.poll() & Flag.COMMAND_ERROR and sim.garbage
    host.send(ClearErrors())
    assert host.poll() == IDLE


def test_paper_supply_runs_low_then_out():
    sim = TclPrinterSimulator(paper=3, low_at=2)
    host = Host(sim)
    host.define()
    host.print()
    assert host.polls(3)[-1] == DONE | Flag.PAPER_LOW
    host.print()
    host.polls(3)
    host.print()
    assert host.polls(3)[-1] == DONE | Flag.PAPER_LOW | Flag.PAPER_OUT
    host.print()
    assert host.poll() & Flag.COMMAND_ERROR and len(sim.printed) == 3
    sim.load_paper()
    host.send(ClearErrors())
    assert host.poll() == IDLE


@pytest.mark.parametrize(("inject", "flag", "clear"), [
    (lambda s: s.paper_out(), Flag.PAPER_OUT | Flag.PAPER_LOW, lambda s: s.load_paper()),
    (lambda s: s.jam(), Flag.JAM, lambda s: s.clear_jam()),
    (lambda s: s.open_chassis(), Flag.CHASSIS_OPEN, lambda s: s.close_chassis()),
], ids=["paper-out", "jam", "chassis-open"])
def test_a_stopping_condition_refuses_prints_until_cleared(host, sim, inject, flag, clear):
    inject(sim)
    assert host.poll() == IDLE | flag
    host.print()
    assert host.poll() == IDLE | flag | Flag.COMMAND_ERROR and not sim.printed
    clear(sim)
    host.send(ClearErrors(), FormFeed())
    assert host.poll() == IDLE and sim.feeds == 1


@pytest.mark.parametrize("fault", [MidTicket.PAPER_OUT, MidTicket.JAM, MidTicket.CHASSIS_OPEN])
def test_a_fault_mid_ticket_stops_before_the_validation_number(host, sim, fault):
    sim.fail_mid_ticket(fault)
    host.print()
    flags = host.polls(2)
    assert flags[0] == Flag.BUSY
    assert not flags[1] & (Flag.BUSY | Flag.VALIDATION_DONE | Flag.TOP_OF_FORM)
    assert flags[1] & {MidTicket.PAPER_OUT: Flag.PAPER_OUT, MidTicket.JAM: Flag.JAM,
                       MidTicket.CHASSIS_OPEN: Flag.CHASSIS_OPEN}[fault]
    assert sim.printed == []
    (partial,) = sim.partial
    assert not partial.complete and partial.barcodes == {} and "4" not in partial.texts
    assert partial.texts["0"] == VOUCHER.venue
    with pytest.raises(ValueError, match="stopped mid-print"):
        partial.voucher()


def test_jamming_a_running_job_stops_it(host, sim):
    host.print()
    assert host.poll() == Flag.BUSY
    sim.jam()
    assert host.poll() == Flag.JAM and len(sim.partial) == 1


def test_a_power_cut_mid_print_goes_dark_then_powers_up_without_definitions(host, sim):
    sim.fail_mid_ticket(MidTicket.POWER_CUT, dark_polls=2)
    host.print()
    assert host.poll() == Flag.BUSY
    assert host.send(StatusRequest()) == []              # the cut: no record for this one
    assert not sim.powered
    assert host.send(StatusRequest()) == []              # dark 2: power comes back
    assert host.poll() == Flag.RESET | Flag.TOP_OF_FORM
    assert sim.templates == {} and sim.printed == [] and len(sim.partial) == 1
    with pytest.raises(ValueError):
        sim.fail_mid_ticket(MidTicket.POWER_CUT, dark_polls=0)


def test_power_off_and_on_by_hand(host, sim):
    sim.power_off()
    assert host.send(StatusRequest()) == [] and host.send(StatusRequest()) == []
    sim.power_on()
    assert host.poll() == Flag.RESET | Flag.TOP_OF_FORM


def test_wire_faults(host, sim):
    sim.corrupt_next_reply()
    events = host.send(StatusRequest())
    assert len(events) == 1 and events[0].reason == "malformed status record"
    sim.drop_next_reply()
    assert host.send(StatusRequest()) == []
    sim.repeat_replies()
    # The damaged record's closing '*' was left waiting; it is skipped as noise now.
    assert host.send(StatusRequest()) == [Garbage(b"*", "bytes before '*'"),
                                          StatusRecord(IDLE), StatusRecord(IDLE)]
    sim.repeat_replies(False)
    sim.lose_next("P")
    host.print()
    assert host.poll() == IDLE and not sim.busy and sim.received["P"] == 0
    with pytest.raises(ValueError):
        sim.lose_next("X")
    sim.unplug()
    assert sim.feed(b"\x05") == []


def test_bad_settings():
    with pytest.raises(ValueError):
        TclPrinterSimulator(print_polls=1)
    with pytest.raises(ValueError):
        TclPrinterSimulator(version="x")
