"""The simulated cabinet's hooks for the regulator's suite (``egm hil``, issue 26): physical steps a
lab does on a real cabinet, done on ``egm run --sim --headless`` and checked by the cabinet's own
reaction, not by the control being accepted.

* a door opened while the power was off (``egm run --sim-door-open DOOR``);
* a forced entropy-source failure (``egm simctl rng entropy stuck|ok``, ``rng reseed``);
* the validator's stacker removed (``egm simctl validator stacker-removed``, ``clear``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware.cabinet.control import ControlError, request
from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.terminal import Devices, Terminal, TerminalError
from firmware.cashless.vouchers import VoucherBook
from firmware.cli import main
from firmware.config import Config
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.rng.health import HealthTestedEntropy
from firmware.rng.service import RngService
from firmware.rng.switchable import STUCK_BYTE, SwitchableSource
from tests.cabinet.test_terminal_scenarios import Running

#: No embedded host: it is not what these tests look at, and it makes the start slower.
NO_HOST = "[host]\nenabled = false\n"
RCT_FAILURE = "repetition count test (SP 800-90B 4.4.1)"


@pytest.fixture
def cabinet(tmp_path):
    """``cabinet(state, *extra_args, config=...)``: ``egm run --sim --headless`` on ``state``, once
    its control socket answers. Every terminal still running at the end is stopped (killed if it
    does not stop); none may have written a traceback, and each one's critical memory keeps the
    accounting identity."""
    started: list[Running] = []

    def start(state: Path, *extra: str, config: str = NO_HOST) -> Running:
        cfg = tmp_path / f"egm{len(started)}.toml"
        cfg.write_text(config)
        proc = subprocess.Popen(
            [sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--state-dir", str(state),
             "--config", str(cfg), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        run = Running(state, proc)
        started.append(run)
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the terminal exited: {proc.stderr.read()}")
            with contextlib.suppress(ControlError):     # not listening yet (or a killed one's socket)
                if request(state, "status", timeout=5).get("state") not in (None, "POWER_UP", "SELF_TEST"):
                    return run
            assert time.monotonic() < deadline, "the terminal did not start"
            time.sleep(0.1)

    yield start
    for run in started:
        stderr = run.shut_down()
        assert "Traceback" not in stderr, stderr
        with Ledger.open(run.state, read_only=True) as ledger:
            assert accounting_difference(ledger.meters) == 0


def output(run: Running) -> str:
    """What a stopped terminal printed."""
    run.proc.wait(timeout=20)
    return run.proc.stdout.read()


# --- 1. a door opened while the power was off ---------------------------------------------------
def test_a_door_opened_while_the_power_was_off_is_found_at_power_up_and_tilts_until_closed(cabinet, tmp_path):
    state = tmp_path / "state"
    t = cabinet(state)
    t.until(lambda s: s["state"] == "IDLE", "attract")
    t.proc.send_signal(signal.SIGKILL)                     # the power goes, every door closed
    t.proc.wait(timeout=10)

    t = cabinet(state, "--sim-door-open", "main")          # opened while the cabinet was off
    s = t.until(lambda s: s["state"] == "TILT", "the door tilt")
    assert [x["tilt"] for x in s["tilts"]] == ["door:main"]
    opened = [e for e in t.events() if e["event"] == "door_open"]
    assert len(opened) == 1 and opened[0]["door"] == "main" and opened[0]["while_power_off"] is True
    assert "a round cannot start now" in t.refused("play")
    t.ctl("door", "close", "main")
    t.until(lambda s: s["state"] == "IDLE", "the door closed")
    t.insert(20)
    t.ctl("play")
    t.until(lambda s: s["rounds_played"] == 1, "a round once the door is closed")
    t.ctl("stop")
    printed = output(t)
    assert "main door opened while the power was off" in printed
    assert "cabinet: TILT; tilts: door:main" in printed
    names = [e["event"] for e in t.events()]
    assert names.count("power_up") == 2 and "door_close" in names


def test_sim_door_open_is_refused_without_the_simulator_and_for_a_door_there_is_not(tmp_path, capsys):
    state = tmp_path / "state"
    assert main(["run", "--headless", "--sim-door-open", "main", "--state-dir", str(state)]) != 0
    assert "--sim-door-open needs --sim" in capsys.readouterr().err
    cfg = tmp_path / "egm.toml"
    cfg.write_text('[devices]\nio_board = "none"\n')
    assert main(["run", "--sim", "--headless", "--sim-door-open", "main", "--config", str(cfg),
                 "--state-dir", str(state)]) != 0
    assert "needs the I/O board" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--sim", "--sim-door-open", "roof", "--state-dir", str(state)])
    assert "invalid choice: 'roof'" in capsys.readouterr().err
    assert not state.exists()                              # nothing was started, nothing recorded


# --- 2. a forced entropy-source failure -----------------------------------------------------------
def test_a_stuck_entropy_source_fails_the_forced_reseed_tilts_and_clears_only_with_a_good_source(cabinet, tmp_path):
    t = cabinet(tmp_path / "state")
    t.until(lambda s: s["state"] == "IDLE", "attract")
    assert t.ctl("rng", "reseed") == {"control": "rng reseed", "reseeded": True, "entropy": "ok"}
    t.insert(20)
    assert t.ctl("rng", "entropy", "stuck")["entropy"] == "stuck"
    answer = t.ctl("rng", "reseed")
    assert answer["reseeded"] is False and RCT_FAILURE in answer["failure"]
    s = t.until(lambda s: s["state"] == "TILT", "the RNG tilt")
    assert [x["tilt"] for x in s["tilts"]] == ["rng:drbg"] and RCT_FAILURE in s["tilts"][0]["reason"]
    failures = [e for e in t.events() if e["event"] == "rng_failure"]
    assert len(failures) == 1 and failures[0]["during"] == "reseed" and RCT_FAILURE in failures[0]["detail"]
    assert "a round cannot start now" in t.refused("play")

    t.ctl("key", "audit", "on")                            # the technician's key
    t.until(lambda s: s["state"] == "SERVICE", "service mode")
    t.ctl("service", "login", "technician", "2222")
    assert "rng:drbg stays" in t.refused("service", "clear-tilt", "rng:drbg")    # still stuck
    t.ctl("rng", "entropy", "ok")
    t.ctl("service", "clear-tilt", "rng:drbg")
    t.ctl("key", "audit", "off")
    t.until(lambda s: s["state"] == "IDLE" and not s["tilts"], "play again")
    t.ctl("play")
    t.until(lambda s: s["rounds_played"] == 1, "a round on the new instantiation")
    retests = [e["result"] for e in t.events() if e["event"] == "tilt_retest"]
    assert retests == ["passed", "failed"]                 # newest first
    assert "usage: rng entropy stuck|ok | rng reseed" in t.refused("rng", "entropy", "sideways")


def test_a_due_reseed_from_a_stuck_source_stops_the_round_and_it_finishes_after_the_retest(tmp_path):
    """In-process: the reseed the DRBG asks for itself ([rng] reseed_interval generate requests)."""
    source = SwitchableSource()
    cfg = Config.model_validate({"rng": {"reseed_interval": 1}})
    ledger = Ledger.open(tmp_path)
    rng = RngService.production(b"test", reseed_interval=1, entropy=HealthTestedEntropy(source))
    terminal = Terminal(cfg, ledger, rng, Devices(), VoucherBook(ledger, terminal_id="T1"), entropy_source=source)
    terminal.power_up()
    ledger.bill_in(100_000)
    source.stick()
    assert source(8) == bytes((STUCK_BYTE,)) * 8
    # Rounds until the DRBG's first block is used up (the shoe is shuffled again at its cut card)
    # and the next block needs the reseed that is due after every generate request.
    for _ in range(300):
        if terminal.cabinet.state is S.IDLE:
            terminal.play()
        for _ in range(20):
            terminal.step()
        if terminal.cabinet.state is S.TILT:
            break
    assert terminal.rounds_played > 1                      # the first block was good for rounds
    assert terminal.cabinet.has_tilt("rng", "drbg")
    failure = next(e for e in ledger.events(50) if e["event"] == "rng_failure")
    assert failure["during"] == "round" and RCT_FAILURE in failure["detail"]
    with pytest.raises(TerminalError, match="rng:drbg stays: .*repetition count test"):
        terminal.retest("rng:drbg")
    source.unstick()
    terminal.retest("rng:drbg")
    assert terminal.rng is not rng
    for _ in range(40):
        terminal.step()
    assert terminal.cabinet.state is S.IDLE and ledger.open_round is None
    assert accounting_difference(ledger.meters) == 0
    ledger.close()


# --- 3. the stacker removed -------------------------------------------------------------------------
@pytest.mark.parametrize("validator", ["id003", "ssp"])
def test_the_stacker_removed_tilts_refuses_notes_and_clears_when_it_is_back(cabinet, tmp_path, validator):
    t = cabinet(tmp_path / "state", config=NO_HOST + f'[devices]\nbill_validator = "sim:{validator}"\n')
    t.until(lambda s: s["state"] == "IDLE", "attract")
    t.insert(20)
    t.ctl("validator", "stacker-removed")
    s = t.until(lambda s: s["state"] == "TILT", "the stacker tilt")
    assert [x["tilt"] for x in s["tilts"]] == ["device_fault:bill_validator.stacker_open"]
    raised = [e for e in t.events() if e["event"] == "cabinet.tilt_raised"]
    assert raised[0]["tilt"] == "device_fault:bill_validator.stacker_open"
    assert "a round cannot start now" in t.refused("play")
    time.sleep(0.5)
    assert t.ctl("note", "10")["inserted"] is False        # the validator takes no note meanwhile
    time.sleep(0.5)
    assert t.status()["credits_cents"] == 2000
    t.ctl("validator", "clear")                            # the stacker is back
    t.until(lambda s: s["state"] == "IDLE", "the stacker back", timeout=15)
    assert any(e["event"] == "cabinet.tilt_cleared" and e["tilt"] == "device_fault:bill_validator.stacker_open"
               for e in t.events())
    t.insert(10)
    assert t.meters()["meters"]["bills_in"] == 3000


def test_the_rng_control_exists_only_on_the_simulated_cabinet_and_is_listed(tmp_path):
    from hal.registry import parse_spec
    from sim_hardware.rig import RigError, SimRig

    rig = SimRig({"io_board": parse_spec("io", "sim:io")})
    try:
        with pytest.raises(RigError, match="controls are (?!.*rng)"):
            rig.control(["rng", "reseed"])
        rig.add_control("rng", lambda words: {"words": list(words)})
        assert rig.control(["rng", "reseed"]) == {"control": "rng reseed", "words": ["reseed"]}
        with pytest.raises(RigError, match="controls are .*rng"):
            rig.control(["nonsense"])
        with pytest.raises(ValueError, match="exists already"):
            rig.add_control("door", lambda words: None)
    finally:
        rig.close()


def test_simctl_help_lists_the_hooks(capsys):
    with pytest.raises(SystemExit):
        main(["simctl", "--help"])
    text = capsys.readouterr().out
    assert "validator jam|stacker-full|stacker-removed|cheat|clear" in text
    assert "rng entropy stuck|ok | rng reseed" in text
