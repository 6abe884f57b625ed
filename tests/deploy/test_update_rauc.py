"""The field update on a partitioned cabinet: the terminal and ``egm update`` with the rauc
backend, against the real ``rauc service`` (a private D-Bus, a stand-in for GRUB that logs what
RAUC tells it: tests/deploy/rauc_rig.py). Skipped, with the reason, without rauc or dbus-daemon."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from egmproto import pki
from firmware.ledger.ledger import Ledger
from firmware.update import bundle as rauc_bundle
from tests.deploy.rauc_rig import RaucRig

ROOT = Path(__file__).resolve().parents[2]
MISSING = [tool for tool in ("rauc", "dbus-daemon", "mksquashfs") if shutil.which(tool) is None]
needs_rauc = pytest.mark.skipif(bool(MISSING), reason=f"{', '.join(MISSING)} not installed "
                                "(apt-get install -y rauc squashfs-tools dbus-daemon)")
EGM = [sys.executable, "-m", "firmware.cli"]


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[RaucRig]:
    pki.create_ca(tmp_path / "ca", name="casino CA")
    rig = RaucRig(tmp_path / "rauc", tmp_path / "ca" / "ca.cert.pem", {"A": "1.0.0", "B": None})
    try:
        yield rig
    finally:
        rig.close()


def _config(tmp_path: Path, *extra: str) -> Path:
    config = tmp_path / "terminal.toml"
    config.write_text(f'[update]\nbackend = "rauc"\ndir = "{tmp_path / "update"}"\n\n' + "\n".join(extra))
    return config


def _egm_run(rig: RaucRig, tmp_path: Path, *extra_config: str, rounds: int = 0) -> tuple[str, list[dict]]:
    state_dir = tmp_path / "state"
    done = subprocess.run([*EGM, "run", "--sim", "--headless", "--autoplay", str(rounds), "--state-dir", str(state_dir),
                           "--config", str(_config(tmp_path, *extra_config))],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, env=rig.env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    with Ledger.open(state_dir, read_only=True) as ledger:
        events = [e for e in reversed(ledger.events(400)) if e["event"].startswith("software.")]
    return done.stdout, events


def _install_b(rig: RaucRig, version: str = "1.1.0") -> None:
    """What ``rauc install`` does (it cannot mount a verity bundle in this container: docs/update.md):
    slot B written, its version in RAUC's status file, B made primary (set-primary)."""
    assert rig.rauc("status", "mark-active", "other").returncode == 0
    rig.stop_service()
    rig.set_version("B", version)


def _since(rig: RaucRig, mark: int) -> list[str]:
    return [c for c in rig.calls()[mark:] if c.startswith("set-")]


@needs_rauc
def test_the_terminal_tells_rauc_good_at_attract_and_commits_the_trial(rig: RaucRig, tmp_path: Path) -> None:
    assert rig.boot() == "A"
    mark = len(rig.calls())
    stdout, events = _egm_run(rig, tmp_path)
    assert "update: running" in stdout
    assert _since(rig, mark) == ["set-state A good"]           # GRUB's TRY=1 cleared: the factory slot is good
    assert [(e["event"], e["version"], e["state"]) for e in events] == [("software.installed", "1.0.0", "good")]

    _install_b(rig)
    assert rig.boot() == "B"
    status = json.loads(subprocess.run([*EGM, "update", "status", "--json", "--config", str(_config(tmp_path))],
                                       capture_output=True, text=True, cwd=ROOT, env=rig.env, check=True).stdout)
    assert (status["booted"], status["slots"]["B"]["state"], status["slots"]["B"]["version"]) == ("B", "trial", "1.1.0")
    mark = len(rig.calls())
    stdout, events = _egm_run(rig, tmp_path)
    assert "update: committed" in stdout
    assert _since(rig, mark) == ["set-state B good"]
    assert [(e["event"], e["version"]) for e in events[-2:]] == [("software.installed", "1.1.0"),
                                                                  ("software.update_committed", "1.1.0")]
    assert events[-2]["state"] == "trial" and events[-1]["slot"] == "B"
    assert (rig.grub()["B_OK"], rig.grub()["B_TRY"]) == ("1", "0")

    assert rig.boot() == "B"                                   # the committed version boots again
    mark = len(rig.calls())
    stdout, events = _egm_run(rig, tmp_path)
    assert "update: running" in stdout and _since(rig, mark) == ["set-state B good"]
    assert events[-1]["event"] == "software.installed" and events[-1]["state"] == "good"
    assert sum(e["event"] == "software.update_committed" for e in events) == 1


