"""The critical-memory lock: what the cabinet is when critical memory failed verification at power-up.

Nothing may be paid from, or recorded in, a ledger that failed verification, so the terminal does not
start: no device is opened, no note can be taken, no round can be played. But the cabinet stays up,
locked, so that a technician can see why and act (docs/critical-memory.md):

* ``status`` (the control socket, ``egm simctl status``) answers ``state: "HALTED"`` with the error
  in ``halted`` and a ``critical_memory`` tilt; the screens show "MEMORY ERROR" with the reason;
* ``service login ROLE PIN`` / ``logout`` / ``session`` work as on a running terminal (the same
  :class:`~firmware.cabinet.service.ServiceApi`: PIN hashes, lock-outs, time-outs, permissions);
* ``service ram-clear CLEAR REASON`` by a technician erases critical memory
  (:meth:`Ledger.ram_clear`, which records the error as what the old memory was), and the runner
  then starts the terminal on the new, empty memory.

The service events of the locked period (logins, refusals, the clear) cannot be committed to a
ledger that failed; they are kept in memory and written into the new ledger right after its RAM
clear record, each marked ``while_locked``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from firmware.cabinet.service import ServiceApi, ServiceError
from firmware.errors import EgmError
from firmware.ledger.ledger import Ledger, utc_now

log = logging.getLogger(__name__)

#: What a technician can do while critical memory is locked (service words).
LOCKED_VERBS = ("help", "login", "logout", "session", "whoami", "ram-clear")


class LockedEvents:
    """Stands in for the ledger while it is locked: no money, no round; events kept in memory."""

    credits_cents = 0
    credits = 0
    open_round = None
    table_bets: dict[str, Any] = {}

    def __init__(self, clock: Callable[[], str] = utc_now) -> None:
        self._clock = clock
        self.events: list[dict[str, Any]] = []

    def event(self, name: str, **data: Any) -> None:
        self.events.append({"event": name, "time": self._clock(), **data})
        log.warning("critical memory locked; not recorded in it: %s %s", name, data)

    def setting(self, name: str) -> None:
        return None


class _NoCabinet:
    """The cabinet state the service API consults: locked, nothing in progress."""

    state = None
    round_in_progress = False


class MemoryLock:
    """A terminal stand-in for the control socket and the screens while critical memory is locked.

    :meth:`run` serves commands until the cabinet is turned off (:meth:`stop`) or a technician's RAM
    clear succeeds (:attr:`cleared`: then start the terminal)."""

    def __init__(self, cfg: Any, state_dir: Path, error: Exception, *,
                 on_step: Callable[[MemoryLock], None] | None = None) -> None:
        """``on_step``: called after every step of :meth:`run` (``egm run``: systemd's watchdog pings)."""
        self.cfg = cfg
        self.state_dir = state_dir
        self.error = error
        self.halted = str(error)
        self.memory_locked = True            #: the service API allows config actions (a RAM clear)
        self.ledger = LockedEvents()
        self.cabinet = _NoCabinet()
        self.kernel = None
        self.starting = False
        self.last_record = None
        self.on_input: Callable[..., bool] | None = None
        self._capture: Callable[[tuple[int, int]], dict[str, Any]] | None = None
        self.hostlink = None                 #: no host link while locked (the link reports nothing)
        self.on_step = on_step
        self.cleared: Ledger | None = None   #: the new ledger after a RAM clear (closed), or None
        self.handlers: dict[str, Callable[..., Any]] = {"status": self.status, "wake": lambda: None}
        self._commands: queue.Queue[tuple[str, dict[str, Any], Future]] = queue.Queue()
        self._stop = threading.Event()
        self.snapshot = self.status()
        #: Bumped after each command: the snapshot changes only inside commands (a RAM clear).
        self.published = 0
        #: The same service API as a running terminal's, with its ``service`` command narrowed to
        #: :data:`LOCKED_VERBS` (no demo mode: nothing can be played). No stored game options are
        #: applied: nothing is read from a memory that failed.
        self.service = ServiceApi.from_config(self, on_ram_clear=self._ram_clear)
        self.handlers["service"] = self._locked_service(self.service.commands(self)["service"])

    # --- what a terminal offers the control socket and the screens ----------------------------
    def register(self, **handlers: Callable[..., Any]) -> None:
        self.handlers.update(handlers)

    def connect_screens(self, on_input: Callable[..., bool],
                        capture: Callable[[tuple[int, int]], dict[str, Any]] | None = None) -> None:
        """The screens connect as to a terminal; a locked cabinet has no devices to give them input.
        ``capture``: their screenshot (the ``screenshot`` op)."""
        self.on_input = on_input
        self._capture = capture

    def screenshot(self, size: tuple[int, int] = (1920, 1080)) -> dict[str, Any]:
        """What the screens show (the lockup); headless, a locked cabinet draws nothing."""
        if self._capture is None:
            raise ServiceError(f"critical memory is locked ({self.halted}) and no screens are open: "
                               "there is no screen to capture")
        return self._capture(size)

    def status(self) -> dict[str, Any]:
        return {
            "state": "HALTED", "halted": self.halted, "interrupted": None,
            "tilts": [{"tilt": "critical_memory:ledger", "reason": f"critical memory: {self.halted}"}],
            "credits": 0, "credits_cents": 0, "game": self.cfg.games.default, "bet": 0, "round": None,
            "handpay": None, "printing": None, "message": "", "accepting_notes": False, "demo": None,
            "devices": {}, "rounds_played": 0, "starting": False, "last_ticket": None, "last_round": None,
            "host": None, "critical_memory": {"locked": True, "error": self.halted,
                                              "ram_clear": "service ram-clear CLEAR REASON (technician)"},
        }

    def submit(self, name: str, **args: Any) -> Future:
        future: Future = Future()
        if name not in self.handlers:
            future.set_exception(ServiceError(
                f"critical memory is locked ({self.halted}): only status and service "
                f"({', '.join(LOCKED_VERBS)}) are possible"))
        else:
            self._commands.put((name, args, future))
        return future

    def call(self, name: str, timeout: float = 30.0, **args: Any) -> Any:
        return self.submit(name, **args).result(timeout)

    def step(self, timeout: float = 0.0) -> None:
        try:
            name, args, future = self._commands.get(timeout=timeout) if timeout > 0 else self._commands.get_nowait()
        except queue.Empty:
            return
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(self.handlers[name](**args))
        except (EgmError, ValueError, TypeError) as exc:
            future.set_exception(exc)
        except Exception as exc:               # a bug: the caller sees it, the lock goes on
            log.exception("locked: %s failed", name)
            future.set_exception(exc)
        finally:
            self.published += 1

    def run(self, *, idle_wait: float = 0.05) -> Ledger | None:
        """Serve until stopped (None) or RAM-cleared (the new ledger, closed)."""
        while not self._stop.is_set() and self.cleared is None:
            self.step(idle_wait)
            if self.on_step is not None:
                self.on_step(self)
        return self.cleared

    def stop(self) -> None:
        self._stop.set()
        self._commands.put(("wake", {}, Future()))

    @property
    def stopping(self) -> bool:
        return self._stop.is_set() or self.cleared is not None

    # --- the service functions of a locked cabinet --------------------------------------------
    def _locked_service(self, service: Callable[..., Any]) -> Callable[..., Any]:
        def locked(words: Sequence[str] = ()) -> Any:
            verb = next((w for w in words if w), "help") if isinstance(words, list | tuple) else None
            if verb is not None and verb not in LOCKED_VERBS:
                raise ServiceError(f"critical memory is locked ({self.halted}): the service functions "
                                   f"are {', '.join(LOCKED_VERBS)}")
            return service(words)
        return locked

    def _ram_clear(self, reason: str) -> dict[str, Any]:
        role = self.service.session.role if self.service.session else "technician"
        ledger = Ledger.ram_clear(self.state_dir, role=role, reason=reason,
                                  denomination=self.cfg.terminal.denomination)
        try:
            for event in self.ledger.events:
                data = {k: v for k, v in event.items() if k not in ("event", "time")}
                ledger.event(event["event"], while_locked=True, at=event["time"], **data)
            records = ledger.rows
        finally:
            ledger.close()
        self.cleared = ledger
        self.halted = "RAM cleared; the terminal starts"
        self.snapshot = {**self.snapshot, "halted": self.halted}
        return {"cleared": True, "records": records, "starting": True}
