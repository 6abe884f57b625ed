"""Field update end to end on directories standing for the A/B slots (issue 28, docs/update.md).

Bundles are made from tiny trees with the real ``rauc`` (skipped, with the reason, when rauc or
mksquashfs is not installed: ``make deploy-tools``); the slot state machine, the boot counter and
the payload checks are tested without it.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from egmproto import pki
from firmware.ledger.ledger import Ledger
from firmware.update import bundle as rauc_bundle
from firmware.update.boot import boot, commit, power_up_report, rollback
from firmware.update.errors import UpdateError, UpdateRefused
from firmware.update.install import install
from firmware.update.journal import flush
from firmware.update.machine import STATES, TRANSITIONS, next_state
from firmware.update.slots import SlotStore
from firmware.update.tree import unpack
from firmware.update.version import check_newer

ROOT = Path(__file__).resolve().parents[2]
HAVE_RAUC = shutil.which("rauc") is not None and shutil.which("mksquashfs") is not None
needs_rauc = pytest.mark.skipif(not HAVE_RAUC, reason="rauc or mksquashfs is not installed "
                                                      "(apt-get install -y rauc squashfs-tools)")


def _tree(root: Path, version: str) -> Path:
    tree = root / f"tree-{version}"
    (tree / "egm").mkdir(parents=True)
    (tree / "VERSION").write_text(version + "\n")
    (tree / "egm" / "main.py").write_text(f"print('egm {version}')\n")
    return tree


def _signer(ca_dir: Path, name: str) -> pki.IssuedFiles:
    pki.create_ca(ca_dir, name=f"{name} CA")
    return pki.issue(ca_dir, "update-signer", name)


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A casino CA with an update signer, a foreign CA, and bundles 0.9, 1.1, 1.2 of a tiny tree."""
    if not HAVE_RAUC:
        pytest.skip("rauc or mksquashfs is not installed (apt-get install -y rauc squashfs-tools)")
    root = tmp_path_factory.mktemp("kit")
    ours, foreign = _signer(root / "ca", "casino"), _signer(root / "other-ca", "intruder")
    ca, other_ca = root / "ca" / "ca.cert.pem", root / "other-ca" / "ca.cert.pem"
    out: dict[str, Path] = {"ca": ca, "root": root}
    for version in ("0.9.0", "1.1.0", "1.2.0"):
        out[version] = root / f"egm-{version}.raucb"
        rauc_bundle.make(_tree(root, version), version, ours.cert, ours.key, ca, out[version])
    out["foreign"] = root / "foreign.raucb"
    rauc_bundle.make(root / "tree-1.1.0", "1.1.0", foreign.cert, foreign.key, other_ca, out["foreign"])
    # signed under our CA, but by a terminal's certificate (clientAuth, not codeSigning)
    terminal = pki.issue(root / "ca", "terminal", "EGM-0001")
    content = root / "wrong-purpose"
    content.mkdir()
    rauc_bundle.pack(root / "tree-1.1.0", content / "app.tar")
    (content / "manifest.raucm").write_text("[update]\ncompatible=egm-terminal\nversion=1.1.0\n\n"
                                            "[bundle]\nformat=verity\n\n[image.appfs]\nfilename=app.tar\n")
    out["wrong-purpose"] = root / "wrong-purpose.raucb"
    subprocess.run(["rauc", "bundle", "--cert", str(terminal.cert), "--key", str(terminal.key),
                    "--mksquashfs-args=-noI -noD -noF -noX", str(content), str(out["wrong-purpose"])],
                   check=True, capture_output=True)
    # unsigned: the same SquashFS content with no signature appended
    content = root / "unsigned"
    content.mkdir()
    shutil.copy(root / "tree-1.1.0" / "VERSION", content / "app.tar")
    (content / "manifest.raucm").write_text("[update]\ncompatible=egm-terminal\nversion=1.1.0\n\n"
                                            "[image.appfs]\nfilename=app.tar\n")
    out["unsigned"] = root / "unsigned.raucb"
    subprocess.run(["mksquashfs", str(content), str(out["unsigned"]), "-quiet", "-noappend"], check=True,
                   capture_output=True)
    return out


