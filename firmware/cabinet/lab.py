"""Lab mode: a test lab's operator prompts on the cabinet's own screen (issue 26, ``egm hil``).

A lab's test runner asks the operator for a physical step ("open the main door", "insert a $20
note") with ``lab_prompt``; the player's screens show it in a lab panel over whatever they show,
with two buttons, DONE and COULD NOT DO IT. The operator's touch answers (the screens send
``lab_answer`` with ``source="screen"``), or a console operator answers through the control
socket (``lab_answer``, ``source="console"``). The answer stays on the panel until ``lab_clear``
or the next prompt.

:class:`LabPrompts` is one of the terminal's parts: its commands run on the terminal's thread like
every other. The prompt itself is not critical memory (a power cut forgets it, and it changes no
meter, no credit, no state of the cabinet); each prompt, answer, time-out and clearing is logged
through :mod:`logging` and as a ``lab_prompt`` event in the ledger's event log, the lab's record of
what was asked and answered.

A prompt with ``timeout_s`` that nobody answers in time is marked ``timed_out`` (once, logged);
an answer after that is refused. Answers are final: the first one stands.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from firmware.cabinet.errors import TerminalError

log = logging.getLogger(__name__)

#: The answers a prompt takes: the step was done, or the operator could not do it.
ANSWERS = ("done", "cannot")
#: Who answered: the operator's touch on the panel, or a console (``egm hil``, a test).
SOURCES = ("screen", "console")
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$"
MAX_TEXT = 500
MAX_TIMEOUT_S = 24 * 3600.0
#: The ledger event every prompt, answer, time-out and clearing is logged as (``what`` says which).
EVENT = "lab_prompt"


class EventLog(Protocol):
    def event(self, name: str, **data: Any) -> None: ...


@dataclass
class Prompt:
    id: str
    text: str
    shown_at: float
    timeout_s: float | None = None
    answer: str | None = None
    source: str | None = None
    timed_out: bool = False


class LabPrompts:
    """The prompt on screen now (at most one); ``ledger`` takes the events, ``clock`` says when."""

    def __init__(self, ledger: EventLog, clock: Callable[[], float]) -> None:
        self.ledger = ledger
        self.clock = clock
        self.prompt: Prompt | None = None

    def commands(self) -> dict[str, Callable[..., Any]]:
        """The terminal's commands of lab mode (``lab_prompt``, ``lab_answer``, ``lab_clear``)."""
        return {"lab_prompt": self.ask, "lab_answer": self.answer, "lab_clear": self.clear}

    def ask(self, id: str, text: str, timeout_s: float | None = None) -> dict[str, Any]:
        """Show a prompt (it replaces the one shown, answered or not)."""
        if not isinstance(id, str) or not re.fullmatch(ID_PATTERN, id):
            raise TerminalError(f"lab_prompt: id is a short word (letters, digits, _ . -; up to 32), not {id!r}")
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_TEXT:
            raise TerminalError(f"lab_prompt: text is 1 to {MAX_TEXT} characters")
        if timeout_s is not None and not (isinstance(timeout_s, int | float) and not isinstance(timeout_s, bool)
                                          and 0 < timeout_s <= MAX_TIMEOUT_S):
            raise TerminalError(f"lab_prompt: timeout_s is more than 0 and at most {MAX_TIMEOUT_S:.0f} seconds")
        replaced = self.prompt
        if replaced is not None and replaced.answer is None and not replaced.timed_out:
            self._record("replaced", replaced)
        self.prompt = Prompt(id, text, self.clock(), None if timeout_s is None else float(timeout_s))
        self._record("asked", self.prompt)
        return self.status() or {}

    def answer(self, id: str, answer: str, source: str = "console") -> dict[str, Any]:
        """The operator's answer to the prompt ``id`` (refused for another prompt, a second answer,
        or after the prompt timed out)."""
        if answer not in ANSWERS:
            raise TerminalError(f"lab_answer: the answer is {' or '.join(ANSWERS)}, not {answer!r}")
        if source not in SOURCES:
            raise TerminalError(f"lab_answer: the source is {' or '.join(SOURCES)}, not {source!r}")
        self.tick()
        prompt = self.prompt
        if prompt is None:
            raise TerminalError("lab_answer: no lab prompt is shown")
        if prompt.id != id:
            raise TerminalError(f"lab_answer: the prompt shown is {prompt.id!r}, not {id!r}")
        if prompt.timed_out:
            raise TerminalError(f"lab_answer: the prompt {id!r} timed out after {prompt.timeout_s:g} s")
        if prompt.answer is not None:
            raise TerminalError(f"lab_answer: the prompt {id!r} was already answered {prompt.answer!r}")
        prompt.answer, prompt.source = answer, source
        self._record("answered", prompt)
        return self.status() or {}

    def clear(self) -> dict[str, Any]:
        """Take the prompt off the screens (nothing shown: nothing done)."""
        prompt, self.prompt = self.prompt, None
        if prompt is not None:
            self._record("cleared", prompt)
        return {"cleared": None if prompt is None else prompt.id}

    def tick(self) -> None:
        """A prompt whose time is up is marked timed out (once); the terminal calls this each step."""
        prompt = self.prompt
        if (prompt is not None and prompt.timeout_s is not None and prompt.answer is None
                and not prompt.timed_out and self.clock() - prompt.shown_at >= prompt.timeout_s):
            prompt.timed_out = True
            self._record("timed_out", prompt)

    def status(self) -> dict[str, Any] | None:
        """The status document's ``lab``: None, or the prompt shown and its answer."""
        prompt = self.prompt
        if prompt is None:
            return None
        left = None
        if prompt.timeout_s is not None and prompt.answer is None and not prompt.timed_out:
            left = round(max(0.0, prompt.timeout_s - (self.clock() - prompt.shown_at)), 1)
        return {"id": prompt.id, "text": prompt.text, "answer": prompt.answer, "source": prompt.source,
                "timeout_s": prompt.timeout_s, "time_left_s": left, "timed_out": prompt.timed_out}

    def _record(self, what: str, prompt: Prompt) -> None:
        detail: dict[str, Any] = {"what": what, "id": prompt.id}
        if what == "asked":
            detail.update(text=prompt.text, timeout_s=prompt.timeout_s)
        elif what == "answered":
            detail.update(answer=prompt.answer, source=prompt.source)
        elif what == "cleared":
            detail.update(answer=prompt.answer)
        log.info("lab prompt %s: %s%s", prompt.id, what,
                 f" {prompt.answer} ({prompt.source})" if what == "answered" else
                 f": {prompt.text}" if what == "asked" else "")
        self.ledger.event(EVENT, **detail)
