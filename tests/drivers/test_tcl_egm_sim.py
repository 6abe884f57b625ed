"""``egm sim printer --pty``: the TCL simulator as a process, driven from its standard input,
printing a voucher for the real driver over the pty it prints."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

from drivers.tcl.driver import TclPrinter
from drivers.tcl.voucher import Voucher
from hal.events import DeviceOnline, TicketNotPrinted, TicketPrinted

VOUCHER = Voucher("GOLDEN STAR CASINO", ("1 MAIN STREET",), "EGM-0042",
                  dt.datetime(2025, 3, 14, 13, 45, 9), 2050, "123456789012345678", 42, 30)


def _outcome(dev: TclPrinter, timeout: float = 5.0):
    while (event := dev.next_event(timeout)) is not None:
        if isinstance(event, TicketPrinted | TicketNotPrinted):
            return event
    raise AssertionError("no outcome")


def _ask(proc: subprocess.Popen, line: str) -> str:
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def test_a_voucher_through_the_simulator_process_and_the_real_driver():
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "sim", "printer", "--pty"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)
    try:
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/pts/"), proc.stderr.read()
        with TclPrinter("printer", port=path, timeout=0.5, poll_interval=0.02) as dev:
            assert dev.next_event(2.0) == DeviceOnline("printer")
            dev.print_voucher(VOUCHER)
            assert _outcome(dev) == TicketPrinted("printer", VOUCHER.validation)
            assert _ask(proc, "mid-ticket paper-out") == "ok"
            dev.print_voucher(VOUCHER)
            assert _outcome(dev) == TicketNotPrinted("printer", VOUCHER.validation,
                                                     "paper out mid-ticket")
        assert _ask(proc, "printed") == "1"
        last = _ask(proc, "last")
        assert last.startswith("123456789012345678 2050 GOLDEN STAR CASINO")
        assert "TWENTY DOLLARS AND 50 CENTS" in last
        assert _ask(proc, "mid-ticket fire").startswith("error: mid-ticket")
        assert _ask(proc, "quit") == "bye"
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()
