"""What the terminal tells systemd while it runs (``deploy/cabinet/egm-terminal.service``).

*Ready* means the cabinet reached attract with its self-tests passed: power-up is over, no
self-test failure or other tilt is active and the cabinet is in a playing state (not POWER_UP,
SELF_TEST or TILT). Then ``READY=1`` is sent, once; systemd marks the unit active and starts
what is ordered after it (the update commit, ``egm-update-commit.service``). A cabinet whose
self-test failed stays in TILT, shown on its screens, and its unit stays *activating*: when a
technician clears the tilt and the cabinet reaches attract, ``READY=1`` follows. Meanwhile each
watchdog ping also extends the start-up timeout, so only a hung loop runs it out.

:meth:`ServiceNotifications.step` is called from the terminal's main loop after every step
(``Terminal(on_step=...)``): a hung loop sends no more ``WATCHDOG=1`` and systemd restarts the
service after ``WatchdogSec=``. ``STATUS=`` follows the cabinet's state.
"""

from __future__ import annotations

from typing import Protocol

from firmware.cabinet.sd_notify import Notifier
from firmware.cabinet.states import CabinetState

#: States in which the terminal is not ready (yet).
NOT_READY = (CabinetState.POWER_UP, CabinetState.SELF_TEST, CabinetState.TILT)


class _Tilt(Protocol):
    key: str


class _Cabinet(Protocol):
    @property
    def state(self) -> CabinetState: ...

    @property
    def active_tilts(self) -> tuple[_Tilt, ...]: ...


class _Terminal(Protocol):
    cabinet: _Cabinet


def cabinet_status(terminal: _Terminal) -> str:
    """The one-line STATUS= text: the cabinet's state and its active tilts."""
    state = terminal.cabinet.state
    tilts = terminal.cabinet.active_tilts
    text = "attract" if state is CabinetState.IDLE else state.name.lower()
    if tilts:
        text += ": " + ", ".join(t.key for t in tilts)
    return text


def is_ready(terminal: _Terminal) -> bool:
    return terminal.cabinet.state not in NOT_READY and not terminal.cabinet.active_tilts


class ServiceNotifications:
    """READY=1 once, WATCHDOG=1 pings, STATUS= on every change, STOPPING=1 (``notifier``)."""

    def __init__(self, notifier: Notifier) -> None:
        self.notifier = notifier
        self.ready = False
        self._status: str | None = None

    def step(self, terminal: _Terminal) -> None:
        """After each turn of the main loop (and once after power-up)."""
        if not self.notifier.enabled:
            return
        status = cabinet_status(terminal)
        if not self.ready and is_ready(terminal):
            self.ready = True
            self._status = status
            self.notifier.ready(f"{status} (self-test passed)")
        elif status != self._status:
            self._status = status
            self.notifier.status(status if self.ready else f"starting: {status}")
        self.notifier.ping(extend_start=not self.ready)

    def waiting(self, status: str) -> None:
        """A loop that is not the terminal's (the critical-memory lock) is alive: pings, and the
        status once."""
        if not self.notifier.enabled:
            return
        if status != self._status:
            self._status = status
            self.notifier.status(status)
        self.notifier.ping(extend_start=not self.ready)

    def stopping(self) -> None:
        self.notifier.stopping()
