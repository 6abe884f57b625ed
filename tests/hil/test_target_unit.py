"""Target and operator details without a terminal: the screenshot op's answer, the prompt answered
on the cabinet's screen (status ``lab``), the house-way decisions of play_rounds."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import pytest

from firmware.hil.errors import Blocked, TargetError
from firmware.hil.operator import Console
from firmware.hil.target import Target, _pending_decisions
from tests.hil.synthetic import tiny_png


class Fake(Target):
    """A target whose control socket is a function."""

    kind = "cabinet"

    def __init__(self, answer) -> None:
        super().__init__(Path("/nonexistent"), None)
        self.answer = answer
        self.sent: list[tuple[str, Any]] = []

    def control(self, op, args=None, *, timeout=90.0):
        self.sent.append((op, args))
        return self.answer(op, args or {})

    def insert_note(self, dollars: int, *, timeout: float = 30) -> dict:
        raise AssertionError("not used by these tests")

    def power_cut(self) -> None:
        raise AssertionError("not used by these tests")

    def power_on(self) -> None:
        raise AssertionError("not used by these tests")


def unknown(op, args):
    raise TargetError(f"{op}: unknown op {op!r}; ops are status, wait")


def test_screenshot_writes_the_ops_png(tmp_path):
    png = tiny_png()
    target = Fake(lambda op, args: {"png_base64": base64.b64encode(png).decode(), "width": 4, "height": 3})
    assert target.screenshot(tmp_path / "s.png") is True
    assert (tmp_path / "s.png").read_bytes() == png


def test_no_screenshot_op_is_false_and_asked_once(tmp_path):
    target = Fake(unknown)
    assert target.screenshot(tmp_path / "s.png") is False
    assert target.screenshot(tmp_path / "s.png") is False
    assert len(target.sent) == 1 and not (tmp_path / "s.png").exists()


@pytest.mark.parametrize("answer, message", [
    ({"png_base64": "%%%"}, "not base64"),
    ({"png_base64": base64.b64encode(b"GIF89a").decode()}, "not a PNG"),
    ({"width": 4}, "holds no png_base64"),
])
def test_a_bad_screenshot_answer_is_a_target_error(tmp_path, answer, message):
    with pytest.raises(TargetError, match=message):
        Fake(lambda op, args: answer).screenshot(tmp_path / "s.png")
    assert not (tmp_path / "s.png").exists()


def lab_terminal(answer: str | None):
    state: dict[str, Any] = {"lab": None}

    def control(op, args):
        if op == "lab_prompt":
            state["lab"] = {"id": args["id"], "text": args["text"], "answer": None}
            state["asked"] = args
        elif op == "status":
            if state["lab"] is not None and answer is not None:
                state["lab"] = {**state["lab"], "answer": answer}
            return {"state": "IDLE", "lab": state["lab"]}
        elif op == "lab_clear":
            state["lab"] = None
        return {}
    return Fake(control), state


@pytest.mark.parametrize("answer", ["done", "cannot"])
def test_the_operator_answers_on_the_cabinets_screen(answer):
    target, state = lab_terminal(answer)
    out: list[str] = []
    console = Console(None, out.append, timeout=5)
    if answer == "cannot":
        with pytest.raises(Blocked, match="the operator could not do it: open the main door"):
            console.ask("open the main door", target=target, test_id="doors.main[1]")
    else:
        console.ask("open the main door", target=target, test_id="doors.main[1]")
    assert state["asked"] == {"id": "doors-main-1", "text": "open the main door", "timeout_s": 5}
    assert state["lab"] is None                                  # cleared after the answer
    assert "also on the cabinet's screen" in out[0]


def test_a_terminal_without_lab_mode_prompts_on_the_console_only():
    target = Fake(lambda op, args: unknown(op, args) if op.startswith("lab_") else {"state": "IDLE"})
    console = Console(io.StringIO("\n"), lambda text: None, timeout=5)
    console.ask("press the button", target=target, test_id="x.y")
    assert [op for op, _ in target.sent] == ["lab_prompt"]


def test_done_but_never_seen_is_blocked(monkeypatch):
    monkeypatch.setattr("firmware.hil.operator.CONFIRM_GRACE_S", 0.3)
    console = Console(io.StringIO("\n"), lambda text: None, timeout=5)
    with pytest.raises(Blocked, match="done, said the operator, but it could not be seen"):
        console.ask("insert a $5 note", verify=lambda: False)


def test_play_rounds_answers_decisions_the_house_way():
    snap = {"round": {"pending": [{"seat": 1, "kind": "play", "actions": ["play", "fold"], "hint": "fold"},
                                  {"seat": 2, "kind": "war", "actions": ["war", "surrender"], "hint": None}]}}
    assert _pending_decisions(snap) == [(1, "fold"), (2, "war")]
    assert _pending_decisions({"round": None}) == []


def test_service_logs_in_again_when_the_session_ended_or_changed_hands():
    session = {"role": None}

    def control(op, args):
        words = args["words"]
        if words[0] == "login":
            session["role"] = words[1]
            return {"role": words[1]}
        if session["role"] is None:
            raise TargetError("service: log in first: service login ROLE PIN")
        if session["role"] != "regulator":
            raise TargetError(f"service: the {session['role']} role may not use meters (allowed: auditor, regulator)")
        return {"meters": {}}

    target = Fake(control)
    assert target.meters() == {"meters": {}}
    session["role"] = None                                  # the session timed out
    assert target.meters() == {"meters": {}}
    target.service("login", "technician", "2222")           # a test logs in as another role
    assert target.meters() == {"meters": {}}
    logins = [a["words"][1] for op, a in target.sent if a["words"][0] == "login"]
    assert logins == ["regulator", "regulator", "technician", "regulator"]
    assert target.pins["regulator"] == "4444"
