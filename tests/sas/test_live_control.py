"""Enable and disable play (0x01 / 0x02) against the running terminal over its pty: a disable sent
mid-round takes effect at the end of the round, play is then refused, the disable survives a
SIGKILL, and 0x02 gives play back."""

from __future__ import annotations

import pytest

from drivers.sas.codec import Ack
from drivers.sas.exceptions import ExceptionCode as X
from firmware.cabinet.control import ControlError
from firmware.cabinet.sas_control import PLAY_STOPS
from tests.sas.helpers import wait_for
from tests.sas.live import exceptions_until_quiet, host_on, meters, running

DISABLE, ENABLE = 0x01, 0x02


def play_until_a_decision(terminal) -> None:
    """Start a round of the selected game and wait until it waits for the player (a decision of
    three-card poker: 60 s before its default applies)."""
    terminal.control("play")
    wait_for(lambda: (terminal.control("status")["round"] or {}).get("pending"), timeout=30)


def test_a_disable_sent_mid_round_waits_for_its_end_survives_a_sigkill_and_enable_lifts_it(tmp_path):
    with running(tmp_path) as terminal, host_on(terminal) as host:
        assert exceptions_until_quiet(host) == [X.AC_POWER_APPLIED]
        terminal.control("game", {"game": "three-card-poker"})      # its round waits for the player
        terminal.sim_until("note", "20")
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000, timeout=20)
        play_until_a_decision(terminal)

        assert host.long_poll(DISABLE) == Ack(1)
        wait_for(lambda: terminal.control("status")["message"] == PLAY_STOPS)    # published after the step
        status = terminal.control("status")
        assert status["state"] == "PLAYING" and status["round"]["pending"]         # the round goes on
        terminal.control("decide", {"seat": 1, "action": "play"})
        status = terminal.control("wait", {"state": "DISABLED", "timeout": 30})
        assert status["disabled_by"] == ["sas"] and status["rounds_played"] == 1
        assert status["round"] is None and status["last_round"] is not None        # it completed
        with pytest.raises(ControlError, match="disabled"):
            terminal.control("play")
        terminal.kill()                                                   # the power goes
    with running(tmp_path, state="DISABLED") as terminal, host_on(terminal) as host:
        assert terminal.control("status")["disabled_by"] == ["sas"]
        with pytest.raises(ControlError, match="disabled"):
            terminal.control("play")
        assert host.long_poll(ENABLE) == Ack(1)
        status = terminal.control("wait", {"state": "IDLE", "timeout": 30})
        assert status["disabled_by"] == []
        terminal.control("game", {"game": "three-card-poker"})
        play_until_a_decision(terminal)                                  # play is allowed again
        terminal.control("decide", {"seat": 1, "action": "fold"})
        terminal.control("wait", {"state": "IDLE", "timeout": 30})
        terminal.stop()
    assert meters(tmp_path / "state")["meters"]["games_played"] == 2
