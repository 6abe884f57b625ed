"""Power-fail safety: kill the process at every write step of a round, restart, and find the round
completed exactly as an uninterrupted run completes it, with exact meters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.ledger.ledger import Ledger, accounting_difference
from tests.ledger.soak import Soak, soak_in_lanes

DRIVER = Path(__file__).with_name("crash_driver.py")


def drive(state_dir: Path, crash_at: int) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(DRIVER), str(state_dir), str(crash_at)],
                          capture_output=True, text=True, timeout=120)


def comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("time",)}


def test_kill_at_every_write_step_then_restart_completes_the_round_identically(tmp_path):
    reference = drive(tmp_path / "reference", 0)
    assert reference.returncode == 0, reference.stderr
    expected = json.loads(reference.stdout)
    total_steps = expected["steps"]
    assert total_steps >= 30, f"only {total_steps} kill points"
    assert expected["record"]["wars"]["steps"] == 5 and expected["record"]["war_pool"]["winner"] == 1
    for crash_at in range(1, total_steps + 1):
        state = tmp_path / f"kill-{crash_at}"
        killed = drive(state, crash_at)
        assert killed.returncode == 137, (crash_at, killed.stderr)
        restarted = drive(state, 0)
        assert restarted.returncode == 0, (crash_at, restarted.stderr)
        got = json.loads(restarted.stdout)
        assert comparable(got["record"]) == comparable(expected["record"]), crash_at
        assert got["meters"] == expected["meters"], crash_at
        with Ledger.open(state, read_only=True) as ledger:
            assert ledger.repairs == [] or all("behind by" in r for r in ledger.repairs)
            assert accounting_difference(ledger.meters) == 0
            assert ledger.open_round is None


def test_power_fail_soak_short(tmp_path):
    """A few cycles of every kind: kills during play, during the backlog and at three phases of a
    voucher redemption through the host (the terminal waiting for the host's answer, the credit
    being recorded, in escrow), then a clean start (tests/ledger/soak.py)."""
    schedule = ["play"] * 4 + ["voucher:request", "backlog", "play", "voucher:credit", "start-up", "backlog",
                               "voucher:escrow"]
    soak = Soak(tmp_path, cycles=len(schedule), seed=1, schedule=schedule, log_every=len(schedule))
    result = soak.run()
    print(f"soak summary: {json.dumps(result)}")
    assert result["findings"] == []
    assert result["kills"]["backlog"] == 2 and result["kills"]["voucher"] >= 2, result
    assert result["vouchers_inserted"] >= 2 and sum(result["voucher_outcomes"].values()) >= 2, result


@pytest.mark.soak
def test_power_fail_soak(tmp_path):
    """``make soak``: ``EGM_SOAK_CYCLES`` cycles (10,000 by default, GLI's figure for
    program-interruption testing) over ``EGM_SOAK_LANES`` terminals soaked side by side (3 by
    default: on this 2-core machine three keep both cores busy while each waits on its terminal);
    ``EGM_SOAK_REPORT=FILE`` keeps the figures as JSON."""
    soaks, result = soak_in_lanes(tmp_path, cycles=int(os.environ.get("EGM_SOAK_CYCLES", "10000")),
                                  lanes=int(os.environ.get("EGM_SOAK_LANES", "3")), seed=2026)
    print(f"soak summary: {json.dumps(result)}")
    if os.environ.get("EGM_SOAK_REPORT"):
        result["times"] = [t | {"lane": soak.name} for soak in soaks for t in soak.times]
        Path(os.environ["EGM_SOAK_REPORT"]).write_text(json.dumps(result, indent=1))
    assert result["findings"] == []
