"""deploy/host/: every unit passes ``systemd-analyze verify`` with no warning, and a broken one does
not; ``egm host broker-config`` writes what ``nats-server -t`` accepts for each node."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from firmware.cli import main
from host.local.nats import find_nats_server

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted(p for p in (ROOT / "deploy" / "host").iterdir() if p.suffix in (".service", ".target"))
#: binaries of the installed layout (docs/install.md) that are not on this machine
INSTALLED = ("/opt/egm/host/bin/egm",)

analyze = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(analyze is None, reason="systemd-analyze is not installed (Debian: systemd)")


def verify(unit: Path, tmp_path: Path, text: str | None = None) -> tuple[int, str]:
    """``systemd-analyze verify`` on a copy of ``unit`` whose installed binaries point to a stub."""
    stub = tmp_path / "stub"
    stub.write_text("#!/bin/sh\nexit 0\n")
    stub.chmod(0o755)
    text = unit.read_text() if text is None else text
    for path in INSTALLED + (() if Path("/usr/sbin/nats-server").exists() else ("/usr/sbin/nats-server",)):
        text = text.replace(path, str(stub))
    copy = tmp_path / unit.name
    copy.write_text(text)
    run = subprocess.run([str(analyze), "verify", str(copy)], capture_output=True, text=True, timeout=60)
    return run.returncode, run.stdout + run.stderr


def test_the_units_are_there() -> None:
    assert {u.name for u in UNITS} >= {"egm-host@.service", "egm-host.target", "egm-broker@.service"}


@needs_analyze
@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_unit_verifies(unit: Path, tmp_path: Path) -> None:
    code, out = verify(unit, tmp_path)
    assert code == 0 and unit.name not in out, out


@needs_analyze
@pytest.mark.parametrize("unit", UNITS, ids=lambda u: u.name)
def test_a_broken_unit_does_not_verify(unit: Path, tmp_path: Path) -> None:
    text = unit.read_text()
    misspelt = text.replace("\nDescription=", "\nDescriptoin=", 1)      # an unknown key: a warning
    code, out = verify(unit, tmp_path, misspelt)
    assert code != 0 or unit.name in out
    if "ExecStart=" in text:                                            # a binary that is not there
        code, out = verify(unit, tmp_path, text.replace("ExecStart=", "ExecStart=/nonexistent", 1))
        assert code != 0 and "/nonexistent" in out


def test_the_host_unit_runs_one_worker_each() -> None:
    text = (ROOT / "deploy" / "host" / "egm-host@.service").read_text()
    command = text.split("\nExecStart=", 1)[1].split("\n", 1)[0]
    assert "--worker %i" in command and "--workers" not in command
    assert "User=egm" in text and "NoNewPrivileges=yes" in text and "ProtectSystem=strict" in text


@pytest.mark.skipif(find_nats_server() is None, reason="nats-server is not installed (Debian: nats-server)")
def test_broker_config_is_accepted_by_nats_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pki = tmp_path / "pki"
    assert main(["certs", "init", "--dir", str(pki)]) == 0
    nodes = "n1=broker1,n2=broker2,n3=broker3"
    for node in ("n1", "n2", "n3"):
        assert main(["certs", "issue", "--dir", str(pki), "--kind", "host", "--name", f"egm-floor-broker-{node}"]) == 0
        conf = tmp_path / f"{node}.conf"
        assert main(["host", "broker-config", "--nodes", nodes, "--node", node, "--pki", str(pki), "--cert",
                     f"egm-floor-broker-{node}", "--store", str(tmp_path / node), "--out", str(conf)]) == 0
        text = conf.read_text()
        assert "verify: true" in text and f"tls://broker{node[1]}:6222" not in text
        run = subprocess.run([str(find_nats_server()), "-t", "-c", str(conf)], capture_output=True, text=True,
                             timeout=30)
        assert run.returncode == 0, run.stderr
    capsys.readouterr()
    assert main(["host", "broker-config", "--nodes", nodes, "--node", "n4", "--pki", str(pki), "--store",
                 str(tmp_path)]) == 2
    assert "not one of --nodes" in capsys.readouterr().err
