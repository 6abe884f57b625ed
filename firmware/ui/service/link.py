"""The service screens' way to the terminal: :class:`ServiceLink`, and :class:`TerminalLink`.

Every request goes through the terminal's command queue (the ``service`` command, on the
terminal's thread, exactly as ``egm simctl service ...``), so the API checks the role and the
cabinet state and logs it; the screens never read critical memory themselves. The answers arrive
in futures; the menu takes them once a frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any, Protocol

#: A service API answer: a JSON object (its values are whatever the action answers).
Answer = Mapping[str, Any]


class ServiceLink(Protocol):
    """What the service menu needs of a terminal (tests script it)."""

    def service(self, words: Sequence[str]) -> Future[Answer]:
        """``service WORDS...``; the answer (or the refusal) arrives in the future."""

    def calibration(self, step: str, **args: object) -> Future[Answer]:
        """``touch_calibration STEP`` (begin, commit, cancel) with its arguments."""

    def status(self) -> Mapping[str, Any]:
        """The terminal's published status."""


class CommandQueue(Protocol):
    """What :class:`TerminalLink` needs of a terminal: a
    :class:`~firmware.cabinet.terminal.Terminal`, or the
    :class:`~firmware.cabinet.memory_lock.MemoryLock` standing in for one while critical memory
    is locked."""

    @property
    def snapshot(self) -> Mapping[str, Any]:
        """The published status."""

    def submit(self, name: str, **args: Any) -> Future[Any]:
        """Queue a command for the terminal's thread."""


class TerminalLink:
    """A :class:`ServiceLink` to a terminal: its command queue and its published status."""

    def __init__(self, terminal: CommandQueue) -> None:
        self.terminal = terminal

    def service(self, words: Sequence[str]) -> Future[Answer]:
        return self.terminal.submit("service", words=list(words))

    def calibration(self, step: str, **args: object) -> Future[Answer]:
        return self.terminal.submit("touch_calibration", step=step, **args)

    def status(self) -> Mapping[str, Any]:
        return self.terminal.snapshot or {}
