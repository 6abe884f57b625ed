"""The cabinet's side of AFT (``TerminalAft``) on a real terminal: transfers and the lock only when
the cabinet allows them, and the lock holds play until it ends."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest

from drivers.sas.messages import AftLockRequest, AftStatus, parse_reply
from firmware.cabinet.sas_aft import TerminalAft
from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.terminal import Terminal, TerminalError
from firmware.ledger.ledger import accounting_difference
from firmware.sas.aft import AftPolls, AftSettings
from tests.cabinet.test_terminal import settle
from tests.cabinet.test_terminal import start as start_terminal
from tests.sas.test_aft import request


def sas_part(made: list) -> Callable[[Terminal], SimpleNamespace]:
    """A terminal's ``sas=`` factory with AFT's cabinet side (what the terminal asks of its SAS port:
    why play is held); the TerminalAft it builds goes into ``made``."""
    def build(terminal: Terminal) -> SimpleNamespace:
        made.append(aft := TerminalAft(terminal))
        return SimpleNamespace(play_held=aft.play_held, ticket_host=None, numbering=None, status=dict,
                               close=lambda: None)
    return build


def start(state):
    """A powered-up terminal on a clock the test moves, and AFT over it."""
    now = [1000.0]
    made: list[TerminalAft] = []
    terminal, ledger = start_terminal(state, clock=lambda: now[0], sas=sas_part(made))
    polls = AftPolls(ledger, made[0], AftSettings(1234, 100_000), monotonic=terminal.clock)
    return terminal, ledger, polls, now


def lock(polls, code=0x00, condition=0x01, timeout=1000) -> AftStatus:
    reply = parse_reply(0x74, polls.lock_poll(AftLockRequest(code, condition, timeout).encode()))
    assert isinstance(reply, AftStatus)
    return reply


def test_idle_terminal_transfers_in_and_out_and_tells_the_player(tmp_path):
    terminal, ledger, polls, _ = start(tmp_path)
    assert parse_reply(0x72, polls.transfer_poll(request("IN-1", 2500))).transfer_status == 0x00
    assert terminal.message == "Transfer in: 25.00"
    assert parse_reply(0x72, polls.transfer_poll(request("OUT-1", 1000, out=True))).transfer_status == 0x00
    assert ledger.credits_cents == 1500 and accounting_difference(ledger.meters) == 0
    assert polls.status().transfer_limit == 100_000
    ledger.close()


def test_a_tilt_or_a_handpay_refuses_transfers_and_the_lock(tmp_path):
    terminal, ledger, polls, _ = start(tmp_path)
    ledger.bill_in(500)
    terminal.cabinet.tilt("door", "main", "main door open")
    assert terminal.cabinet.state is S.TILT
    assert parse_reply(0x72, polls.transfer_poll(request("IN-1", 2500))).transfer_status == 0x87
    assert parse_reply(0x72, polls.transfer_poll(request("OUT-1", 500, out=True))).transfer_status == 0x87
    status = lock(polls)
    assert (status.game_lock_status, status.available_transfers, status.transfer_limit) == (0xFF, 0, 0)
    terminal.cabinet.clear_tilt("door", "main")
    terminal.request_cashout()                              # no printer: a handpay
    assert terminal.cabinet.state is S.HANDPAY
    assert lock(polls).game_lock_status == 0xFF
    assert ledger.credits_cents == 500
    ledger.close()


def test_the_lock_holds_play_until_it_times_out(tmp_path):
    terminal, ledger, polls, now = start(tmp_path)
    ledger.bill_in(500)
    assert lock(polls, timeout=1000).game_lock_status == 0x00
    with pytest.raises(TerminalError, match="locked for a funds transfer"):
        terminal.play()
    now[0] += 10.0
    terminal.play()
    settle(terminal)
    assert terminal.rounds_played == 1
    ledger.close()