@needs_rauc
def test_rauc_is_told_bad_when_the_self_test_fails_and_the_old_slot_boots(rig: RaucRig, tmp_path: Path) -> None:
    rig.boot()
    _egm_run(rig, tmp_path)
    _install_b(rig)
    assert rig.boot() == "B"
    mark = len(rig.calls())
    # no signed manifest on a floor build: the software check of the self-test fails
    stdout, events = _egm_run(rig, tmp_path, "[software]", "development = false", rounds=0)
    assert "update: rolled back" in stdout
    assert _since(rig, mark) == ["set-state B bad"]
    rolled = events[-1]
    assert (rolled["event"], rolled["reason"], rolled["version"], rolled["to_version"]) == (
        "software.update_rolled_back", "self-test failed", "1.1.0", "1.0.0")
    assert rig.boot() == "A"
    stdout, events = _egm_run(rig, tmp_path)
    assert "update: running" in stdout and (events[-1]["version"], events[-1]["state"]) == ("1.0.0", "good")


@needs_rauc
def test_the_technician_commits_and_rolls_back_through_rauc(rig: RaucRig, tmp_path: Path) -> None:
    def egm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*EGM, "update", *args, "--backend", "rauc", "--dir", str(tmp_path / "update")],
                              capture_output=True, text=True, cwd=ROOT, env=rig.env, check=False)

    rig.boot()
    _egm_run(rig, tmp_path)
    assert "nothing to roll back" in egm("rollback").stderr
    _install_b(rig)
    rig.start("A")                                             # installed; A still runs (no reboot yet)
    assert json.loads(egm("status", "--json").stdout)["slots"]["B"]["state"] == "trial"
    mark = len(rig.calls())
    done = egm("rollback", "--json")                           # an installed update given up before its trial
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"next_boot": "A"}
    assert _since(rig, mark) == ["set-primary A", "set-state B bad"]
    assert rig.boot() == "A"

    rig.stop_service()
    rig.grubenv.write_text(rig.grubenv.read_text().replace("B_OK=0", "B_OK=1").replace("ORDER=A B", "ORDER=B A"))
    assert rig.boot() == "B"
    Ledger.open(tmp_path / "state2").close()
    mark = len(rig.calls())
    done = egm("commit", "--state-dir", str(tmp_path / "state2"))
    assert done.returncode == 0, done.stderr
    assert _since(rig, mark) == ["set-state B good"]
    with Ledger.open(tmp_path / "state2", read_only=True) as ledger:
        assert ledger.events(1)[0]["event"] == "software.update_committed"
    assert "nothing to commit" in egm("commit").stderr


@needs_rauc
def test_a_bundle_of_a_revoked_signer_is_refused_and_rauc_is_not_asked(rig: RaucRig, tmp_path: Path) -> None:
    ca = tmp_path / "ca"
    signer = pki.issue(ca, "update-signer", "release-2026")
    tree = tmp_path / "tree"
    (tree / "egm").mkdir(parents=True)
    (tree / "egm" / "main.py").write_text("print('1.1.0')\n")
    bundle = tmp_path / "egm-1.1.0.raucb"
    rauc_bundle.make(tree, "1.1.0", signer.cert, signer.key, ca / "ca.cert.pem", bundle)
    rig.boot()
    _egm_run(rig, tmp_path)
    assert subprocess.run([*EGM, "certs", "revoke", "--dir", str(ca), "release-2026"], cwd=ROOT,
                          capture_output=True).returncode == 0
    grub, mark = rig.grub(), len(rig.calls())
    done = subprocess.run([*EGM, "update", "install", str(bundle), "--config", str(_config(tmp_path)),
                           "--keyring", str(ca / "ca.cert.pem"), "--crl", str(ca / "crl.pem")],
                          capture_output=True, text=True, cwd=ROOT, env=rig.env, check=False)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "certificate revoked" in done.stderr, done.stderr
    assert rig.grub() == grub and _since(rig, mark) == []
    state = json.loads((tmp_path / "update" / "rauc-state.json").read_text())
    assert [e["event"] for e in state["pending"]][-2:] == ["software.update_started", "software.update_refused"]
    assert state["pending"][-1]["reason"] == "revoked", state["pending"][-1]
    _, events = _egm_run(rig, tmp_path)                        # the terminal writes them at its next power-up
    assert [e["event"] for e in events][-3:-1] == ["software.update_started", "software.update_refused"]
    assert json.loads((tmp_path / "update" / "rauc-state.json").read_text())["pending"] == []


