"""SAS and the FIG. 16 host link side by side on one running terminal: both report the meters of
the same critical memory, so they never disagree (issue 25, "Terminal and tools")."""

from __future__ import annotations

import json
import subprocess
import sys

from drivers.sas.messages import METER_LAYOUTS, Meters
from tests.sas.helpers import wait_for
from tests.sas.live import DENOM_CENTS, host_on, running

ROUNDS = 3


def _host_meters(state_dir) -> dict:
    """What the embedded host stored as the terminal's last meters report (``egm host meters``)."""
    shown = subprocess.run([sys.executable, "-m", "firmware.cli", "host", "meters", "--state-dir",
                            str(state_dir / "host"), "--json"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout).get("EGM-0001") or {}


def test_sas_and_the_host_link_report_the_same_meters_from_one_running_terminal(tmp_path):
    with running(tmp_path, host=True) as terminal, host_on(terminal) as sas_host:
        terminal.sim_until("note", "20")
        wait_for(lambda: terminal.control("status")["credits_cents"] == 2000, timeout=30)
        for played in range(1, ROUNDS + 1):
            terminal.control("play")
            terminal.control("wait", {"state": "IDLE", "rounds": played, "timeout": 60})
        before = terminal.control("status")["credits_cents"]
        terminal.sim_until("note", "5")              # a note: the link reports the meters (rounds do not)
        wait_for(lambda: terminal.control("status")["credits_cents"] == before + 500, timeout=30)
        status = terminal.control("status")
        # the host has the report made after the note (its credits are the terminal's now)
        wait_for(lambda: (_host_meters(terminal.state_dir).get("meters") or {}).get("games_played") == ROUNDS
                 and _host_meters(terminal.state_dir)["credits"] == status["credits_cents"], timeout=60)
        host = _host_meters(terminal.state_dir)
        sas: dict[str, int] = {}
        for command in sorted(METER_LAYOUTS):
            body = sas_host.read(command)
            assert isinstance(body, Meters)
            sas.update(body.values)
    m = host["meters"]
    assert m["games_played"] == sas["games_played"] == ROUNDS
    assert m["games_won"] == sas["games_won"] and m["games_lost"] == sas["games_lost"]
    assert m["coin_in"] // DENOM_CENTS == sas["total_coin_in"] and m["coin_in"] > 0
    assert m["coin_out"] // DENOM_CENTS == sas["total_coin_out"]
    assert host["credits"] // DENOM_CENTS == sas["current_credits"]
    assert m["bills_in"] // DENOM_CENTS == sas["total_drop"] == 2500 // DENOM_CENTS
    assert m["bills_in"] // 100 == sas["total_bills_dollars"] == 25
    assert m["bills_in_by_denom"].get("2000", 0) == sas["bills_20"] == 1
    assert m["bills_in_by_denom"].get("500", 0) == sas["bills_5"] == 1
    assert m["power_reset"] == sas["power_reset"]
