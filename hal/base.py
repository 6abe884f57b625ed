"""The lifecycle every device backend shares, written once (python-can's ``BusABC`` idea).

A backend fills in ``_open`` and ``_close`` and emits events with ``_emit``; this class gives it:

* ``open()`` that wraps any failure in :class:`DeviceInitError` and tears down what was half built;
* ``close()`` that is idempotent and logs a failing teardown instead of raising;
* a context manager;
* ``lost(reason)`` for a device that vanished (the driver's read loop calls it): it is closed, a
  :class:`DeviceOffline` event is queued, and requests raise :class:`DeviceGoneError` until
  ``reopen()`` (the hot-plug monitor calls it when the device is back);
* one thread-safe event queue per device: ``next_event(timeout)``.

Clocks and ports are passed in; nothing here reaches a global.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar, Self

from hal.errors import DeviceClosedError, DeviceError, DeviceGoneError, DeviceInitError
from hal.events import DeviceEvent, DeviceOffline, DeviceOnline

log = logging.getLogger(__name__)


class Lifecycle(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    GONE = "gone"          #: vanished while open; waits for ``reopen``


class Device(ABC):
    """Base of every backend of every device class."""

    #: The device class this backend implements (``bill_validator``, ``printer``, ...).
    device_class: ClassVar[str] = ""
    #: Where the device is looked for (its serial port, input node...), for the technician;
    #: None: nowhere in particular. A backend sets it.
    port: str | None = None
    #: Link health for diagnostics (garbage, timeouts, reconnects...): name -> count.
    counters: Mapping[str, int] = MappingProxyType({})
    #: Whether the cabinet reopens the device while it is offline (every reconnect interval).
    auto_reconnect: bool = True

    def __init__(self, name: str, *, timeout: float = 1.0) -> None:
        if not name:
            raise ValueError("a device needs a name")
        if timeout <= 0:
            raise ValueError(f"{name}: timeout must be positive, not {timeout}")
        self.name = name
        self.timeout = timeout
        self._lifecycle = Lifecycle.CLOSED
        self._lock = threading.RLock()
        self._events: queue.SimpleQueue[DeviceEvent] = queue.SimpleQueue()

    # --- hooks --------------------------------------------------------------------------------
    @abstractmethod
    def _open(self) -> None:
        """Open the port and bring the device to a known state; raise on failure."""

    @abstractmethod
    def _close(self) -> None:
        """Release everything ``_open`` acquired; called once per successful or failed open."""

    # --- lifecycle ----------------------------------------------------------------------------
    @property
    def lifecycle(self) -> Lifecycle:
        return self._lifecycle

    @property
    def is_open(self) -> bool:
        return self._lifecycle is Lifecycle.OPEN

    def open(self) -> Self:
        with self._lock:
            if self._lifecycle is Lifecycle.OPEN:
                return self
            try:
                self._open()
            except Exception as exc:
                self._teardown()
                if isinstance(exc, DeviceInitError):
                    raise
                raise DeviceInitError(f"{self.name}: cannot open: {exc}") from exc
            self._lifecycle = Lifecycle.OPEN
        log.info("%s: open", self.name)
        self._emit(DeviceOnline(self.name))
        return self

    def close(self) -> None:
        with self._lock:
            if self._lifecycle is Lifecycle.CLOSED:
                return
            self._lifecycle = Lifecycle.CLOSED
            self._teardown()
        log.info("%s: closed", self.name)

    def reopen(self) -> Self:
        """Close (if needed) and open again: after an unplug, or to recover from a fault."""
        self.close()
        return self.open()

    def lost(self, reason: str) -> None:
        """The device vanished under an open backend: release it and report it once."""
        with self._lock:
            if self._lifecycle is not Lifecycle.OPEN:
                return
            self._lifecycle = Lifecycle.GONE
            self._teardown()
        log.warning("%s: lost: %s", self.name, reason)
        self._emit(DeviceOffline(self.name, reason))

    def lost_from_thread(self, stop: threading.Event, reason: str) -> None:
        """:meth:`lost`, called by the device's own reader or poll thread: reported unless a close
        is already under way (the close holds the device lock and sets ``stop``, then waits for the
        thread, so the thread must not block on the lock)."""
        while not stop.is_set():
            if self._lock.acquire(timeout=0.05):
                try:
                    self.lost(reason)
                finally:
                    self._lock.release()
                return

    def _teardown(self) -> None:
        try:
            self._close()
        except Exception:
            log.exception("%s: error while closing (ignored)", self.name)

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def require_open(self) -> None:
        """Raise the right operation error unless the device is open."""
        state = self._lifecycle
        if state is Lifecycle.GONE:
            raise DeviceGoneError(f"{self.name}: the device is gone (unplugged or not answering)")
        if state is not Lifecycle.OPEN:
            raise DeviceClosedError(f"{self.name}: the device is not open")

    # --- events -------------------------------------------------------------------------------
    def _emit(self, event: DeviceEvent) -> None:
        self._events.put(event)

    def next_event(self, timeout: float | None = 0.0) -> DeviceEvent | None:
        """The oldest queued event, waiting up to ``timeout`` seconds (None: forever); or None."""
        try:
            if timeout == 0:
                return self._events.get_nowait()
            return self._events.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain_events(self) -> list[DeviceEvent]:
        """Every queued event, oldest first, without waiting."""
        out: list[DeviceEvent] = []
        while (event := self.next_event(0)) is not None:
            out.append(event)
        return out

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} {self._lifecycle.value}>"


__all__ = ["Device", "DeviceError", "Lifecycle"]
