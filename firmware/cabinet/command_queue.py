"""The terminal's commands: what other threads ask of it, queued and run on the terminal's thread.

The player's buttons (through the screens), ``egm simctl``, the service API and autoplay call
:meth:`CommandQueue.submit` from their own threads; the terminal's thread runs the queued commands
in order (:meth:`CommandQueue.run_waiting`) and answers each through its future.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from firmware.cabinet.errors import TerminalError, TerminalStopped
from firmware.errors import EgmError
from firmware.ledger.errors import CriticalMemoryError
from hal.errors import DeviceError

log = logging.getLogger(__name__)


@dataclass
class _Command:
    name: str
    args: dict[str, Any]
    future: Future = field(default_factory=Future)


class CommandQueue:
    """Commands by name (:meth:`register`) and the queue of those asked for."""

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[..., Any]] = {}
        self._queue: queue.Queue[_Command] = queue.Queue()

    def register(self, **handlers: Callable[..., Any]) -> None:
        self.handlers.update(handlers)

    def submit(self, name: str, **args: Any) -> Future:
        """Queue a command; its result (or error) arrives in the future."""
        command = _Command(name, args)
        if name not in self.handlers:
            command.future.set_exception(TerminalError(
                f"unknown command {name!r}; commands are {', '.join(sorted(self.handlers))}"))
        else:
            self._queue.put(command)
        return command.future

    def wake(self) -> None:
        """End the loop's idle wait now (another thread has something for the next step)."""
        self._queue.put(_Command("wake", {}))

    def run_waiting(self, timeout: float) -> None:
        """Run every queued command, waiting up to ``timeout`` seconds for the first."""
        try:
            command = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            command = None
        while command is not None:
            self._execute(command)
            try:
                command = self._queue.get_nowait()
            except queue.Empty:
                command = None

    def _execute(self, command: _Command) -> None:
        if not command.future.set_running_or_notify_cancel():
            return
        try:
            result = self.handlers[command.name](**command.args)
        except CriticalMemoryError as exc:     # nothing can be recorded: the terminal stops
            command.future.set_exception(exc)
            raise
        except (EgmError, DeviceError, ValueError, TypeError) as exc:
            command.future.set_exception(exc if isinstance(exc, EgmError) else TerminalError(str(exc)))
        except BaseException as exc:           # a bug: the caller sees it, the terminal goes on
            log.exception("command %s failed", command.name)
            command.future.set_exception(exc)
            if isinstance(exc, TerminalStopped):
                raise
        else:
            command.future.set_result(result)
