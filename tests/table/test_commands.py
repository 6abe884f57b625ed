"""``egm table serve`` serves stations until SIGTERM; ``egm table demo`` settles rounds with station
processes and the money adds up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from firmware.ledger.ledger import Ledger
from firmware.table.client import TableClient
from tests.table.stations import FakeRounds

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("screen", [False, True], ids=["headless", "dealer-screen"])
def test_serve_deals_a_stacked_list_to_a_station_until_sigterm(tmp_path: Path, screen: bool) -> None:
    """Headless, or with the dealer's screen in its window (SDL's dummy driver) on the main thread
    while the link serves the station."""
    stack = tmp_path / "cards.txt"
    stack.write_text("9h 4s Kc 2h\n9d 4c Qd 2d\n")          # two one-seat rounds: 9 against 6, twice
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "--log-level", "INFO", "table", "serve", "--state-dir",
         str(tmp_path / "table"), "--listen", "127.0.0.1:0", "--pki", str(tmp_path / "pki"), "--dev-pki", "station-1",
         "--stack", str(stack), "--betting-window", "30", "--json", *([] if screen else ["--headless"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**ENV, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"})
    try:
        assert proc.stdout is not None
        started = json.loads(proc.stdout.readline())
        assert (started["source"], started["game"]) == ("stacked", "baccarat-war")
        rounds = FakeRounds("station-1")
        client = TableClient(rounds, station_id="station-1", pki_dir=tmp_path / "pki", controller=started["listen"])
        rounds.port = client
        client.start()
        try:
            assert rounds.wait(lambda: len(rounds.results) >= 2), rounds.links
        finally:
            client.stop()
        assert [r["results"]["bac"]["net"] for r in rounds.results.values()] == [5, 5]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    assert proc.stderr is not None
    assert ("no dealer's screen in this build" in proc.stderr.read()) is False
    with Ledger.open(tmp_path / "table", read_only=True) as ledger:
        assert ledger.meters["coin_out"] >= 2 * 15 * ledger.denom_cents


def test_demo_settles_rounds_with_station_processes_and_the_money_adds_up(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "firmware.cli", "table", "demo", "--stations", "2", "--rounds", "2",
         "--state-dir", str(tmp_path), "--seed", "7", "--json"],
        capture_output=True, text=True, env=ENV, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["rounds"] >= 2 and report["identities"] == {"coin_in": True, "coin_out": True}
    assert sum(s["coin_in"] for s in report["stations"]) == report["controller"]["coin_in"] > 0
    assert report["latency_ms"]["samples"] >= 2
