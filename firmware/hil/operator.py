"""The operator: a person at the cabinet, asked to do a physical step, with a time-out.

:class:`Console` asks on the console (and on the cabinet's own screen through the control op
``lab_prompt`` when the terminal offers it) and waits for one of: the step verified (``verify()``
returned True), Enter (done), ``n`` (could not do it: :class:`~firmware.hil.errors.Blocked`), or the
time-out (Blocked). On the simulated cabinet :class:`Operator` runs the step's automation instead and
waits for ``verify()``.
"""

from __future__ import annotations

import contextlib
import queue
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import IO, Any

from firmware.hil.errors import Blocked, NeedsOperator, TargetError
from firmware.hil.target import Target

#: How often a prompt checks ``verify()`` (seconds).
POLL_S = 0.2
#: After Enter, how long ``verify()`` still has to become true.
CONFIRM_GRACE_S = 5.0
#: The default time-out of a prompt (``--prompt-timeout``).
DEFAULT_PROMPT_TIMEOUT = 120.0


class Console:
    """Prompts on a console: ``say`` writes, ``answers`` is the input (a stream read by a thread)."""

    def __init__(self, answers: IO[str] | None, say: Callable[[str], None], *, timeout: float = DEFAULT_PROMPT_TIMEOUT,
                 suspend: Callable[[], Any] | None = None) -> None:
        self.say = say
        self.timeout = timeout
        self.suspend = suspend
        self._answers: queue.Queue[str | None] = queue.Queue()
        self._stream = answers
        self._reader: threading.Thread | None = None

    def _start_reader(self) -> None:
        if self._reader is not None or self._stream is None:
            return
        stream = self._stream

        def read() -> None:
            for line in stream:
                self._answers.put(line.strip())
            self._answers.put(None)                 # end of input: nobody will answer

        self._reader = threading.Thread(target=read, name="hil-operator-input", daemon=True)
        self._reader.start()

    def ask(self, instruction: str, *, verify: Callable[[], bool] | None = None, timeout: float | None = None,
            target: Target | None = None, test_id: str = "") -> None:
        """Ask for ``instruction``; return when done (verified), raise Blocked otherwise."""
        limit = self.timeout if timeout is None else timeout
        self._start_reader()
        screen = _show_on_screen(target, test_id, instruction, limit)
        ctx = self.suspend() if self.suspend else contextlib.nullcontext()
        try:
            with ctx:
                where = " (also on the cabinet's screen)" if screen else ""
                self.say(f"OPERATOR: {instruction}  [Enter when done, n = could not do it; "
                         f"time-out {limit:g} s]{where}")
                self._wait(instruction, verify, limit, target if screen else None, screen)
        finally:
            if screen and target is not None:
                with contextlib.suppress(TargetError):
                    target.control("lab_clear", {})

    def _wait(self, instruction: str, verify: Callable[[], bool] | None, limit: float,
              target: Target | None, screen_id: str) -> None:
        deadline = time.monotonic() + limit
        confirmed_at: float | None = None
        console_open = True
        while True:
            if verify is not None and _holds(verify):
                return
            answer = _screen_answer(target, screen_id) if target is not None else None
            if answer is None and console_open:
                try:
                    line = self._answers.get(timeout=POLL_S)
                except queue.Empty:
                    pass
                else:
                    if line is None:                 # the console's input ended
                        self._answers.put(None)
                        console_open = False
                        if verify is None and target is None:
                            raise Blocked(f"nobody answered (the console's input ended): {instruction}")
                    elif line.lower() in ("n", "no"):
                        answer = "cannot"
                    elif line == "":
                        answer = "done"
                    else:
                        self.say("answer Enter (done) or n (could not do it)")
            else:
                time.sleep(POLL_S)
            if answer == "cannot":
                raise Blocked(f"the operator could not do it: {instruction}")
            if answer == "done":
                if verify is None:
                    return
                confirmed_at = confirmed_at or time.monotonic()
            now = time.monotonic()
            if confirmed_at is not None and now - confirmed_at > CONFIRM_GRACE_S:
                raise Blocked(f"done, said the operator, but it could not be seen: {instruction}")
            if now >= deadline:
                raise Blocked(f"no answer within {limit:g} s: {instruction}")


def _screen_id(test_id: str) -> str:
    """The prompt's id on the cabinet's screen: the test id as one short word."""
    return re.sub(r"[^A-Za-z0-9_-]+", "-", test_id).strip("-")[:32] or "hil"


def _show_on_screen(target: Target | None, test_id: str, instruction: str, limit: float) -> str:
    """Put the prompt on the cabinet's screen (control op ``lab_prompt``) when the terminal offers
    it; the prompt's id, or "" (console only)."""
    if target is None or target.kind != "cabinet" or target.lacks_op("lab_prompt"):
        return ""
    screen_id = _screen_id(test_id)
    try:
        target.control("lab_prompt", {"id": screen_id, "text": instruction[:500], "timeout_s": limit})
    except TargetError as exc:
        if "unknown op" in str(exc):
            target.note_missing_op("lab_prompt")
        return ""
    return screen_id


def _screen_answer(target: Target, screen_id: str) -> str | None:
    """The answer given on the cabinet's screen (status ``lab``: ``done`` or ``cannot``), if any."""
    try:
        lab = target.status().get("lab")
    except TargetError:
        return None
    if isinstance(lab, dict) and lab.get("id") == screen_id and lab.get("answer") in ("done", "cannot"):
        return str(lab["answer"])
    return None


def _holds(verify: Callable[[], bool]) -> bool:
    try:
        return bool(verify())
    except TargetError:
        return False


class Operator:
    """The ``operator`` fixture: ``do(instruction, sim=..., verify=..., timeout=...)``."""

    def __init__(self, target: Target | None, console: Console, test_id: str, record: Any = None) -> None:
        self.target = target
        self.console = console
        self.test_id = test_id
        self.record = record

    def do(self, instruction: str, *, sim: Callable[[], Any] | Sequence[str] | str | None = None,
           verify: Callable[[], bool] | None = None, timeout: float | None = None) -> None:
        """Have ``instruction`` done: by automation on the simulated cabinet (``sim``: a callable,
        or ``simctl`` words), by a person on a cabinet (Blocked when they cannot)."""
        if self.record is not None:
            self.record.step(f"operator: {instruction}")
        target = self.target
        if target is not None and target.kind == "sim":
            if sim is None:
                raise NeedsOperator(f"{instruction}: the simulated cabinet has no automation for this step")
            if callable(sim):
                sim()
            else:
                target.sim(*(sim.split() if isinstance(sim, str) else sim))
            if verify is None:
                return
            limit = 30.0 if timeout is None else timeout
            deadline = time.monotonic() + limit
            while not _holds(verify):
                if time.monotonic() >= deadline:
                    raise AssertionError(f"after the automation of {instruction!r} the check did not hold "
                                         f"within {limit:g} s")
                time.sleep(POLL_S / 2)
            return
        self.console.ask(instruction, verify=verify, timeout=timeout, target=target, test_id=self.test_id)
