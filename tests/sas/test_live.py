"""SAS against the running terminal (``egm run --sim --headless --sas pty``), over its pty:
meters, an exception from a door, exceptions across a SIGKILL, and the link going down."""

from __future__ import annotations

import time

from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.messages import METER_LAYOUTS, Meters
from firmware.ledger.ledger import Ledger
from tests.sas.helpers import wait_for
from tests.sas.live import (
    DENOM_CENTS,
    autoplay,
    exceptions_until,
    exceptions_until_quiet,
    host_on,
    meters,
    running,
)

DENOM = DENOM_CENTS


def test_meters_read_over_sas_equal_egm_meters_after_autoplay(tmp_path):
    state = tmp_path / "state"
    autoplay(tmp_path, 30)
    with running(tmp_path) as terminal, host_on(terminal) as host:
        sas: dict[str, int] = {}
        for command in sorted(METER_LAYOUTS):
            body = host.read(command)
            assert isinstance(body, Meters)
            sas.update(body.values)
        terminal.stop()
    shown = meters(state)
    m = shown["meters"]
    assert m["games_played"] == 30 and m["bills_in"] > 0 and m["ticket_out"] > 0
    assert sas["games_played"] == m["games_played"] and sas["games_won"] == m["games_won"]
    assert sas["games_lost"] == m["games_lost"]
    assert sas["total_coin_in"] == m["coin_in"] // DENOM and sas["total_coin_out"] == m["coin_out"] // DENOM
    assert sas["current_credits"] == shown["credits"] // DENOM
    assert sas["total_drop"] == (m["bills_in"] + m["ticket_in"]) // DENOM
    assert sas["total_cancelled_credits"] == (m["handpay_cancelled_credits"] + m["ticket_out"]
                                              + m["transfers_out"]) // DENOM
    assert sas["total_bills_dollars"] == m["bills_in"] // 100
    assert sas["bills_20"] == m["bills_in_by_denom"].get("2000", 0)
    assert sas["power_reset"] == m["power_reset"] == 2


def test_a_door_opened_with_simctl_arrives_as_its_exception_on_general_polls(tmp_path):
    with running(tmp_path) as terminal, host_on(terminal) as host:
        assert exceptions_until_quiet(host) == [X.AC_POWER_APPLIED]
        terminal.sim("door", "open", "main")
        terminal.sim("door", "close", "main")
        assert exceptions_until(host, X.SLOT_DOOR_CLOSED) == [X.SLOT_DOOR_OPENED, X.SLOT_DOOR_CLOSED]


def test_exceptions_not_taken_survive_a_sigkill_and_taken_ones_do_not_come_back(tmp_path):
    with running(tmp_path) as terminal:
        terminal.sim("door", "open", "logic")
        terminal.sim("door", "close", "logic")
        terminal.sim("door", "open", "cash_box")
        with host_on(terminal) as host:
            # 17 and 15 are taken (each acknowledged by the poll after it); 16 is read, never acknowledged
            assert [host.general_poll() for _ in range(3)] == [X.AC_POWER_APPLIED, X.CARD_CAGE_OPENED,
                                                              X.CARD_CAGE_CLOSED]
        terminal.proc.kill()                                      # the power goes, no power_down
        terminal.proc.communicate()
    with running(tmp_path) as terminal, host_on(terminal) as host:
        assert exceptions_until_quiet(host) == [X.CARD_CAGE_CLOSED, X.CASHBOX_DOOR_OPENED, X.AC_POWER_APPLIED]


def test_five_seconds_without_a_poll_take_the_link_down_in_the_status_and_the_history(tmp_path):
    with running(tmp_path, "--sas-address", "7") as terminal:
        assert terminal.control("status")["sas"]["link"] == "down"
        with host_on(terminal, 7) as host:
            assert host.general_poll() == X.AC_POWER_APPLIED
            wait_for(lambda: terminal.control("status")["sas"]["polls"] == 1)   # published after the step
            assert terminal.control("status")["sas"] == {
                "port": terminal.sas, "address": 7, "link": "up", "polls": 1, "exceptions_pending": 1}
            deadline = time.monotonic() + 8
            while terminal.control("status")["sas"]["link"] == "up":
                assert time.monotonic() < deadline, "the link is still up 8 s after the last poll"
                time.sleep(0.2)
            assert time.monotonic() > deadline - 8 + 4.5              # not before its 5 s
            assert host.listen(0.5) >= 1                              # down: the machine chirps again
        terminal.stop()
    with Ledger.open(tmp_path / "state", read_only=True) as ledger:
        changes = [(e["state"], e["address"]) for e in reversed(ledger.events(50)) if e["event"] == "sas_link"]
    assert changes == [("up", 7), ("down", 7)]
