"""The lab suite's framework (firmware/hil) on a synthetic suite: every verdict as such in run.json,
junit.xml and report.html, measurement limits, --only, --resume after a kill, bad target files."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from firmware.hil.errors import HilError
from firmware.hil.runner import run
from tests.hil.synthetic import SIM_VERDICTS, write_suite

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, suite: Path, **kw):
    kw.setdefault("report_dir", tmp_path / "report")
    return run("sim", kw.pop("only", ()), kw.pop("report_dir"), kw.pop("resume", None), "Tess Tester",
               kw.pop("prompt_timeout", 5.0), progress=False, suite=suite, out=io.StringIO(), **kw)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hil")
    suite = write_suite(tmp / "suite")
    record = _run(tmp, suite)
    return tmp / "report", record


def test_every_verdict_in_run_json(synthetic):
    folder, record = synthetic
    doc = json.loads((folder / "run.json").read_text())
    assert {t["id"]: t["verdict"] for t in doc["tests"]} == SIM_VERDICTS
    assert doc["counts"] == {"PASS": 2, "FAIL": 3, "ERROR": 1, "BLOCKED": 1, "SKIPPED": 2}
    by_id = {t["id"]: t for t in doc["tests"]}
    assert by_id["syn.blocked"]["reason"] == "the operator could not reach the door"
    assert by_id["syn.cabinet-only"]["reason"] == "not applicable to target sim"
    assert by_id["syn.skip"]["reason"] == "no printer fitted"
    assert by_id["syn.error"]["reason"].startswith("KeyError")
    assert "arithmetic is broken" in by_id["syn.assert"]["reason"]
    assert doc["operator"] == "Tess Tester" and doc["target"] == "sim"
    assert doc["software"]["sha256"] and len(doc["software"]["sha256"]) == 64
    assert record.exit_status() == 1


def test_measurements_carry_their_limits(synthetic):
    folder, record = synthetic
    passed = record.test("syn.pass")
    assert [(m.name, m.value, m.limits, m.passed) for m in passed.measurements] == [
        ("supply", 5, "4.5 .. 5.5 V", True), ("label", "ok", "== 'ok'", True)]
    assert [s.text for s in passed.steps] == ["measure a voltage"]
    assert passed.notes == ["a note for the reader"]
    assert json.loads((folder / "evidence" / "syn.pass" / "data.json").read_text()) == {"a": 1}
    failed = record.test("syn.fail")
    assert failed.reason == "supply = 6.25 V, outside 4.5 .. 5.5 V"
    assert failed.steps == []                               # a hard limit stops the test at once
    soft = record.test("syn.soft")
    assert [s.text for s in soft.steps] == ["went on after the soft measurement"]
    assert [m.passed for m in soft.measurements] == [False, True]
    assert "first = 0 outside >= 1" in soft.reason


def test_junit_has_the_verdicts(synthetic):
    folder, _ = synthetic
    suite = ET.parse(folder / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("9", "3", "1", "3")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == set(SIM_VERDICTS)
    assert cases["syn.fail"].find("failure").get("message") == "supply = 6.25 V, outside 4.5 .. 5.5 V"
    assert cases["syn.error"].find("error") is not None
    assert cases["syn.blocked"].find("skipped").get("message") == "blocked: the operator could not reach the door"
    assert cases["syn.skip"].find("skipped").get("message") == "no printer fitted"
    assert cases["syn.pass"].find("failure") is None and cases["syn.pass"].find("skipped") is None
    assert "supply = 5 V [4.5 .. 5.5 V] ok" in cases["syn.pass"].find("system-out").text


def test_html_report_states_every_verdict(synthetic):
    folder, _ = synthetic
    html = (folder / "report.html").read_text()
    for verdict in ("PASS", "FAIL", "ERROR", "BLOCKED", "SKIPPED"):
        assert f'class="{verdict}" data-verdict="{verdict}"' in html
    assert "BLOCKED</span> syn.blocked: the operator could not reach the door" in html
    assert "SKIPPED</span> syn.cabinet-only: not applicable to target sim" in html
    assert "supply = 6.25 V, outside 4.5 .. 5.5 V" in html
    assert "Tested by</th><td>Tess Tester" in html


def test_only_runs_the_ids_and_prefixes_named(tmp_path):
    suite = write_suite(tmp_path / "suite")
    record = _run(tmp_path, suite, only=["syn.pass", "syn.skip"])
    assert [t.id for t in record.tests] == ["syn.pass", "syn.skip"]
    assert record.only == ["syn.pass", "syn.skip"]
    for n, prefix in enumerate(("syn.", "syn")):
        record = _run(tmp_path, suite, only=[prefix], report_dir=tmp_path / f"r{n}")
        assert len(record.tests) == len(SIM_VERDICTS)


def test_only_an_unknown_id_is_an_error_and_nothing_runs(tmp_path):
    suite = write_suite(tmp_path / "suite")
    with pytest.raises(HilError, match="--only nothing.here: no test has that id or id prefix"):
        _run(tmp_path, suite, only=["nothing.here"])
    assert not (tmp_path / "report").exists()
    with pytest.raises(HilError, match="--only syn.s: no test"):     # a prefix ends at a dot
        _run(tmp_path, suite, only=["syn.pass", "syn.s"])


def test_a_suite_test_without_a_marker_is_refused(tmp_path):
    suite = write_suite(tmp_path / "suite", "\ndef test_bare():\n    pass\n")
    with pytest.raises(HilError, match="exactly one @pytest.mark.hil"):
        _run(tmp_path, suite)


KILLER = '''
@pytest.mark.hil(id="k.first", title="first", **M)
def test_first(record):
    record.measure("one", 1, equals=1)


@pytest.mark.hil(id="k.second", title="the power goes", **M)
def test_second(record):
    flag = Path(os.environ["HIL_KILL_FLAG"])
    if not flag.exists():
        flag.write_text("killed once")
        os._exit(9)                     # the station dies mid-run
    record.measure("two", 2, equals=2)


@pytest.mark.hil(id="k.third", title="third", **M)
def test_third(record):
    record.measure("three", 3, equals=3)
'''


def test_resume_after_a_kill_runs_only_what_is_left(tmp_path):
    suite = write_suite(tmp_path / "suite", KILLER)
    folder = tmp_path / "report"
    env = {**os.environ, "HIL_KILL_FLAG": str(tmp_path / "flag"), "PYTHONPATH": str(ROOT)}
    code = ("import io, sys; from pathlib import Path; from firmware.hil.runner import run; "
            f"run('sim', (), Path({str(folder)!r}), None, 'T', 5.0, progress=False, suite=Path({str(suite)!r}))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9
    doc = json.loads((folder / "run.json").read_text())
    assert [t["id"] for t in doc["tests"]] == ["k.first"]           # written after the first test
    assert doc["planned"] == ["k.first", "k.second", "k.third"]
    first_started = doc["tests"][0]["started"]
    os.environ["HIL_KILL_FLAG"] = str(tmp_path / "flag")
    try:
        record = _run(tmp_path, suite, report_dir=None, resume=folder)
    finally:
        del os.environ["HIL_KILL_FLAG"]
    assert [(t.id, t.verdict) for t in record.tests] == [("k.first", "PASS"), ("k.second", "PASS"), ("k.third", "PASS")]
    assert record.test("k.first").started == first_started           # kept, not run again
    assert record.exit_status() == 0
    assert len(ET.parse(folder / "junit.xml").getroot().find("testsuite").findall("testcase")) == 3
    assert "not yet run" not in (folder / "report.html").read_text().lower()


def test_a_report_folder_with_a_run_is_not_overwritten(tmp_path):
    suite = write_suite(tmp_path / "suite", KILLER.replace('os._exit(9)', 'pass'))
    os.environ["HIL_KILL_FLAG"] = str(tmp_path / "flag")
    try:
        _run(tmp_path, suite)
        with pytest.raises(HilError, match="already holds a run"):
            _run(tmp_path, suite)
    finally:
        del os.environ["HIL_KILL_FLAG"]


@pytest.mark.parametrize("text, message", [
    ("[cabinet\n", "is not TOML"),
    ("[cabinet]\nconfig = 'x.toml'\n", "state_dir (the running terminal's folder) is required"),
    ("[cabinet]\nstate_dir = 'nowhere'\n", "is not a folder"),
    ("[cabinet]\nstate_dir = '.'\ncolour = 'red'\n", "unknown key(s) in [cabinet]: colour"),
    ("[cabinet]\nstate_dir = '.'\n[cabinet.pins]\nregulator = '12'\n", "PINs of 4 to 12 digits"),
    ("[cabinet]\nstate_dir = '.'\nstart = 'yes'\n", "start is true or false"),
    ("[other]\n", "expected one [cabinet] table"),
])
def test_a_bad_cabinet_target_file_is_one_clear_error(tmp_path, text, message):
    target = tmp_path / "cabinet.toml"
    target.write_text(text)
    report = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "hil", "run", "--target", str(target),
                           "--report", str(report)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert not report.exists()


OPERATOR_SUITE = '''
@pytest.mark.hil(id="op.step", title="a physical step", operator=True, targets=("cabinet",), **M)
def test_step(record, operator):
    operator.do("open the main door")
    record.measure("done", True, equals=True)
'''


@pytest.mark.parametrize("answers, verdict, reason", [
    ("\n", "PASS", ""),
    ("n\n", "BLOCKED", "the operator could not do it: open the main door"),
    (None, "BLOCKED", "no answer within 0.5 s: open the main door"),
])
def test_operator_prompt_on_a_cabinet(tmp_path, answers, verdict, reason):
    suite = write_suite(tmp_path / "suite", OPERATOR_SUITE)
    (tmp_path / "cab").mkdir()
    target = tmp_path / "cabinet.toml"
    target.write_text("[cabinet]\nstate_dir = 'cab'\noperator = 'Olga'\n")
    if answers is None:
        read, write = os.pipe()                 # an operator who never answers
        stream = os.fdopen(read, "r")
    else:
        stream, write = io.StringIO(answers), None
    out = io.StringIO()
    try:
        record = run(str(target), (), tmp_path / "report", None, "", 0.5, progress=False, suite=suite,
                     answers=stream, out=out)
    finally:
        if write is not None:
            os.close(write)
    test = record.test("op.step")
    assert (test.verdict, test.reason) == (verdict, reason)
    assert "OPERATOR: open the main door" in out.getvalue()
    assert record.exit_status() == (0 if verdict == "PASS" else 2)


def test_resume_needs_a_run_folder(tmp_path):
    suite = write_suite(tmp_path / "suite")
    with pytest.raises(HilError, match="not a run to resume"):
        _run(tmp_path, suite, report_dir=None, resume=tmp_path / "nothing")


LIFECYCLE = '''
@pytest.mark.hil(id="life.cut", title="leaves the terminal down", **M)
def test_cut(cabinet, record):
    cabinet.power_cut()
    record.measure("up after the cut", cabinet.is_up(), equals=False)


@pytest.mark.hil(id="life.extra", title="starts it differently", **M)
def test_extra(cabinet, record):
    record.measure("up again before the test", cabinet.is_up(), equals=True)
    cabinet.start_extra(config='[games]\\ndefault = "three-card-poker"\\n')
    record.measure("game with the extra configuration", cabinet.status()["game"], equals="three-card-poker")


@pytest.mark.hil(id="life.default", title="finds the default start", **M)
def test_default(cabinet, record):
    record.measure("game", cabinet.status()["game"], equals="baccarat-war")
    record.measure("extra", cabinet.extra, equals=False)
'''


def test_the_cabinet_is_brought_back_up_and_restored_between_tests(tmp_path):
    suite = write_suite(tmp_path / "suite", LIFECYCLE)
    record = _run(tmp_path, suite)
    assert [(t.id, t.verdict, t.reason) for t in record.tests] == [
        ("life.cut", "PASS", ""), ("life.extra", "PASS", ""), ("life.default", "PASS", "")]
    cut = record.test("life.cut")
    assert any("the terminal was down at the end of the test" in n for n in cut.notes)
    log = (tmp_path / "report" / "sim" / "terminal.log").read_text()
    assert log.count("--- egm hil: ") == 4          # start, up again, extra, default again
