"""The real TCL driver against the simulated printer over a real pty, end to end.

Every test here checks that it leaves no thread and no file descriptor behind. The contract class
at the bottom also runs against a real printer when ``EGM_HW_PRINTER`` names its port.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator

import pytest

from drivers.tcl.codec import Flag
from drivers.tcl.driver import TclPrinter
from drivers.tcl.receipt import RECEIPT_TEMPLATE
from drivers.tcl.voucher import TEMPLATE, itf_decode, texts
from hal import registry
from hal.base import Lifecycle
from hal.devices.ticket import Receipt, Ticket
from hal.errors import BackendError, DeviceGoneError, DeviceInitError, DeviceOperationError
from hal.events import (
    DeviceEvent,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    FaultKind,
    PaperLow,
    TicketNotPrinted,
    TicketPrinted,
)
from sim_hardware.pty_link import run_on_pty
from sim_hardware.tcl_printer import MidTicket, TclPrinterSimulator
from tests.drivers.events import collect
from tests.drivers.hardware import Technician, contract_params
from tests.drivers.interface import assert_a_missing_member_fails, assert_implements
from tests.drivers.leaks import open_fds
from tests.drivers.tickets import VOUCHER, replace

NAME = "printer"
HW_PORT = os.environ.get("EGM_HW_PRINTER", "")
#: Reply time-out of the driver under test: generous, the test machine is shared.
REPLY_S = 0.5
SECOND = replace(VOUCHER, validation="000000000000000042", sequence=43,
                             amount_cents=100_000_00 - 1)


def _is_outcome(event: DeviceEvent) -> bool:
    return isinstance(event, TicketPrinted | TicketNotPrinted)


pytestmark = pytest.mark.usefixtures("no_leaks")


# --- rig ----------------------------------------------------------------------------------------
@pytest.fixture
def sim() -> TclPrinterSimulator:
    return TclPrinterSimulator()


@pytest.fixture
def printer(link) -> Iterator[TclPrinter]:
    dev = TclPrinter(NAME, port=link.path, timeout=REPLY_S, poll_interval=0.01)
    yield dev
    dev.close()


@pytest.fixture
def ready(printer) -> TclPrinter:
    printer.open()
    assert printer.next_event(1.0) == DeviceOnline(NAME)
    return printer


def quiet(dev: TclPrinter, sim: TclPrinterSimulator, polls: int = 8) -> list[DeviceEvent]:
    """Let the driver poll ``polls`` more times; every event queued meanwhile."""
    start = sim.received["ENQ"]
    deadline = time.monotonic() + 3.0
    while sim.received["ENQ"] < start + polls:
        assert time.monotonic() < deadline, "the driver stopped polling"
        time.sleep(0.005)
    return dev.drain_events()


def print_ok(dev: TclPrinter, sim: TclPrinterSimulator, voucher: Ticket = VOUCHER) -> None:
    dev.print_voucher(voucher)
    assert collect(dev, _is_outcome) == [TicketPrinted(NAME, voucher.validation)]
    assert sim.printed[-1].voucher() == voucher


# --- open ---------------------------------------------------------------------------------------
def test_open_defines_the_template_and_clears_the_power_up(printer, sim):
    assert sim.status().flags & Flag.RESET
    printer.open()
    assert printer.next_event(1.0) == DeviceOnline(NAME)
    assert sim.templates == {TEMPLATE.id: TEMPLATE, RECEIPT_TEMPLATE.id: RECEIPT_TEMPLATE}
    assert len(sim.regions) == len(TEMPLATE.regions) + len(RECEIPT_TEMPLATE.regions)
    assert sim.status().flags == Flag.TOP_OF_FORM
    assert printer.poll().flags == Flag.TOP_OF_FORM
    assert quiet(printer, sim) == []


def test_open_close_cycles_leave_nothing_behind(no_leaks, sim):
    before = len(open_fds())
    for _ in range(3):
        with run_on_pty(sim) as link, TclPrinter(NAME, port=link.path, timeout=REPLY_S,
                                                 poll_interval=0.01) as dev:
            assert dev.poll().flags & Flag.TOP_OF_FORM
            assert any(t.name == f"tcl-poll-{NAME}" for t in threading.enumerate())
    assert len(open_fds()) == before


# --- text receipts ------------------------------------------------------------------------------
RECEIPT = Receipt("receipt:T1", ("MAIN STREET CASINO", "", "TRANSFER TO GAME", "CASH IN $25.00"))


def test_a_receipt_prints_its_lines_and_is_confirmed_by_its_key(ready, sim):
    ready.print_receipt(RECEIPT)
    assert ready.printing == RECEIPT.key
    assert collect(ready, _is_outcome) == [TicketPrinted(NAME, RECEIPT.key)]
    assert sim.printed[-1].template == RECEIPT_TEMPLATE.id
    assert sim.printed[-1].receipt() == RECEIPT.lines
    with pytest.raises(ValueError, match="barcode"):
        sim.printed[-1].voucher()
    print_ok(ready, sim)                     # and vouchers still print after it


def test_a_receipt_without_paper_is_not_printed(ready, sim):
    sim.paper_out()
    quiet(ready, sim)
    ready.print_receipt(RECEIPT)
    [outcome] = collect(ready, _is_outcome)
    assert isinstance(outcome, TicketNotPrinted) and outcome.validation == RECEIPT.key
    assert "paper" in outcome.reason and sim.printed == []


# --- the acceptance -----------------------------------------------------------------------------
@pytest.mark.parametrize("repeat", [False, True], ids=["clean", "every-reply-repeated"])
def test_a_printed_voucher_is_reconstructed_with_every_field_and_a_decodable_barcode(
        ready, sim, repeat):
    sim.repeat_replies(repeat)
    ready.print_voucher(VOUCHER)
    assert ready.printing == VOUCHER.validation
    assert collect(ready, _is_outcome) == [TicketPrinted(NAME, VOUCHER.validation)]
    assert ready.printing is None
    (ticket,) = sim.printed
    assert ticket.voucher() == VOUCHER                     # venue ... type, every field
    assert itf_decode(ticket.barcodes["5"]) == VOUCHER.validation
    assert ticket.texts["A"] == "TWENTY DOLLARS AND 50 CENTS"
    assert quiet(ready, sim) == []                          # confirmed once, however long we poll
    print_ok(ready, sim, SECOND)
    assert len(sim.printed) == 2


def test_a_paper_out_mid_ticket_is_reported_not_printed(ready, sim):
    sim.fail_mid_ticket(MidTicket.PAPER_OUT)
    ready.print_voucher(VOUCHER)
    events = collect(ready, _is_outcome)
    assert events[-1] == TicketNotPrinted(NAME, VOUCHER.validation, "paper out mid-ticket")
    assert DeviceFault(NAME, FaultKind.PAPER_OUT, "paper out") in events
    assert sim.printed == [] and len(sim.partial) == 1
    assert [e for e in quiet(ready, sim) if _is_outcome(e)] == []
    sim.load_paper()
    assert collect(ready, lambda e: isinstance(e, DeviceFault) and e.cleared)[-1] == DeviceFault(
        NAME, FaultKind.PAPER_OUT, "paper out", cleared=True)
    print_ok(ready, sim, SECOND)


@pytest.mark.parametrize(("fault", "kind", "detail", "fix"), [
    (MidTicket.JAM, FaultKind.JAM, "paper jam", lambda s: s.clear_jam()),
    (MidTicket.CHASSIS_OPEN, FaultKind.CHASSIS_OPEN, "chassis open", lambda s: s.close_chassis()),
], ids=["jam", "chassis-open"])
def test_a_jam_or_open_chassis_mid_ticket_is_not_printed(ready, sim, fault, kind, detail, fix):
    sim.fail_mid_ticket(fault)
    ready.print_voucher(VOUCHER)
    events = collect(ready, _is_outcome)
    assert events == [DeviceFault(NAME, kind, detail),
                      TicketNotPrinted(NAME, VOUCHER.validation, f"{detail} mid-ticket")]
    fix(sim)
    assert collect(ready, lambda e: isinstance(e, DeviceFault)) == [
        DeviceFault(NAME, kind, detail, cleared=True)]
    print_ok(ready, sim)


@pytest.mark.parametrize(("inject", "reason"), [
    (lambda s: s.paper_out(), "paper out"),
    (lambda s: s.jam(), "paper jam"),
    (lambda s: s.open_chassis(), "chassis open"),
], ids=["paper-out", "jam", "chassis-open"])
def test_a_ticket_is_not_even_sent_to_a_stopped_printer(ready, sim, inject, reason):
    inject(sim)
    ready.print_voucher(VOUCHER)
    events = ready.drain_events()                 # the outcome is queued before it returns
    assert events[-1] == TicketNotPrinted(NAME, VOUCHER.validation, reason)
    assert [e.detail for e in events if isinstance(e, DeviceFault)] == [reason]
    assert sim.received["P"] == 0 and ready.printing is None


def test_a_power_cut_mid_print_is_not_printed_and_the_template_is_sent_again(ready, sim):
    sim.fail_mid_ticket(MidTicket.POWER_CUT, dark_polls=1)
    ready.print_voucher(VOUCHER)
    assert collect(ready, _is_outcome) == [
        TicketNotPrinted(NAME, VOUCHER.validation, "power cut mid-ticket")]
    assert sim.printed == [] and len(sim.partial) == 1
    deadline = time.monotonic() + 3
    while ready.counters["redefined"] < 1 or sim.status().flags != Flag.TOP_OF_FORM:
        assert time.monotonic() < deadline, sim.status()
        time.sleep(0.01)
    assert sim.templates == {TEMPLATE.id: TEMPLATE, RECEIPT_TEMPLATE.id: RECEIPT_TEMPLATE}
    print_ok(ready, sim, SECOND)


def test_a_power_cycle_while_idle_is_noticed_and_repaired(ready, sim):
    sim.power_off()
    sim.power_on()
    deadline = time.monotonic() + 3
    while ready.counters["redefined"] < 1:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert quiet(ready, sim) == []
    print_ok(ready, sim)


def test_paper_low_is_reported_and_cleared(ready, sim):
    sim.paper_low()
    assert collect(ready, lambda e: isinstance(e, PaperLow)) == [PaperLow(NAME, True)]
    print_ok(ready, sim)                         # low is not out: it still prints
    sim.load_paper()
    assert collect(ready, lambda e: isinstance(e, PaperLow)) == [PaperLow(NAME, False)]


def test_corrupt_and_dropped_replies_mid_ticket_do_not_change_the_outcome(ready, sim):
    ready.print_voucher(VOUCHER)
    sim.corrupt_next_reply()
    sim.drop_next_reply()
    assert collect(ready, _is_outcome) == [TicketPrinted(NAME, VOUCHER.validation)]
    assert ready.counters["damaged"] >= 1 and ready.counters["timeouts"] >= 1
    assert len(sim.printed) == 1


def test_a_lost_print_command_is_not_printed_even_after_a_confirmed_ticket(ready, sim):
    print_ok(ready, sim)                          # leaves VALIDATION_DONE set in the printer
    sim.lose_next("P")
    ready.print_voucher(SECOND)
    events = collect(ready, _is_outcome)
    assert events == [TicketNotPrinted(NAME, SECOND.validation,
                                       f"the printer did not start the job within {REPLY_S:g} s")]
    assert sim.received["C"] >= 2                 # the old VALIDATION_DONE was cleared first
    assert len(sim.printed) == 1


def test_one_ticket_at_a_time(ready, sim):
    sim.print_polls = 50
    ready.print_voucher(VOUCHER)
    with pytest.raises(DeviceOperationError, match="still printing"):
        ready.print_voucher(SECOND)
    with pytest.raises(TypeError):
        ready.print_voucher("ticket")


def test_closing_with_a_ticket_pending_reports_it_not_printed(ready, sim):
    sim.print_polls = 50
    ready.print_voucher(VOUCHER)
    ready.close()
    assert ready.drain_events()[-1] == TicketNotPrinted(
        NAME, VOUCHER.validation, "closed before the printer confirmed it")
    assert ready.printing is None


def test_a_printer_that_dies_mid_ticket_is_lost_and_the_ticket_not_printed(ready, sim):
    sim.print_polls = 50
    ready.print_voucher(VOUCHER)
    deadline = time.monotonic() + 3
    while not sim.busy:
        assert time.monotonic() < deadline
        time.sleep(0.005)
    sim.power_off()
    events = collect(ready, lambda e: isinstance(e, DeviceOffline))
    assert events == [
        TicketNotPrinted(NAME, VOUCHER.validation,
                         "printer lost mid-ticket (no answer to 3 status requests in a row)"),
        DeviceOffline(NAME, "no answer to 3 status requests in a row")]
    with pytest.raises(DeviceGoneError):
        ready.print_voucher(SECOND)
    sim.power_on()
    sim.print_polls = 2
    ready.reopen()
    assert ready.next_event(1.0) == DeviceOnline(NAME)
    print_ok(ready, sim, SECOND)


def test_an_unplugged_printer_is_reported_offline(ready, sim):
    sim.unplug()
    events = collect(ready, lambda e: isinstance(e, DeviceOffline))
    assert events[-1].reason.startswith("port error")
    assert ready.lifecycle is Lifecycle.GONE and sim.unplugged
    ready.close()
    assert ready.lifecycle is Lifecycle.CLOSED


def test_open_fails_cleanly(link, sim, tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        TclPrinter(NAME, port=str(tmp_path / "ttyNONE"), timeout=0.1).open()
    sim.power_off()
    dev = TclPrinter(NAME, port=link.path, timeout=0.1, poll_interval=0.01)
    with pytest.raises(DeviceInitError, match="no answer to ENQ"):
        dev.open()
    assert dev.lifecycle is Lifecycle.CLOSED and dev.drain_events() == []


def test_the_registry_builds_it_from_settings(link):
    dev = registry.create("printer", "tcl", NAME,
                          {"port": link.path, "timeout": REPLY_S, "poll_interval": 0.01})
    assert isinstance(dev, TclPrinter) and not dev.is_open and dev.device_class == "printer"
    with pytest.raises(BackendError, match="settings are port, timeout, poll_interval"):
        registry.create("printer", "tcl", NAME, {"port": link.path, "baud": 9600})
    with pytest.raises(BackendError, match="poll_interval must be positive"):
        registry.create("printer", "tcl", NAME, {"port": link.path, "poll_interval": 0})


# --- the contract: simulator always, real hardware when attached ---------------------------------
class SimulatedWorld:
    wait_s = 3.0

    def __init__(self, sim: TclPrinterSimulator) -> None:
        self.sim = sim

    def check(self, voucher: Ticket) -> None:
        assert self.sim.printed[-1].voucher() == voucher


class HardwareWorld(Technician):
    """A technician at a real printer, asked on the terminal to check the ticket."""

    wait_s = 30.0

    def check(self, voucher: Ticket) -> None:
        self._say(f"check the ticket: {texts(voucher)}")


@pytest.fixture(params=contract_params(
    HW_PORT, "no ticket printer hardware attached: set EGM_HW_PRINTER=<port> to run this contract "
             "on a real one"))
def contract(request, no_leaks) -> Iterator[tuple[TclPrinter, SimulatedWorld | HardwareWorld]]:
    if request.param == "hardware":
        with TclPrinter(NAME, port=HW_PORT, timeout=1.0, poll_interval=0.2) as dev:
            yield dev, HardwareWorld(request)
        return
    sim = TclPrinterSimulator()
    with run_on_pty(sim) as link, TclPrinter(NAME, port=link.path, timeout=REPLY_S,
                                             poll_interval=0.01) as dev:
        yield dev, SimulatedWorld(sim)


class TestPrinterContract:
    """What the cabinet relies on from any ticket printer backend."""

    def test_it_and_every_registered_printer_implement_the_interface(self, contract):
        dev, _ = contract
        assert_implements(dev, "printer")

    def test_a_printer_missing_a_member_of_the_interface_is_refused(self, monkeypatch):
        assert_a_missing_member_fails("printer", monkeypatch)

    def test_opens_online_and_ready(self, contract):
        dev, world = contract
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        flags = dev.poll().flags
        assert not flags & (Flag.BUSY | Flag.RESET | Flag.PAPER_OUT | Flag.JAM)

    def test_a_voucher_is_confirmed_printed_exactly_once(self, contract):
        dev, world = contract
        dev.print_voucher(VOUCHER)
        assert collect(dev, _is_outcome, world.wait_s)[-1:] == [
            TicketPrinted(NAME, VOUCHER.validation)]
        world.check(VOUCHER)
        time.sleep(10 * dev.poll_interval)
        assert not any(_is_outcome(e) for e in dev.drain_events())

    def test_one_ticket_at_a_time(self, contract):
        dev, world = contract
        dev.print_voucher(VOUCHER)
        if dev.printing is not None:
            with pytest.raises(DeviceOperationError, match="still printing"):
                dev.print_voucher(SECOND)
        collect(dev, _is_outcome, world.wait_s)
