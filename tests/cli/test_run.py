"""``egm run --sim`` runs what exists (configuration, RNG power-up self-test) and says what does not."""

from __future__ import annotations

import subprocess
import sys


def test_run_sim_power_up_self_test_and_plain_list_of_what_is_missing():
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "DRBG known answer        ok" in proc.stdout
    assert "entropy health tests     ok" in proc.stdout
    assert "not built yet" in proc.stdout
    assert "baccarat-war" in proc.stdout.split("games:")[1].split("playable")[0]


def test_run_sim_autoplay_plays_rounds_through_the_kernel():
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--autoplay", "5", "--game", "blackjack-war"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(" blackjack-war: net ") == 5
    assert "autoplay: 5 round(s) of blackjack-war" in proc.stdout


def test_run_refuses_a_game_that_is_not_enabled(tmp_path):
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[games]\nenabled = ['baccarat-war']\n")
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--config", str(cfg),
                           "--game", "holdem-war"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not enabled" in proc.stderr and "Traceback" not in proc.stderr
