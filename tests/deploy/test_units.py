"""``systemd-analyze verify`` passes on every unit in deploy/cabinet (systemd/*.service, mounts/*.mount;
tests/deploy/unit_check.py says how it runs without the package installed), and fails on a broken one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.deploy.unit_check import exec_paths, verify

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted([*(ROOT / "deploy/cabinet/systemd").glob("*.service"), *(ROOT / "deploy/cabinet/mounts").glob("*.mount"),
                *(ROOT / "deploy/update").glob("*.service")])

pytestmark = pytest.mark.skipif(shutil.which("systemd-analyze") is None or not Path("/usr/lib/systemd/system").is_dir(),
                                reason="systemd-analyze (Debian package systemd) is not installed")


def test_the_cabinet_has_its_units():
    assert {u.name for u in UNITS} >= {"egm-terminal.service", "egm-kiosk.service", "var-lib-egm.mount",
                                       "egm-update-boot.service"}


@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_every_unit_verifies_cleanly(unit, tmp_path):
    code, said = verify([unit], tmp_path)
    assert code == 0 and said == "", said


def test_the_terminal_unit_is_a_notify_service_with_a_watchdog_as_user_egm():
    text = (ROOT / "deploy/cabinet/systemd/egm-terminal.service").read_text()
    for line in ("Type=notify", "WatchdogSec=10s", "Restart=on-failure", "User=egm", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "ReadWritePaths=/var/lib/egm", "PrivateTmp=yes",
                 "RequiresMountsFor=/var/lib/egm"):
        assert line in text.splitlines(), line
    assert "/usr/bin/egm" in exec_paths(text)


def test_the_terminal_starts_after_the_update_boot_step_with_the_cabinets_update_backend():
    """egm-update-boot.service (directory backend) runs before the terminal; the cabinet's
    terminal.toml selects RAUC's partitions, which the terminal reaches through rauc.service."""
    from firmware.commands._common import load_terminal_config

    terminal = (ROOT / "deploy/cabinet/systemd/egm-terminal.service").read_text().splitlines()
    boot = (ROOT / "deploy/update/egm-update-boot.service").read_text().splitlines()
    after = " ".join(line.split("=", 1)[1] for line in terminal if line.startswith("After="))
    assert {"egm-update-boot.service", "rauc.service"} <= set(after.split())
    assert "Before=egm-terminal.service" in boot and "RequiredBy=egm-terminal.service" in boot
    assert "ExecStart=/usr/bin/egm update boot --dir /var/lib/egm/update" in boot
    update = load_terminal_config(str(ROOT / "deploy/cabinet/terminal.toml")).update
    assert (update.backend, update.dir) == ("rauc", "/var/lib/egm/update")


@pytest.mark.parametrize("breakage", [
    ("WatchdogSec=10s", "WatchdogSec=banana"),          # a bad value: only a warning, exit status 0
    ("Type=notify", "Type=notifyy"),
    ("Restart=on-failure", "Restrat=on-failure"),        # a misspelt key
    ("[Service]", "[Servic]"),                           # no ExecStart= left: refused
    ("ExecStart=/usr/bin/egm", "ExecStart=egm"),         # not an absolute path
])
def test_a_broken_unit_is_caught(breakage, tmp_path):
    good = (ROOT / "deploy/cabinet/systemd/egm-terminal.service").read_text()
    old, new = breakage
    assert f"\n{old}" in good
    broken = tmp_path / "unit" / "egm-terminal.service"
    broken.parent.mkdir()
    broken.write_text(good.replace(f"\n{old}", f"\n{new}", 1))
    code, said = verify([broken], tmp_path / "root")
    assert code != 0 or said != ""


#: The most ``systemd-analyze security`` may rate a unit (0 = fully sandboxed, 10 = not at all;
#: measured: egm-terminal 1.7, egm-kiosk 1.4).
MAX_EXPOSURE = 2.0


@pytest.mark.parametrize("unit", [u for u in UNITS if u.suffix == ".service"], ids=lambda u: u.name)
def test_every_service_is_sandboxed(unit, tmp_path):
    import re
    import subprocess

    code, said = verify([unit], tmp_path)
    assert code == 0, said
    done = subprocess.run(["systemd-analyze", "security", "--offline=true", f"--root={tmp_path}", unit.name],
                          capture_output=True, text=True, timeout=60)
    level = re.search(r"Overall exposure level for \S+: ([0-9.]+)", done.stdout)
    assert level is not None, done.stdout[-500:] + done.stderr
    assert float(level.group(1)) <= MAX_EXPOSURE, done.stdout
