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


def test_run_refuses_a_game_that_is_not_enabled(tmp_path):
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[games]\nenabled = ['baccarat-war']\n")
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--config", str(cfg),
                           "--game", "holdem-war"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not enabled" in proc.stderr and "Traceback" not in proc.stderr