def _pair(tmp_path: Path) -> SlotStore:
    store = SlotStore(tmp_path / "ab")
    store.init("1.0.0", _tree(tmp_path, "1.0.0"))
    boot(store)
    return store


def _snapshot(store: SlotStore) -> tuple[dict, dict]:
    state = store.load().to_json()
    state.pop("pending")
    files = {str(p.relative_to(store.dir)): p.read_bytes() for p in sorted((store.dir / "slots").rglob("*"))
             if p.is_file()}
    return state, files


def _events(store: SlotStore) -> list[str]:
    return [e["event"] for e in store.load().pending]


def _running(store: SlotStore) -> str:
    return (store.dir / "current" / "VERSION").read_text().strip()


# --- end to end with RAUC ------------------------------------------------------------------------

@needs_rauc
def test_a_good_update_is_booted_on_trial_and_committed_at_attract(kit, tmp_path: Path) -> None:
    store = _pair(tmp_path)
    done = install(store, kit["1.1.0"], kit["ca"])
    assert (done.slot, done.version, done.previous) == ("B", "1.1.0", "1.0.0")
    assert _running(store) == "1.0.0"                        # installing does not touch the running slot
    b = boot(store)
    assert (b.slot, b.state, b.attempts_left) == ("B", "trial", 2) and _running(store) == "1.1.0"
    assert power_up_report(store, self_test_passed=True, at_attract=True) == "committed"
    assert boot(store).slot == "B" and store.load().slots["B"].state == "good"
    assert _events(store) == ["software.update_started", "software.update_trial", "software.installed",
                              "software.update_committed"]
    with Ledger.open(tmp_path / "state") as ledger:           # into critical memory
        assert flush(store, ledger.event) == 4
        logged = [e["event"] for e in reversed(ledger.events(10))]
    assert logged[-4:] == _events_names("started", "trial", None, "committed")
    assert store.load().pending == []


def _events_names(*names: str | None) -> list[str]:
    return [f"software.update_{n}" if n else "software.installed" for n in names]


@needs_rauc
def test_a_failing_self_test_rolls_back_to_the_old_version(kit, tmp_path: Path) -> None:
    store = _pair(tmp_path)
    install(store, kit["1.1.0"], kit["ca"])
    assert boot(store).slot == "B"
    assert power_up_report(store, self_test_passed=False, at_attract=False) == "rolled_back"
    again = boot(store)
    assert (again.slot, again.version, again.rolled_back) == ("A", "1.0.0", False)
    assert _running(store) == "1.0.0"
    assert store.load().slots["B"].state == "bad"
    assert power_up_report(store, self_test_passed=True, at_attract=True) == "running"
    assert _events(store)[-3:] == ["software.installed", "software.update_rolled_back", "software.installed"]
    rolled = store.load().pending[-2]
    assert (rolled["reason"], rolled["version"], rolled["to_version"]) == ("self-test failed", "1.1.0", "1.0.0")
    # a newer bundle may replace the refused one
    assert install(store, kit["1.2.0"], kit["ca"]).slot == "B"


@needs_rauc
def test_a_trial_that_never_reaches_attract_falls_back_when_its_attempts_are_spent(kit, tmp_path: Path) -> None:
    store = _pair(tmp_path)
    install(store, kit["1.1.0"], kit["ca"], attempts=2)
    assert [boot(store).slot for _ in range(2)] == ["B", "B"]      # crashed or hung both times
    third = boot(store)
    assert (third.slot, third.rolled_back) == ("A", True) and _running(store) == "1.0.0"
    assert store.load().pending[-1]["reason"] == "did not reach attract"


@needs_rauc
@pytest.mark.parametrize("case", ["tampered-payload", "tampered-signature", "unsigned", "foreign-ca",
                                  "wrong-purpose", "downgrade",
                                  "same-version"])
