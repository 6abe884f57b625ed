"""The cabinet target against a running terminal it did not start (the simulated one, standing in
for a cabinet): the suite attaches through the target file, asks the operator for the physical
step (a note in the slot) and sees it done through the credit meter; evidence as on the sim."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from firmware.cabinet.control import request
from firmware.hil.runner import run
from tests.hil.synthetic import write_suite

ROOT = Path(__file__).resolve().parents[2]

SUITE = '''
@pytest.mark.hil(id="cab.note", title="a note by hand", operator=True, duration=10, **M)
def test_note(cabinet, record, operator):
    record.measure("target", cabinet.kind, equals="cabinet")
    snap = cabinet.insert_note(5)
    record.measure("credits after the note", snap["credits_cents"], equals=500, unit="cents")
    with pytest.raises(Exception, match="only the simulated cabinet"):
        cabinet.sim("note", "5")


@pytest.mark.hil(id="cab.sim-only", title="needs a simulator", targets=("sim",), **M)
def test_sim_only(record):
    record.step("never on a cabinet")
'''


@pytest.fixture
def terminal(tmp_path):
    state = tmp_path / "cabinet-state"
    log = (tmp_path / "cabinet.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--state-dir",
                             str(state)], stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while True:
        try:
            if request(state, "status").get("state") == "IDLE":
                break
        except Exception:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, "the terminal did not start"
        time.sleep(0.1)
    yield state
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_a_running_cabinet_with_an_operator(tmp_path, terminal):
    suite = write_suite(tmp_path / "suite", SUITE)
    target = tmp_path / "cabinet.toml"
    target.write_text(f"[cabinet]\nstate_dir = {str(terminal)!r}\noperator = 'Olga'\n"
                      "[cabinet.pins]\nregulator = '4444'\n")
    out = io.StringIO()
    read, write = os.pipe()                            # the operator types nothing: the meter tells

    def operator_inserts_the_note() -> None:
        deadline = time.monotonic() + 60
        while "insert a $5 note" not in out.getvalue():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        while not request(terminal, "sim", {"words": ["note", "5"]})["inserted"]:
            time.sleep(0.1)

    hand = threading.Thread(target=operator_inserts_the_note, daemon=True)
    hand.start()
    try:
        record = run(str(target), (), tmp_path / "report", None, "", 30.0, progress=False, suite=suite,
                     answers=os.fdopen(read, "r"), out=out)
    finally:
        os.close(write)
    hand.join(timeout=5)
    note = record.test("cab.note")
    assert (note.verdict, note.reason) == ("PASS", "")
    assert record.test("cab.sim-only").reason == "not applicable to target cabinet"
    assert record.target_kind == "cabinet" and record.operator == "Olga"
    assert record.software["verification"]["ok"] is True
    names = {e.name for e in note.evidence}
    assert {"meters-before", "meters-after", "events"} <= names
    assert any("no log excerpt" in n for n in note.notes)
    assert any("no screen capture" in n for n in note.notes) or "screen-at-end" in names
    assert request(terminal, "status")["state"] == "IDLE"        # attached, not stopped


STARTED = '''
@pytest.mark.hil(id="cab.started", title="a terminal the suite starts", **M)
def test_started(cabinet, record):
    record.measure("target", cabinet.kind, equals="cabinet")
    record.measure("state", bool(cabinet.status()["state"]), equals=True)
'''


def test_a_cabinet_target_that_starts_the_terminal_itself(tmp_path):
    suite = write_suite(tmp_path / "suite", STARTED)
    (tmp_path / "state").mkdir()
    target = tmp_path / "cabinet.toml"
    target.write_text("[cabinet]\nstate_dir = 'state'\nstart = true\n")
    record = run(str(target), (), tmp_path / "report", None, "Ann", 5.0, progress=False, suite=suite,
                 answers=io.StringIO(""), out=io.StringIO())
    test = record.test("cab.started")
    assert (test.verdict, test.reason) == ("PASS", "")
    excerpt = next(e for e in test.evidence if e.name == "terminal-log")
    assert (tmp_path / "report" / excerpt.path).is_file()
    assert "power-up self-test" in (tmp_path / "report" / "cabinet" / "terminal.log").read_text()
    assert not (tmp_path / "state" / "control.sock").exists()          # stopped at the end


SCREEN = '''
@pytest.mark.hil(id="cab.door", title="a door by hand", operator=True, duration=10, **M)
def test_door(cabinet, record, operator):
    operator.do("open the main door", verify=lambda: cabinet.status()["state"] == "TILT")
'''


def test_a_prompt_on_the_cabinets_screen_answered_there_could_not_do_it_blocks_the_test(tmp_path, terminal):
    """The prompt reaches the running terminal's lab panel (status ``lab``), the answer given there
    ("could not do it") comes back to the suite: BLOCKED, never PASS."""
    suite = write_suite(tmp_path / "suite", SCREEN)
    target = tmp_path / "cabinet.toml"
    target.write_text(f"[cabinet]\nstate_dir = {str(terminal)!r}\noperator = 'Olga'\n")
    read, write = os.pipe()                            # nobody at the console
    shown: list[dict] = []

    def technician_at_the_screen() -> None:
        deadline = time.monotonic() + 60
        while not (lab := request(terminal, "status").get("lab")):
            assert time.monotonic() < deadline, "the prompt never reached the cabinet's screen"
            time.sleep(0.05)
        shown.append(lab)
        request(terminal, "lab_answer", {"id": lab["id"], "answer": "cannot"})

    hand = threading.Thread(target=technician_at_the_screen, daemon=True)
    hand.start()
    try:
        record = run(str(target), (), tmp_path / "report", None, "", 30.0, progress=False, suite=suite,
                     answers=os.fdopen(read, "r"), out=io.StringIO())
    finally:
        os.close(write)
    hand.join(timeout=5)
    assert shown and "open the main door" in shown[0]["text"] and shown[0]["answer"] is None
    door = record.test("cab.door")
    assert door.verdict == "BLOCKED" and "could not do it" in door.reason
    assert request(terminal, "status")["state"] == "IDLE"
