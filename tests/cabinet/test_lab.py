"""Lab mode's prompts (``firmware.cabinet.lab``): asked, answered once, timed out, cleared, each
logged as a ``lab_prompt`` event; and the control socket's schemas of the lab and screenshot ops."""

from __future__ import annotations

from typing import Any

import pytest

from firmware.cabinet.control_schema import RequestError, validate
from firmware.cabinet.errors import TerminalError
from firmware.cabinet.lab import LabPrompts


class Events:
    def __init__(self) -> None:
        self.logged: list[dict[str, Any]] = []

    def event(self, name: str, **data: Any) -> None:
        self.logged.append({"event": name, **data})

    def whats(self) -> list[str]:
        return [e["what"] for e in self.logged]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def lab() -> LabPrompts:
    return LabPrompts(Events(), Clock())


def test_a_prompt_is_shown_answered_once_and_cleared_each_step_an_event(lab):
    assert lab.status() is None
    lab.ask("door-1", "Open the main door")
    assert lab.status() == {"id": "door-1", "text": "Open the main door", "answer": None, "source": None,
                            "timeout_s": None, "time_left_s": None, "timed_out": False}
    shown = lab.answer("door-1", "cannot")
    assert shown["answer"] == "cannot" and shown["source"] == "console"
    with pytest.raises(TerminalError, match="already answered 'cannot'"):
        lab.answer("door-1", "done")
    assert lab.status()["answer"] == "cannot"              # the first answer stands, shown until cleared
    assert lab.clear() == {"cleared": "door-1"} and lab.status() is None
    assert lab.clear() == {"cleared": None}
    assert lab.ledger.whats() == ["asked", "answered", "cleared"]
    assert {e["event"] for e in lab.ledger.logged} == {"lab_prompt"}
    assert lab.ledger.logged[1] == {"event": "lab_prompt", "what": "answered", "id": "door-1",
                                    "answer": "cannot", "source": "console"}


def test_answers_for_another_prompt_or_none_or_unknown_are_refused_and_change_nothing(lab):
    with pytest.raises(TerminalError, match="no lab prompt is shown"):
        lab.answer("x", "done")
    lab.ask("note-20", "Insert a $20 note")
    with pytest.raises(TerminalError, match="the prompt shown is 'note-20', not 'door-1'"):
        lab.answer("door-1", "done")
    with pytest.raises(TerminalError, match="done or cannot, not 'maybe'"):
        lab.answer("note-20", "maybe")
    with pytest.raises(TerminalError, match="screen or console"):
        lab.answer("note-20", "done", source="host")
    assert lab.status()["answer"] is None and lab.ledger.whats() == ["asked"]
    assert lab.answer("note-20", "done", source="screen")["source"] == "screen"


def test_a_prompt_not_answered_in_time_times_out_once_and_refuses_a_late_answer(lab):
    lab.ask("door-1", "Open the main door", timeout_s=30)
    lab.clock.now += 10
    assert lab.status()["time_left_s"] == 20.0
    lab.tick()
    assert not lab.status()["timed_out"]
    lab.clock.now += 20
    lab.tick()
    lab.tick()
    assert lab.status()["timed_out"] and lab.status()["time_left_s"] is None
    assert lab.ledger.whats() == ["asked", "timed_out"]
    with pytest.raises(TerminalError, match="timed out after 30 s"):
        lab.answer("door-1", "done")


def test_a_new_prompt_replaces_the_one_shown(lab):
    lab.ask("a", "first")
    lab.ask("b", "second")
    assert lab.status()["id"] == "b" and lab.ledger.whats() == ["asked", "replaced", "asked"]


@pytest.mark.parametrize("id_, text, timeout", [
    ("bad word", "x", None), ("", "x", None), ("x" * 33, "x", None), ("x", "", None), ("x", "   ", None),
    ("x", "a" * 501, None), ("x", "t", 0), ("x", "t", -1), ("x", "t", True), ("x", "t", 10**6),
])
def test_the_part_itself_refuses_bad_prompts(lab, id_, text, timeout):
    with pytest.raises(TerminalError):
        lab.ask(id_, text, timeout)
    assert lab.status() is None and lab.ledger.logged == []


@pytest.mark.parametrize("op, args, message", [
    ("lab_prompt", {"id": "x", "text": "a" * 501}, "text: String should have at most 500 characters"),
    ("lab_prompt", {"id": "two words", "text": "a"}, "id: String should match pattern"),
    ("lab_prompt", {"id": "x"}, "text: Field required"),
    ("lab_prompt", {"id": "x", "text": "a", "timeout_s": True}, "timeout_s"),
    ("lab_prompt", {"id": "x", "text": "a", "timeout_s": 0}, "timeout_s"),
    ("lab_prompt", {"id": "x", "text": "a", "colour": "red"}, "colour: Extra inputs are not permitted"),
    ("lab_answer", {"id": "x", "answer": "maybe"}, "answer: Input should be 'done' or 'cannot'"),
    ("lab_answer", {"id": "x", "answer": "done", "source": "screen"}, "source: Extra inputs"),
    ("lab_clear", {"id": "x"}, "Extra inputs"),
    ("screenshot", {"size": "big"}, "size: String should match pattern"),
    ("screenshot", {"size": "99999x2"}, "a screenshot is 320x180 to 3840x2160 pixels"),
    ("screenshot", {"size": "8000x4500"}, "a screenshot is 320x180 to 3840x2160 pixels"),
    ("screenshot", {"size": "2000x400"}, "too narrow or too wide"),
    ("screenshot", {"size": 1920}, "size: Input should be a valid string"),
])
def test_the_control_socket_refuses_bad_lab_and_screenshot_requests(op, args, message):
    with pytest.raises(RequestError, match=message.replace("(", r"\(")):
        validate(op, args)


def test_good_requests_become_the_commands_arguments():
    assert validate("lab_prompt", {"id": "door-1", "text": "Open it", "timeout_s": 60}) == (
        "lab_prompt", {"id": "door-1", "text": "Open it", "timeout_s": 60.0})
    assert validate("lab_answer", {"id": "door-1", "answer": "cannot"}) == (
        "lab_answer", {"id": "door-1", "answer": "cannot"})
    assert validate("screenshot", {"size": "1280x720"}) == ("screenshot", {"size": (1280, 720)})
    assert validate("screenshot", {}) == ("screenshot", {})