def test_a_bad_bundle_is_refused_and_leaves_the_slots_unchanged(kit, tmp_path: Path, case: str) -> None:
    store = _pair(tmp_path)
    bundle = {"unsigned": kit["unsigned"], "foreign-ca": kit["foreign"], "downgrade": kit["0.9.0"],
              "wrong-purpose": kit["wrong-purpose"]}.get(case, kit["1.1.0"])
    if case == "same-version":
        install(store, kit["1.1.0"], kit["ca"])
        boot(store)
        commit(store)
    if case.startswith("tampered"):
        data = bytearray(kit["1.1.0"].read_bytes())
        where = len(data) // 4 if case == "tampered-payload" else len(data) - 300
        data[where] ^= 0x01
        bundle = tmp_path / "tampered.raucb"
        bundle.write_bytes(bytes(data))
    before = _snapshot(store)
    with pytest.raises(UpdateRefused) as refused:
        install(store, bundle, kit["ca"])
    assert _snapshot(store) == before
    expected = {"downgrade": "downgrade", "same-version": "same-version", "tampered-payload": "payload"}
    assert refused.value.reason == expected.get(case, "signature")
    last = store.load().pending[-1]
    assert last["event"] == "software.update_refused" and last["reason"] == refused.value.reason


@needs_rauc
def test_the_command_line_installs_shows_and_refuses(kit, tmp_path: Path) -> None:
    def egm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "firmware.cli", "update", *args, "--dir", str(tmp_path / "ab")],
                              capture_output=True, text=True, cwd=ROOT, check=False)

    assert egm("init", "--version", "1.0.0").returncode == 0
    assert egm("boot").returncode == 0
    Ledger.open(tmp_path / "state").close()                  # the terminal's critical memory
    missing = egm("install", str(kit["1.1.0"]), "--keyring", str(kit["ca"]), "--state-dir", str(tmp_path / "none"))
    assert missing.returncode == 2 and json.loads(egm("status", "--json").stdout)["slots"]["B"]["state"] == "empty"
    done = egm("install", str(kit["1.1.0"]), "--keyring", str(kit["ca"]), "--json",
               "--crl", str(kit["ca"].parent / "crl.pem"), "--state-dir", str(tmp_path / "state"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["slot"] == "B"
    status = json.loads(egm("status", "--json").stdout)
    assert status["slots"]["B"] == {"state": "trial", "version": "1.1.0"} and status["pending"] == []
    with Ledger.open(tmp_path / "state", read_only=True) as ledger:
        assert [e["event"] for e in ledger.events(2)] == ["software.update_trial", "software.update_started"]
    bad = egm("install", str(kit["0.9.0"]), "--keyring", str(kit["ca"]), "--no-crl")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "downgrade" in bad.stderr
    assert egm("rollback").returncode == 0
    assert json.loads(egm("status", "--json").stdout)["slots"]["B"]["state"] == "bad"


@needs_rauc
def test_a_bundle_signed_by_a_revoked_signer_is_refused(tmp_path: Path) -> None:
    """The casino CA revokes the update signer (egm certs revoke): its bundles are refused."""
    ca_dir = tmp_path / "ca"
    signer = _signer(ca_dir, "release-2026")
    bundle = tmp_path / "egm-1.1.0.raucb"
    rauc_bundle.make(_tree(tmp_path, "1.1.0"), "1.1.0", signer.cert, signer.key, ca_dir / "ca.cert.pem", bundle)
    egm = [sys.executable, "-m", "firmware.cli"]
    ab = str(tmp_path / "ab")
    assert subprocess.run([*egm, "update", "init", "--dir", ab, "--version", "1.0.0"], cwd=ROOT).returncode == 0
    assert subprocess.run([*egm, "update", "boot", "--dir", ab], cwd=ROOT, capture_output=True).returncode == 0
    store = SlotStore(ab)
    rauc_bundle.check(bundle, ca_dir / "ca.cert.pem", crl=ca_dir / "crl.pem")     # not revoked yet: accepted
    revoked = subprocess.run([*egm, "certs", "revoke", "--dir", str(ca_dir), "release-2026"], cwd=ROOT,
                             capture_output=True, text=True)
    assert revoked.returncode == 0, revoked.stderr
    before = _snapshot(store)
    done = subprocess.run([*egm, "update", "install", bundle, "--dir", ab, "--keyring", str(ca_dir / "ca.cert.pem"),
                           "--crl", str(ca_dir / "crl.pem")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "certificate revoked" in done.stderr, done.stderr
    assert _snapshot(store) == before
    assert store.load().pending[-1]["reason"] == "revoked"
    # without the CRL the same bundle would pass the signature check: the CRL is what refuses it
    assert rauc_bundle.check(bundle, ca_dir / "ca.cert.pem").version == "1.1.0"


# --- our side, without RAUC ----------------------------------------------------------------------

def test_every_move_not_in_the_table_is_refused() -> None:
    events = {event for _, event in TRANSITIONS}
    for state in STATES:
        for event in events:
            if (state, event) in TRANSITIONS:
                assert next_state(state, event) == TRANSITIONS[(state, event)]
            else:
                with pytest.raises(UpdateError):
                    next_state(state, event)
    assert ("bad", "boot") not in TRANSITIONS and ("installing", "boot_trial") not in TRANSITIONS


def test_versions_follow_pep_440_and_only_newer_is_accepted() -> None:
    check_newer("1.10.0", "1.9.0")
    check_newer("1.0.0", "1.0.0rc1")
    check_newer("1.0.0", None)
    for offered, running, reason in (("1.9.0", "1.10.0", "downgrade"), ("1.0.0rc1", "1.0.0", "downgrade"),
                                     ("1.0", "1.0.0", "same-version")):
        with pytest.raises(UpdateRefused) as refused:
            check_newer(offered, running)
        assert refused.value.reason == reason
    with pytest.raises(UpdateError):
        check_newer("not a version", "1.0.0")


def test_a_slot_left_installing_by_a_power_cut_is_never_booted(tmp_path: Path) -> None:
    store = _pair(tmp_path)
    with store.locked() as state:
        state.move("B", "install_begin")
        state.primary = "B"
    b = boot(store)
    assert (b.slot, b.rolled_back) == ("A", True) and _running(store) == "1.0.0"


def test_commit_and_rollback_need_a_trial(tmp_path: Path) -> None:
    store = _pair(tmp_path)
    with pytest.raises(UpdateError, match="nothing to commit"):
        commit(store)
    with pytest.raises(UpdateError, match="nothing to roll back"):
        rollback(store)




@pytest.mark.parametrize("name,kind,link", [("../evil", tarfile.REGTYPE, ""), ("/etc/evil", tarfile.REGTYPE, ""),
                                            ("ok/link", tarfile.SYMTYPE, "../../etc/passwd"),
                                            ("dev", tarfile.CHRTYPE, "")])
def test_a_hostile_payload_is_refused_before_anything_is_written(tmp_path: Path, name: str, kind: bytes,
                                                                 link: str) -> None:
    archive = tmp_path / "app.tar"
    with tarfile.open(archive, "w") as tar:
        good = tarfile.TarInfo("ok/file")
        good.size = 2
        tar.addfile(good, io.BytesIO(b"ok"))
        bad = tarfile.TarInfo(name)
        bad.type, bad.linkname = kind, link
        tar.addfile(bad, io.BytesIO(b""))
    with pytest.raises(UpdateRefused, match="payload"):
        unpack(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_link_inside_the_tree_is_kept(tmp_path: Path) -> None:
    archive = tmp_path / "app.tar"
    with tarfile.open(archive, "w") as tar:
        good = tarfile.TarInfo("lib/real.py")
        good.size = 2
        tar.addfile(good, io.BytesIO(b"ok"))
        link = tarfile.TarInfo("bin/egm")
        link.type, link.linkname = tarfile.SYMTYPE, "../lib/real.py"
        tar.addfile(link)
    unpack(archive, tmp_path / "out")
    assert (tmp_path / "out" / "bin" / "egm").read_bytes() == b"ok"


def test_a_damaged_state_file_is_one_clear_error(tmp_path: Path) -> None:
    store = _pair(tmp_path)
    (store.dir / "state.json").write_text('{"format": 1, "primary": "C"}')
    with pytest.raises(UpdateError, match="damaged"):
        boot(store)


# --- the terminal's power-up (egm run --update-dir), without RAUC ---------------------------------

def _trial_pair(tmp_path: Path) -> SlotStore:
    """Slot A good at 1.0.0, slot B on trial at 1.1.0 as an install leaves it, then booted."""
    store = _pair(tmp_path)
    shutil.copytree(_tree(tmp_path, "1.1.0"), store.slot_dir("B"), dirs_exist_ok=True)
    with store.locked() as state:
        state.move("B", "install_begin")
        state.move("B", "install_done")
        state.slots["B"].version = "1.1.0"
        state.primary, state.attempts = "B", 3
    assert boot(store).slot == "B"
    return store


def _egm_run(tmp_path: Path, store: SlotStore, *extra: str, rounds: int = 1) -> tuple[str, list[dict]]:
    state_dir = tmp_path / "state"
    done = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay", str(rounds),
                           "--state-dir", str(state_dir), "--update-dir", str(store.dir), *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    with Ledger.open(state_dir, read_only=True) as ledger:
        events = [e for e in ledger.events(200) if e["event"].startswith("software.")]
    return done.stdout, events


def test_the_terminal_commits_its_trial_at_attract(tmp_path: Path) -> None:
    store = _trial_pair(tmp_path)
    stdout, events = _egm_run(tmp_path, store)
    assert "update: committed" in stdout
    assert store.load().slots["B"].state == "good" and store.load().pending == []
    assert [e["event"] for e in reversed(events)] == ["software.installed", "software.update_committed"]
    assert events[-1]["version"] == "1.1.0" and events[-1]["state"] == "trial"


def test_the_terminal_rolls_back_a_trial_whose_self_test_fails(tmp_path: Path) -> None:
    store = _trial_pair(tmp_path)
    config = tmp_path / "floor.toml"
    config.write_text("[software]\ndevelopment = false\n")      # no signed manifest: software check fails
    stdout, events = _egm_run(tmp_path, store, "--config", str(config), rounds=0)   # power up, stop
    assert "update: rolled back" in stdout
    assert [e["event"] for e in reversed(events)] == ["software.installed", "software.update_rolled_back"]
    assert events[0]["reason"] == "self-test failed"
    again = boot(store)
    assert (again.slot, again.version) == ("A", "1.0.0") and _running(store) == "1.0.0"


def test_a_trial_that_powers_up_into_a_tilt_is_committed_once_attract_is_reached(tmp_path: Path) -> None:
    store = _trial_pair(tmp_path)
    egm = [sys.executable, "-m", "firmware.cli"]
    state_dir = str(tmp_path / "state")
    terminal = subprocess.Popen([*egm, "run", "--sim", "--headless", "--state-dir", state_dir, "--update-dir",
                                 str(store.dir), "--sim-door-open", "main"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert terminal.stdout is not None
        lines = []
        for line in terminal.stdout:
            lines.append(line)
            if line.startswith("cabinet:"):
                break
        assert "update: trial\n" in lines and "TILT" in lines[-1]
        assert store.load().slots["B"].state == "trial"            # not committed in a tilt
        for words in (["door", "close", "main"], ["stop"]):
            subprocess.run([*egm, "simctl", "--state-dir", state_dir, *words], cwd=ROOT, check=True,
                           capture_output=True, timeout=30)
        terminal.wait(30)
    finally:
        if terminal.poll() is None:
            terminal.kill()
            terminal.wait()
    assert store.load().slots["B"].state == "good"
    with Ledger.open(state_dir, read_only=True) as ledger:
        events = [e for e in ledger.events(200) if e["event"].startswith("software.")]
    assert [e["event"] for e in reversed(events)] == ["software.installed", "software.update_committed"]
