"""deploy/compose/: what a reviewer checks in the evaluation floor's compose file, the file validated
by Docker Compose (without an engine), and its one-shot PKI script run for real."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from host.local.nats import find_nats_server

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose" / "compose.yaml"
INIT = ROOT / "deploy" / "compose" / "init-floor.sh"


def load(text: str | None = None) -> dict[str, Any]:
    doc = yaml.safe_load(COMPOSE.read_text() if text is None else text)
    assert isinstance(doc, dict)
    return doc


def problems(doc: dict[str, Any]) -> list[str]:
    """What a reviewer would refuse in the compose file, one line each."""
    out = []
    services: dict[str, Any] = doc["services"]
    for name, svc in services.items():
        if "healthcheck" not in svc:
            out.append(f"{name}: no healthcheck")
        deps = svc.get("depends_on", {})
        if not isinstance(deps, dict):
            out.append(f"{name}: depends_on without conditions")
            deps = {}
        for dep, how in deps.items():
            if dep not in services:
                out.append(f"{name}: depends on unknown {dep}")
                continue
            wanted = "service_completed_successfully" if services[dep].get("restart") == "no" else "service_healthy"
            if (how or {}).get("condition") != wanted:
                out.append(f"{name}: depends on {dep} without condition {wanted}")
        if name != "pki" and "pki" not in deps:
            out.append(f"{name}: does not wait for the pki one-shot")
        env = svc.get("environment", {})
        for key, _value in (env.items() if isinstance(env, dict) else (e.split("=", 1) for e in env)):
            if re.search(r"PASS|SECRET|TOKEN|KEY", key) and not key.endswith("_FILE"):
                out.append(f"{name}: secret inline in environment {key}")
        for port in svc.get("ports", []):
            if not str(port).startswith("127.0.0.1:"):
                out.append(f"{name}: port {port} published on every interface")
        for volume in svc.get("volumes", []):
            source = str(volume).split(":", 1)[0]
            if not source.startswith((".", "/")) and source not in doc.get("volumes", {}):
                out.append(f"{name}: volume {source} not declared")
    text = yaml.safe_dump(doc)
    if re.search(r"://[^/\s:@'\"]+:[^/\s@'\"]+@", text):
        out.append("a URL with a password inline")
    return out


def test_the_floor_is_complete_and_reviewed() -> None:
    doc = load()
    services = doc["services"]
    assert {"pki", "postgres", "broker1", "broker2", "broker3", "host0", "host1", "terminal"} <= set(services)
    assert problems(doc) == []
    assert sorted(p for s in services.values() for p in s.get("ports", [])) == [
        "127.0.0.1:8443:8443", "127.0.0.1:8883:8883"]
    assert "--web" in services["host0"]["command"] and "--web" not in services["host1"]["command"]
    assert services["terminal"]["profiles"] == ["sim"]
    for n in (1, 2, 3):                                            # each node's config is made by the one-shot
        assert services[f"broker{n}"]["command"] == ["-c", f"/pki/broker/n{n}.conf"]
    build = services["pki"]["build"]
    assert (COMPOSE.parent / build["context"]).resolve() == ROOT
    assert (ROOT / build["dockerfile"]).is_file()


@pytest.mark.parametrize("break_it, said", [
    (lambda d: d["services"]["broker2"].pop("healthcheck"), "broker2: no healthcheck"),
    (lambda d: d["services"]["postgres"].pop("depends_on"), "postgres: does not wait for the pki one-shot"),
    (lambda d: d["services"]["host1"].__setitem__("depends_on", ["postgres"]), "host1: depends_on without conditions"),
    (lambda d: d["services"]["host0"]["depends_on"]["postgres"].__setitem__("condition", "service_started"),
     "host0: depends on postgres without condition service_healthy"),
    (lambda d: d["services"]["postgres"]["environment"].__setitem__("POSTGRES_PASSWORD", "hunter2"),
     "postgres: secret inline in environment POSTGRES_PASSWORD"),
    (lambda d: d["services"]["host0"].__setitem__("ports", ["8443:8443"]), "host0: port 8443:8443 published"),
    (lambda d: d["services"]["host1"]["command"].__setitem__(5, "postgresql://egm:pw@postgres/egm_host"),
     "a URL with a password inline"),
])
def test_the_review_catches(break_it: Callable[[dict[str, Any]], object], said: str) -> None:
    doc = load()
    break_it(doc)
    assert any(p.startswith(said) for p in problems(doc)), problems(doc)


def _compose() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


@pytest.mark.skipif(_compose() is None, reason="neither `docker compose` nor docker-compose is installed "
                                               "(Debian: docker-compose)")
def test_docker_compose_validates_it(tmp_path: Path) -> None:
    command = _compose()
    assert command is not None
    run = subprocess.run([*command, "-f", str(COMPOSE), "config", "-q"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    broken = tmp_path / "compose.yaml"
    broken.write_text(COMPOSE.read_text().replace("    restart: \"no\"\n", "    restart: \"no\"\n    bogus: 1\n", 1))
    (tmp_path / "terminal.toml").write_text("")
    run = subprocess.run([*command, "-f", str(broken), "config", "-q"], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "bogus" in run.stderr


@pytest.mark.slow                   # 18 egm commands: about 20 s on a quiet machine
def test_the_one_shot_makes_the_floor_pki(tmp_path: Path) -> None:
    """init-floor.sh, run here as the pki service runs it (twice: it is idempotent), with the
    repository's egm; every broker configuration it writes is one nats-server accepts."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    egm = bin_dir / "egm"
    egm.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m firmware.cli \"$@\"\n")
    egm.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", EGM_FLOOR_PKI=str(tmp_path / "pki"),
               EGM_FLOOR_SECRETS=str(tmp_path / "secrets"), EGM_FLOOR_TERMINAL=str(tmp_path / "terminal"))
    for d in ("pki", "secrets", "terminal"):
        (tmp_path / d).mkdir()
    for _ in range(2):
        run = subprocess.run(["sh", str(INIT)], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
    password = (tmp_path / "secrets" / "db-password").read_text().strip()
    assert len(password) >= 24 and password not in COMPOSE.read_text()
    assert (tmp_path / "secrets" / "pgpass").stat().st_mode & 0o077 == 0
    issued = tmp_path / "terminal" / "pki" / "issued"
    assert {p.name for p in issued.iterdir()} == {"EGM-0001.cert.pem", "EGM-0001.key.pem", "egm-host.cert.pem",
                                                 "egm-host.kem.cert.pem"}
    assert not (tmp_path / "pki" / "ca" / "issued" / "EGM-0001.key.pem").exists()   # made on the cabinet
    nats = find_nats_server()
    for n in (1, 2, 3):
        conf = tmp_path / "pki" / "broker" / f"n{n}.conf"
        assert f"egm-floor-broker-n{n}.cert.pem" in conf.read_text()
        if nats:
            check = subprocess.run([nats, "-t", "-c", str(conf)], capture_output=True, text=True, timeout=30)
            assert check.returncode == 0, check.stderr
