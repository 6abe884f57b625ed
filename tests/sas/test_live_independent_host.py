"""A SAS host not written for this product, sas-comm-py 0.1.0 (``tests/sas/sas_comm_py_host.py``),
against the running terminal (``egm run --sim --headless --sas pty``, not the test bridge): it reads
the identity (0x54, 0x1F), the meters (equal to ``egm meters --json`` in the accounting
denomination) and the exceptions of a door opened with ``egm simctl``.

The library never empties its input and takes any byte for a reply: the machine chirps while no
host polls it, so the port's input is emptied (pyserial's ``reset_input_buffer``, on the library's
own port) before each poll, as a host on a shared loop would after its idle time.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drivers.sas.exceptions import ExceptionCode as X
from firmware.cabinet.sas_info import SAS_GAME_IDS
from tests.sas.helpers import wait_for
from tests.sas.live import DENOM_CENTS, Running, autoplay, meters, reported_until, running
from tests.sas.sas_comm_py_host import SasCommPyHost, text


@pytest.fixture
def live(tmp_path) -> Iterator[tuple[Running, SasCommPyHost]]:
    """The terminal after 10 autoplay rounds and a $5 note, and the library's host on its pty."""
    autoplay(tmp_path, 10)
    with running(tmp_path) as terminal:
        before = terminal.control("status")["credits_cents"]
        terminal.sim_until("note", "5")
        wait_for(lambda: terminal.control("status")["credits_cents"] == before + 500, timeout=20)
        machine = SasCommPyHost(terminal.sas, address=1)      # its constructor reads 0x54 at once
        try:
            yield terminal, machine
        finally:
            machine.port.close()


def exceptions(machine: SasCommPyHost) -> list[int]:
    """General polls (each asked twice: a retry gets the same code) until the machine is quiet;
    a long poll after each acknowledges it (implied ACK)."""
    seen = []
    for _ in range(40):
        machine.port.reset_input_buffer()
        code = machine.general_poll()
        assert machine.general_poll() == code                  # not acknowledged yet: the same again
        machine.write_type_R(0x1A, length_to_read=4)
        if code == X.NO_ACTIVITY:
            return seen
        seen.append(code)
    raise AssertionError(f"still reporting after 40 polls: {seen}")


def test_it_reads_the_identity_of_the_running_terminal(live):
    terminal, machine = live
    assert machine.serial_number, "no valid 0x54 reply to the constructor's poll"
    length, *body = machine.serial_number.data
    serial = terminal.printed[0].split()[2]                     # "egm terminal EGM-0001 at ..."
    assert int(length, 16) == len(body) and text(body) == "602" + serial
    machine.port.reset_input_buffer()
    info = machine.write_type_R(0x1F, length_to_read=20)
    game_id = SAS_GAME_IDS[terminal.control("status")["game"]]
    assert text(info.data[0:2]) == game_id and int(info.data[5], 16) == 0x02     # 5-cent credits
    assert text(info.data[10:16]).startswith(game_id) and text(info.data[16:20]).isdigit()


def test_it_reads_the_meters_egm_meters_shows(live, tmp_path):
    terminal, machine = live
    read = {}
    for command, length in ((0x10, 4), (0x11, 4), (0x12, 4), (0x1A, 4), (0x1C, 32), (0x1E, 24), (0x20, 4)):
        machine.port.reset_input_buffer()
        read[command] = machine.meters(command, length)
    terminal.stop()
    shown = meters(tmp_path / "state")
    m = shown["meters"]
    assert m["games_played"] == 10 and m["bills_in_by_denom"]["500"] >= 1
    assert read[0x10] == [(m["handpay_cancelled_credits"] + m["ticket_out"] + m["transfers_out"]) // DENOM_CENTS]
    assert read[0x11] == [m["coin_in"] // DENOM_CENTS] and read[0x12] == [m["coin_out"] // DENOM_CENTS]
    assert read[0x1A] == [shown["credits"] // DENOM_CENTS] and shown["credits"] > 0
    assert read[0x1C] == [m["coin_in"] // DENOM_CENTS, m["coin_out"] // DENOM_CENTS,
                          (m["bills_in"] + m["ticket_in"]) // DENOM_CENTS, m["jackpot"] // DENOM_CENTS,
                          m["games_played"], m["games_won"], m["door_open.main"], m["power_reset"]]
    by_denom = m["bills_in_by_denom"]
    assert read[0x1E] == [by_denom.get(str(cents), 0) for cents in (100, 500, 1000, 2000, 5000, 10000)]
    assert read[0x20] == [m["bills_in"] // 100]


def test_it_reads_the_exceptions_of_a_door_opened_with_simctl(live):
    terminal, machine = live
    assert X.AC_POWER_APPLIED in exceptions(machine)
    terminal.sim("door", "open", "main")
    terminal.sim("door", "close", "main")
    assert reported_until(lambda: exceptions(machine), X.SLOT_DOOR_CLOSED) == [X.SLOT_DOOR_OPENED,
                                                                             X.SLOT_DOOR_CLOSED]
