"""systemd's service notification protocol, the sender's side (sd_notify(3), sd_watchdog_enabled(3)).

A service started by systemd with ``Type=notify`` (``deploy/cabinet/egm-terminal.service``) finds
the manager's socket in ``$NOTIFY_SOCKET``: a path, or an abstract socket name written with a
leading ``@`` (the ``@`` stands for the NUL byte that starts the address). One notification is one
datagram on an ``AF_UNIX``/``SOCK_DGRAM`` socket, holding newline-separated ``KEY=VALUE``
assignments: ``READY=1`` (start-up is complete), ``STATUS=...`` (free text shown by ``systemctl
status``), ``WATCHDOG=1`` (the keep-alive ping), ``EXTEND_TIMEOUT_USEC=N`` (start-up needs N more
microseconds), ``STOPPING=1``. ``$WATCHDOG_USEC`` is the unit's ``WatchdogSec=`` in microseconds;
sd_watchdog_enabled(3) asks for a ping at half that interval, and for the watchdog to be ignored
when ``$WATCHDOG_PID`` names another process.

No library is used: ``systemd-python`` (the maintained binding) needs libsystemd's headers and a C
build in the packaged virtual environment, and PyPI's ``sdnotify`` has had no release since 2017;
the protocol is the few lines below. Without ``$NOTIFY_SOCKET`` (not started by systemd) every
call does nothing. A send that fails is logged once and otherwise ignored: the terminal must not
stop because its supervisor went away.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)


class Notifier:
    """Notifications to systemd (a no-op when ``address`` is None)."""

    def __init__(self, address: str | None, watchdog_usec: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.address = address
        #: Seconds between two watchdog pings (half of ``WatchdogSec=``), or None: no watchdog.
        self.interval = watchdog_usec / 2_000_000 if watchdog_usec else None
        self.clock = clock
        self._last_ping: float | None = None
        self._failed = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        """The notifier systemd's environment asks for (``NOTIFY_SOCKET``, ``WATCHDOG_USEC``,
        ``WATCHDOG_PID``)."""
        env = os.environ if environ is None else environ
        address = env.get("NOTIFY_SOCKET") or None
        usec: int | None = None
        raw = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        if raw:
            try:
                usec = int(raw)
            except ValueError:
                log.warning("WATCHDOG_USEC=%r is not a number of microseconds; no watchdog pings", raw)
            if pid and pid != str(os.getpid()):
                usec = None                 # the watchdog is another process's (sd_watchdog_enabled(3))
        if usec is not None and usec <= 0:
            usec = None
        return cls(address, usec)

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *assignments: str) -> bool:
        """One datagram with ``assignments`` (``"READY=1"``, ...); True if it was sent."""
        if self.address is None:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        payload = "\n".join(assignments).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.sendto(payload, target)
        except OSError as exc:
            if not self._failed:
                log.warning("systemd notification to %s failed: %s", self.address, exc)
                self._failed = True
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.send("READY=1", f"STATUS={_one_line(status)}")

    def status(self, text: str) -> bool:
        return self.send(f"STATUS={_one_line(text)}")

    def stopping(self, status: str = "stopping") -> bool:
        return self.send("STOPPING=1", f"STATUS={_one_line(status)}")

    def ping(self, *, extend_start: bool = False) -> bool:
        """``WATCHDOG=1`` if half the watchdog interval has passed since the last ping (call it
        as often as the loop turns). ``extend_start``: start-up is not over yet (the terminal
        waits for a technician), so the ping also asks systemd for two more intervals of start-up
        time (``EXTEND_TIMEOUT_USEC``), which a hung loop then stops asking for."""
        if self.interval is None:
            return False
        now = self.clock()
        if self._last_ping is not None and now - self._last_ping < self.interval:
            return False
        self._last_ping = now
        if extend_start:
            return self.send("WATCHDOG=1", f"EXTEND_TIMEOUT_USEC={int(self.interval * 4_000_000)}")
        return self.send("WATCHDOG=1")


def _one_line(text: str) -> str:
    return " ".join(text.split())
