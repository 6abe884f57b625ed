"""``egm sim bill-validator --protocol ssp --pty``: the SSP simulator as a process (eSSP when
``EGM_SIM_SSP_FIXED_KEY`` is set), driven from its standard input, talking to the real driver."""

from __future__ import annotations

import os
import select
import time

import pytest

from drivers.ssp.driver import SspValidator
from firmware.cli import main
from hal.events import NoteEscrowed, NoteStacked, TicketEscrowed, TicketStacked
from tests.drivers.events import wait_for
from tests.drivers.sim_process import egm_sim, line, lines, pty_path, send
from tests.drivers.ssp_frames import EXCHANGES

TEST_FIXED_KEY = "0F1E2D3C4B5A6978"          # a test key only


def test_a_20_note_through_the_essp_simulator_process_and_the_real_driver():
    env = dict(os.environ, EGM_SIM_SSP_FIXED_KEY=TEST_FIXED_KEY)
    with egm_sim("bill-validator", "--pty", "--protocol", "ssp", env=env) as proc:
        path = pty_path(proc)
        with SspValidator("validator", port=path, timeout=0.5, poll_interval=0.02,
                          encryption=True, fixed_key=TEST_FIXED_KEY) as dev:
            dev.enable([2000])
            send(proc, "encrypted\nnote 20\n")
            assert lines(proc, 2) == ["yes", "ok"]
            assert wait_for(dev, NoteEscrowed).value_cents == 2000
            dev.stack()
            assert wait_for(dev, NoteStacked).value_cents == 2000
        send(proc, "cashbox\nquit\n")
        assert line(proc) == "1"
        assert proc.wait(timeout=5) == 0


def test_a_ticket_through_the_simulator_process_and_the_real_driver():
    ticket = "001234567890123456"
    with egm_sim("bill-validator", "--pty", "--protocol", "ssp") as proc:
        path = pty_path(proc)
        with SspValidator("validator", port=path, timeout=0.5, poll_interval=0.02) as dev:
            dev.enable([2000], tickets=True)
            send(proc, f"ticket {ticket}\n")
            assert line(proc) == "ok"
            assert wait_for(dev, TicketEscrowed).barcode == ticket
            dev.stack()
            assert wait_for(dev, TicketStacked).barcode == ticket
        send(proc, "quit\n")
        assert proc.wait(timeout=5) == 0


def test_a_bad_fixed_key_is_a_usage_error(capsys, monkeypatch):
    monkeypatch.setenv("EGM_SIM_SSP_FIXED_KEY", "12")
    assert main(["sim", "bill-validator", "--pty", "--protocol", "ssp"]) == 2
    assert "16 hex digits" in capsys.readouterr().err


def _read_exactly(fd: int, n: int, timeout: float = 5.0) -> bytes:
    """``n`` bytes from ``fd`` (fewer if ``timeout`` passes first)."""
    out = b""
    deadline = time.monotonic() + timeout
    while len(out) < n and (left := deadline - time.monotonic()) > 0:
        if select.select([fd], [], [], left)[0]:
            out += os.read(fd, n - len(out))
    return out


@pytest.mark.parametrize("steps", EXCHANGES.values(), ids=EXCHANGES.keys())
def test_raw_bytes_after_sync_with_either_flag_get_the_right_replies(steps):
    """An independent host on the pty, raw bytes only (the acceptance of the issue): SYNC with the
    flag set or clear, then GET_SERIAL_NUMBER, SETUP_REQUEST and POLL each get their own reply; the
    POLL sent again after its reply was lost gets the same reply (SLAVE_RESET again: not acted on
    twice), and the next POLL reports only DISABLED."""
    with egm_sim("bill-validator", "--pty", "--protocol", "ssp") as proc:
        fd = os.open(pty_path(proc), os.O_RDWR | os.O_NOCTTY)
        try:
            for host, reply, _ in steps:
                expected = bytes.fromhex(reply)
                os.write(fd, bytes.fromhex(host))
                assert _read_exactly(fd, len(expected)) == expected, host
            assert _read_exactly(fd, 1, timeout=0.2) == b""        # one reply per command
        finally:
            os.close(fd)
        send(proc, "quit\n")
        assert proc.wait(timeout=5) == 0
