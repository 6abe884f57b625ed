"""A SAS host not written for this product, sas-comm-py 0.1.0 (PyPI), reads our machine over a pty:
its identity, its meters (equal to the ledger's in the accounting denomination) and its exceptions.

The library frames the polls and checks the replies itself (``tests/sas/sas_comm_py_host.py`` adds
only what 0.1.0 lacks); the machine is a ``SasMachine`` over a real ledger behind a pty
(``tests/sas/pty_bridge.py``). Each reply costs the library about 0.1 s (it sleeps after the
address byte), so the file takes a few seconds.
"""

from __future__ import annotations

import datetime as dt

import pytest

from drivers.sas.exceptions import ExceptionCode as X
from firmware.ledger.ledger import Ledger
from tests.sas.helpers import ADDRESS, IDENTITY, NOW, machine_on
from tests.sas.pty_bridge import PtyBridge
from tests.sas.sas_comm_py_host import SasCommPyHost, number, text
from tests.sas.test_meters import play_a_round

DENOM = IDENTITY.accounting_denom_cents            # 5 cents: the ledger's cents / 5 = SAS credits


@pytest.fixture
def ledger_with_play(ledger: Ledger) -> Ledger:
    ledger.bill_in(2000)
    ledger.bill_in(2000)
    ledger.bill_in(500)
    play_a_round(ledger)                                  # 25 credits staked, 75 won
    ledger.ticket_out(1000, "000000000000000002")
    ledger.event("door_open", door="main")
    return ledger


@pytest.fixture
def host(ledger_with_play):
    """The library's host on the pty, the bridge, and the ledger's meters (read before the bridge's
    thread owns the ledger: it is not shared between threads)."""
    meters = dict(ledger_with_play.meters)
    with PtyBridge(machine_on(ledger_with_play)) as bridge:
        machine = SasCommPyHost(bridge.path, address=ADDRESS)
        try:
            yield machine, bridge, meters
        finally:
            machine.port.close()


def test_it_reads_the_machines_identity(host):
    machine, bridge, _ = host
    # Its constructor asked for the SAS version and serial (0x54) as an R poll after its 0x80.
    assert bridge.sent_by_host()[0] == bytes.fromhex("80 01 54")
    assert machine.serial_number, "no valid 0x54 reply"
    length, *body = machine.serial_number.data
    assert int(length, 16) == len(body) and text(body) == "602" + IDENTITY.serial

    info = machine.write_type_R(0x1F, length_to_read=20)
    assert info.address == "01" and info.command == "1f"
    game, extra, denom, max_bet = text(info.data[0:2]), text(info.data[2:5]), info.data[5], info.data[6]
    assert (game, extra, int(denom, 16), int(max_bet, 16)) == ("BW", "001", 0x02, IDENTITY.max_bet)
    assert text(info.data[10:16]) == IDENTITY.paytable_id and text(info.data[16:20]) == "9650"

    clock = machine.write_type_R(0x7E, length_to_read=7).data
    assert dt.datetime.strptime("".join(clock), "%m%d%Y%H%M%S") == NOW


def test_it_reads_the_meters_the_ledger_holds(host):
    machine, _, m = host
    credits = m["credits"] // DENOM

    meters = machine.meters
    assert meters(0x11, 4) == [m["coin_in"] // DENOM] == [25]
    assert meters(0x12, 4) == [m["coin_out"] // DENOM] == [75]
    assert meters(0x10, 4) == [m["ticket_out"] // DENOM] == [200]
    assert meters(0x1A, 4) == [credits] == [750]
    assert meters(0x18, 4) == [m["games_since_power_up"], m["games_since_door_close"]] == [1, 1]
    assert meters(0x1C, 32) == [25, 75, m["bills_in"] // DENOM, 0, m["games_played"], m["games_won"],
                                m["door_open.main"], 0]
    assert meters(0x1E, 24) == [0, m["bills_in_by_denom.500"], 0, m["bills_in_by_denom.2000"], 0, 0]
    assert meters(0x20, 4) == [m["bills_in"] // 100] == [45]
    # Last bill accepted (0x48): country 00, $5 (code 02), one such note.
    assert machine.write_type_R(0x48, length_to_read=6).data == ["00", "02", "00", "00", "00", "01"]

    # Selected meters (0x2F, an M poll with the length byte the library adds when asked): game
    # 0000, bills in (0B) and current credits (0C), each code then 4 BCD bytes.
    selected = machine.write_type_M(0x2F, optional_data=[0x0B, 0x0C], add_length_binary=True)
    assert int(selected.length_to_read, 16) == 12
    assert " ".join(selected.data) == ("00 00 "               # game 0: the machine's totals
                                       "0b 00 00 09 00 "      # bills in: 900 credits ($45)
                                       "0c 00 00 07 50")      # current credits: 750
    # Extended meters (0x6F): two-byte codes; code, size, value (cashable ticket out in cents: 5 BCD).
    extended = machine.write_type_M(0x6F, optional_data=[0x0E, 0x00, 0x0C, 0x00], add_length_binary=True)
    assert " ".join(extended.data[:10]) == ("00 00 "                  # game 0
                                            "0e 00 05 00 00 00 10 00")  # ticket out: 1000 cents
    assert number(extended.data[13:17]) == credits

    # The library's own polling loop (a one-shot task) reads the same credits.
    machine.add_one_task("1A", poll_type="R", length_to_read=4)
    assert number(next(machine.capture_events()).data) == credits


def test_it_reads_the_exceptions_with_general_polls_and_a_retry_loses_none(host):
    machine, bridge, _ = host
    codes = []
    for _ in range(12):
        code = machine.general_poll()
        # The host asks again as if the reply were lost: the same exception, still queued.
        assert machine.general_poll() == code
        machine.write_type_R(0x1A, length_to_read=4)     # the next poll acknowledges it
        if code == 0:
            break
        codes.append(code)
    assert codes == [X.CASHOUT_TICKET_PRINTED,            # a priority exception first
                     X.BILL_20_ACCEPTED, X.BILL_20_ACCEPTED, X.BILL_5_ACCEPTED,
                     X.GAME_STARTED, X.GAME_ENDED, X.SLOT_DOOR_OPENED]
    assert bytes.fromhex("80 81") in bridge.sent_by_host()
