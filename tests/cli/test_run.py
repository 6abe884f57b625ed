"""``egm run --sim``: power-up self-test, the cabinet in attract, autoplay, and a clean stop."""

from __future__ import annotations

import subprocess
import sys

from tests.cli.processes import reaped


def test_run_sim_power_up_self_test_reaches_attract_with_the_host_link(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--autoplay", "0", "--state-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for check in ("DRBG known answer", "entropy health tests", "software signature", "critical memory",
                  "devices", "doors while off"):
        assert any(line.split()[-1] == "ok" for line in proc.stdout.splitlines()
                   if line.strip().startswith(check)), (check, proc.stdout)
    assert "cabinet: IDLE" in proc.stdout
    assert "host link: mqtts://127.0.0.1:" in proc.stdout and "embedded host in" in proc.stdout
    assert "screens: off (--headless)" in proc.stdout and "not built yet" not in proc.stdout
    assert "baccarat-war" in proc.stdout.split("games:")[1].split("playable")[0]


def test_run_sim_autoplay_plays_rounds_through_the_kernel_and_the_devices(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--autoplay", "5", "--game", "blackjack-war", "--state-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(" blackjack-war: net ") == 5
    assert "autoplay: 5 round(s) of blackjack-war; 1 note(s) in" in proc.stdout
    assert "accounting identity holds" in proc.stdout


def test_run_stops_cleanly_on_sigterm_and_logs_the_power_down(tmp_path):
    import json
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                             "--state-dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "control.sock").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert not (tmp_path / "control.sock").exists()
    events = subprocess.run([sys.executable, "-m", "firmware.cli", "events", "--state-dir", str(tmp_path),
                             "--last", "1", "--json"], capture_output=True, text=True, timeout=30)
    assert json.loads(events.stdout)[0]["event"] == "power_down"


def test_run_refuses_a_game_that_is_not_enabled(tmp_path):
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[games]\nenabled = ['baccarat-war']\n")
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--config", str(cfg),
                           "--game", "holdem-war"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "is not enabled" in proc.stderr and "Traceback" not in proc.stderr


def test_autoplay_takes_bills_prints_tickets_keeps_the_identity_and_recall_redraws_the_rounds(tmp_path):
    """The issue's acceptance run, at 150 rounds (2000 take about two minutes: docs/benchmarks.md)."""
    import json

    from firmware.kernel.round import replay
    from firmware.ledger.ledger import Ledger, accounting_difference

    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                           "--autoplay", "150", "--state-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    meters = json.loads(subprocess.run([sys.executable, "-m", "firmware.cli", "meters", "--state-dir",
                                        str(tmp_path), "--json"], capture_output=True, text=True).stdout)
    m = meters["meters"]
    assert m["games_played"] == 150 and m["bills_in"] > 0 and m["ticket_out"] > 0
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert accounting_difference(ledger.meters) == 0
        tickets = ledger.vouchers(100)
        assert len(tickets) == 5                      # after rounds 25, 50, ..., 125 (150 ends the run)
        assert len({t["validation"] for t in tickets}) == 5
    recall = json.loads(subprocess.run([sys.executable, "-m", "firmware.cli", "recall", "--state-dir",
                                        str(tmp_path), "--last", "10", "--json"],
                                       capture_output=True, text=True).stdout)
    assert len(recall) == 10
    for record in recall:
        again = replay(record)
        assert again["net"] == record["net"] and again["cards_dealt"] == record["cards_dealt"]
        assert again["seats"] == record["seats"]


def test_run_sim_with_a_display_opens_the_screens_and_the_simulator_panel(tmp_path):
    """A display (here SDL's dummy driver): the player's screens open with the simulator panel
    beside them; autoplay's rounds are played under them, and the window closes when the terminal
    stops."""
    import os

    env = {**os.environ, "SDL_VIDEODRIVER": "dummy"}
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--autoplay", "3",
                           "--size", "1280x720", "--state-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=90, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "screens: 1280x720 on dummy, with the simulator panel" in proc.stdout
    assert proc.stdout.count(" baccarat-war: net ") == 3 and "accounting identity holds" in proc.stdout


def test_run_without_a_display_says_so_and_runs_headless(tmp_path):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--autoplay", "0",
                           "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "screens: no display" in proc.stdout and "running headless" in proc.stdout


def test_run_refuses_a_bad_screen_size(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--size", "huge",
                           "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "WIDTHxHEIGHT" in proc.stderr and "Traceback" not in proc.stderr


def test_run_with_a_validator_port_that_does_not_exist_stays_up_in_tilt_and_recovers_when_it_appears(tmp_path):
    """The issue's case (a real driver on a missing port): no exit, a device tilt naming the device
    and the port; a simulator plugged in at that path (a symlink to its pty) brings the cabinet to
    IDLE, and a note inserted through it is credited."""
    import contextlib
    import io
    import json
    import os
    import time

    from firmware.cli import main
    from tests.drivers.sim_process import ask_until, egm_sim, pty_path, quit_sim

    port, state = tmp_path / "ttyVALIDATOR", tmp_path / "state"
    cfg = tmp_path / "egm.toml"
    cfg.write_text(f'[devices]\nbill_validator = "id003"\nprinter = "none"\ntouch = "none"\nio_board = "none"\n'
                   f'[devices.settings.bill_validator]\nport = "{port}"\n[host]\nenabled = false\n'
                   '[cabinet]\nreconnect_interval_s = 0.2\n')

    def status() -> dict:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main(["simctl", "--state-dir", str(state), "--json", "status"]) == 0
        return json.loads(out.getvalue())

    def until(predicate, what: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while not predicate(s := status()):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, f"waited {timeout} s for {what}: {s}"
            time.sleep(0.1)
        return s

    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--headless", "--config", str(cfg),
                             "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    with reaped(proc):
        deadline = time.monotonic() + 60
        while not (state / "control.sock").exists():
            assert proc.poll() is None, f"the terminal exited: {proc.stderr.read()}"
            assert time.monotonic() < deadline, "the terminal did not start"
            time.sleep(0.05)
        s = until(lambda s: s.get("state") == "TILT", "the device tilt")    # {} until the power-up is done
        assert s["tilts"] == [{"tilt": "device_disconnected:bill_validator", "port": str(port),
                               "reason": s["tilts"][0]["reason"]}]
        assert s["tilts"][0]["reason"].startswith(f"bill_validator not connected ({port}): ")
        time.sleep(1.0)
        assert proc.poll() is None and status()["state"] == "TILT"          # it stays up, tilted
        with egm_sim("bill-validator", "--protocol", "id003", "--pty") as sim:
            os.symlink(pty_path(sim), port)                                  # the device appears
            until(lambda s: s["state"] == "IDLE" and s["accepting_notes"], "IDLE with the validator")
            assert ask_until(sim, "note 20", "ok") == "ok"
            until(lambda s: s["credits_cents"] == 2000, "the note credited")
            quit_sim(sim)
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["simctl", "--state-dir", str(state), "stop"]) == 0
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert f"devices                  FAILED: bill_validator: not connected ({port})" in out
    assert "cabinet: TILT; tilts: device_disconnected:bill_validator" in out and "Traceback" not in err
    with contextlib.redirect_stdout(buf := io.StringIO()):
        assert main(["events", "--state-dir", str(state), "--last", "100", "--json"]) == 0
    events = json.loads(buf.getvalue())
    raised = [e for e in events if e["event"] == "cabinet.tilt_raised"]
    assert raised and str(port) in raised[-1]["reason"]
    assert any(e["event"] == "cabinet.tilt_cleared" and e["tilt"] == "device_disconnected:bill_validator"
               for e in events)