@needs_rauc
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv (util-linux) "
                    "to call RAUC as other users")
@pytest.mark.parametrize("with_policy", [True, False])
def test_only_root_and_the_egm_group_may_call_rauc(tmp_path: Path, with_policy: bool) -> None:
    """deploy/update/egm-rauc-bus.conf after an allow-all rule (Debian's rauc-service policy):
    root and the group egm (here nogroup, nobody's) are let through, any other user is refused."""
    policy = tmp_path / "egm-rauc.conf"
    policy.write_text((ROOT / "deploy/update/egm-rauc-bus.conf").read_text().replace('group="egm"', 'group="nogroup"'))
    pki.create_ca(tmp_path / "ca", name="casino CA")
    rig = RaucRig(tmp_path / "rauc", tmp_path / "ca" / "ca.cert.pem", {"A": "1.0.0", "B": None},
                  bus_policy=policy if with_policy else None)
    try:
        rig.boot()
        assert rig.rauc("status").returncode == 0
        assert rig.rauc("status", user="nobody").returncode == 0
        other = rig.rauc("status", "mark-good", "other", user="daemon")   # would make the empty slot B bootable
        if with_policy:
            assert other.returncode != 0 and "Rejected send message" in other.stderr, other.stderr
            assert rig.grub()["B_OK"] == "0" and "set-state B good" not in rig.calls()
        else:                                                   # Debian's policy alone lets anyone in
            assert other.returncode == 0 and rig.grub()["B_OK"] == "1", other.stderr
    finally:
        rig.close()


def test_the_terminal_plays_on_when_rauc_cannot_be_reached(tmp_path: Path) -> None:
    """No RAUC service on the bus (or no rauc at all): one line says so, the game still starts."""
    state_dir = tmp_path / "state"
    env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}"}
    done = subprocess.run([*EGM, "run", "--sim", "--headless", "--autoplay", "1", "--state-dir", str(state_dir),
                           "--config", str(_config(tmp_path))], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "update: unavailable (" in done.stdout and "cabinet: IDLE" in done.stdout
    assert "round " in done.stdout                             # it played


# --- the rauc backend's reading of RAUC, without RAUC ----------------------------------------------

def _status(booted: str, primary: str, good: dict[str, bool], versions: dict[str, str | None]):
    from firmware.update.rauc_system import parse_status

    slots = [{f"appfs.{i}": {"bootname": name, "boot_status": "good" if good[name] else "bad",
                             "slot_status": {"bundle": {"version": versions[name]}}}}
             for i, name in enumerate(("A", "B"))]
    return parse_status(json.dumps({"booted": booted, "boot_primary": f"appfs.{'AB'.index(primary)}", "slots": slots}))


@pytest.mark.parametrize("booted,primary,good,committed,expected", [
    ("A", "A", {"A": False, "B": False}, None, {"A": "good", "B": "bad"}),                 # the factory boot
    ("A", "A", {"A": False, "B": False}, ("A", "1.0.0"), {"A": "good", "B": "bad"}),       # GRUB's TRY=1, committed
    ("A", "B", {"A": True, "B": True}, ("A", "1.0.0"), {"A": "good", "B": "trial"}),       # installed, not booted
    ("B", "B", {"A": True, "B": False}, ("A", "1.0.0"), {"A": "good", "B": "trial"}),      # booted on trial
    ("B", "B", {"A": True, "B": False}, ("B", "1.1.0"), {"A": "good", "B": "good"}),       # committed, booting again
    ("A", "B", {"A": True, "B": False}, ("A", "1.0.0"), {"A": "good", "B": "bad"}),        # a failed trial
])
def test_rauc_slots_read_as_the_tables_states(booted, primary, good, committed, expected) -> None:
    from firmware.update.rauc_flow import state_of
    from firmware.update.rauc_state import RaucState

    status = _status(booted, primary, good, {"A": "1.0.0", "B": "1.1.0"})
    state = RaucState(committed=None if committed is None else {"slot": committed[0], "version": committed[1]})
    assert {name: state_of(state, status, slot) for name, slot in status.slots.items()} == expected


@pytest.mark.parametrize("text", ["", "[]", '{"booted": "C", "slots": []}', '{"slots": [{"appfs.0": 3}]}'])
def test_rauc_status_that_is_not_what_rauc_prints_is_one_clear_error(text: str) -> None:
    from firmware.errors import EgmError
    from firmware.update.rauc_system import parse_status

    with pytest.raises(EgmError, match="(?i)rauc"):
        parse_status(text)
