"""``egm hil list`` and the CI subset: ``egm hil run --target sim --only rng.kat software.signature``
as a subprocess against the simulated cabinet (the README's test command runs it with the rest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from firmware.hil.meta import STANDARDS

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
REQUIRED = {"id": str, "standard": str, "clause": str, "operator": bool, "title": str, "requirement": str,
            "duration_s": (int, float), "targets": list}


def egm(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "firmware.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def catalogue() -> list[dict]:
    proc = egm("hil", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_list_json_has_every_field_and_unique_ids(catalogue):
    assert {"rng.kat", "software.signature", "software.changed-byte"} <= {e["id"] for e in catalogue}
    for entry in catalogue:
        for key, kind in REQUIRED.items():
            assert isinstance(entry[key], kind), (entry["id"], key)
        assert entry["standard"] in STANDARDS
        assert entry["clause"] and entry["requirement"] and entry["title"]
        assert set(entry["targets"]) <= {"sim", "cabinet"} and entry["targets"]
    ids = [e["id"] for e in catalogue]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("standard", sorted(STANDARDS))
def test_list_standard_filters(catalogue, standard):
    proc = egm("hil", "list", "--standard", standard, "--json")
    assert proc.returncode == 0, proc.stderr
    chosen = json.loads(proc.stdout)
    assert chosen == [e for e in catalogue if e["standard"] == standard]


def test_list_table_and_a_bad_standard():
    proc = egm("hil", "list")
    assert proc.returncode == 0 and "rng.kat" in proc.stdout and "software.signature" in proc.stdout
    proc = egm("hil", "list", "--standard", "gli-99")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr and proc.stdout == ""


def test_ci_subset_against_the_simulated_cabinet(tmp_path):
    report = tmp_path / "lab"
    proc = egm("hil", "run", "--target", "sim", "--only", "rng.kat", "software.signature", "--report", str(report),
               "--operator", "CI", timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("junit.xml", "report.html", "run.json"):
        assert (report / name).is_file(), name
    doc = json.loads((report / "run.json").read_text())
    assert [(t["id"], t["verdict"]) for t in doc["tests"]] == [("rng.kat", "PASS"), ("software.signature", "PASS")]
    assert doc["software"]["verification"]["ok"] is True and len(doc["software"]["sha256"]) == 64
    kat = doc["tests"][0]
    assert sum(m["name"].startswith("vector ") and m["passed"] for m in kat["measurements"]) >= 22
    assert kat["evidence"] == []                          # no terminal: no cabinet evidence
    sig = doc["tests"][1]
    files = {e["path"].rsplit("/", 1)[1] for e in sig["evidence"]}
    assert {"meters-before.json", "meters-after.json", "events.json", "terminal-log.txt"} <= files
    for e in sig["evidence"]:
        assert (report / e["path"]).is_file()
    events = json.loads((report / "evidence" / "software.signature" / "events.json").read_text())
    assert any(e["event"] == "service_action" and e["action"] == "software hash" for e in events)
    cases = ET.parse(report / "junit.xml").getroot().find("testsuite").findall("testcase")
    assert [c.get("name") for c in cases] == ["rng.kat", "software.signature"]
    assert "2 pass, 0 fail" in proc.stdout
    assert not list((report / "sim" / "state").glob("control.sock"))   # the terminal was stopped


def test_run_json_prints_the_run_record(tmp_path):
    proc = egm("hil", "run", "--target", "sim", "--only", "rng.kat", "--report", str(tmp_path / "r"), "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc == json.loads((tmp_path / "r" / "run.json").read_text())
    assert doc["counts"]["PASS"] == 1 and doc["report_dir"] == str((tmp_path / "r").resolve())


def test_run_refuses_report_and_resume_together(tmp_path):
    proc = egm("hil", "run", "--target", "sim", "--report", str(tmp_path / "a"), "--resume", str(tmp_path / "b"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not both" in proc.stderr
    assert not (tmp_path / "a").exists()
