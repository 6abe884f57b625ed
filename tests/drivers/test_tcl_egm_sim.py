"""``egm sim printer --pty``: the TCL simulator as a process, driven from its standard input,
printing a voucher for the real driver over the pty it prints."""

from __future__ import annotations

import datetime as dt

from drivers.tcl.driver import TclPrinter
from hal.events import DeviceOnline, TicketNotPrinted, TicketPrinted
from tests.drivers.sim_process import ask, egm_sim, pty_path, quit_sim
from tests.drivers.tickets import ticket

VOUCHER = ticket("GOLDEN STAR CASINO", ("1 MAIN STREET",), "EGM-0042",
                 dt.datetime(2025, 3, 14, 13, 45, 9), 2050, "123456789012345678", 42, 30)


def _outcome(dev: TclPrinter, timeout: float = 5.0):
    while (event := dev.next_event(timeout)) is not None:
        if isinstance(event, TicketPrinted | TicketNotPrinted):
            return event
    raise AssertionError("no outcome")


def test_a_voucher_through_the_simulator_process_and_the_real_driver():
    with egm_sim("printer", "--pty") as proc:
        path = pty_path(proc)
        with TclPrinter("printer", port=path, timeout=0.5, poll_interval=0.02) as dev:
            assert dev.next_event(2.0) == DeviceOnline("printer")
            dev.print_voucher(VOUCHER)
            assert _outcome(dev) == TicketPrinted("printer", VOUCHER.validation)
            assert ask(proc, "mid-ticket paper-out") == "ok"
            dev.print_voucher(VOUCHER)
            assert _outcome(dev) == TicketNotPrinted("printer", VOUCHER.validation,
                                                     "paper out mid-ticket")
        assert ask(proc, "printed") == "1"
        last = ask(proc, "last")
        assert last.startswith("123456789012345678 2050 GOLDEN STAR CASINO")
        assert "TWENTY DOLLARS AND 50 CENTS" in last
        assert ask(proc, "mid-ticket fire").startswith("error: mid-ticket")
        quit_sim(proc)
