"""The pyserial scaffolding of a polled device driver: open the port, run a poll thread, close.

A device that speaks only when spoken to (ID-003 and SSP validators, TCL printers) is driven the
same way: the cabinet's requests run on the caller's thread, one thread polls every
``poll_interval`` seconds, and a lock (``_link``) keeps one exchange on the wire at a time.
:class:`PolledSerialDevice` holds that part; a driver fills in :meth:`~PolledSerialDevice._poll_step`
(one poll, counting unanswered ones in ``_missed``) and its protocol. ``MAX_MISSED_POLLS`` polls in
a row without an answer, or a port error, and the device is :meth:`~hal.base.Device.lost`.

:func:`drop_waiting` and :func:`read_some` are the two reads every exchange makes: drop what waits
on the line before a request, then read the answer a slice at a time. :func:`stop_and_close` is
the close of a driver with a reader thread on pyserial (these, and the shoe's).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from abc import abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import serial

from hal.base import Device
from hal.errors import DeviceError, DeviceOperationError

log = logging.getLogger(__name__)


def drop_waiting(port: serial.Serial) -> int:
    """Read and drop the bytes already waiting on ``port``; how many there were."""
    waiting: int = port.in_waiting     # pyserial ships no types
    if waiting:
        port.read(waiting)
    return waiting


def read_some(port: serial.Serial) -> bytes:
    """One read slice: a byte (``b""`` on time-out) and whatever arrived with it."""
    data: bytes = port.read(1)
    if data and port.in_waiting:
        data += port.read(port.in_waiting)
    return data


def stop_and_close(device: Any, *, join_timeout: float, thread_kind: str,
                   logger: logging.Logger = log) -> None:
    """Stop ``device``'s thread and close its port: set ``_stop``, cancel the pending read of
    ``_serial`` (best effort), join ``_thread`` (up to ``join_timeout`` s, unless it is this
    thread), then close the port; ``_thread`` and ``_serial`` end up None. Failures are logged on
    ``logger`` (the driver's own), never raised."""
    device._stop.set()
    port, thread = device._serial, device._thread
    if port is not None:
        try:
            port.cancel_read()
        except Exception:      # cancel_read is best effort: the join below bounds the wait
            logger.debug("%s: cancel_read failed", device.name, exc_info=True)
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=join_timeout)
        if thread.is_alive():
            logger.error("%s: the %s thread did not stop; closing the port under it", device.name,
                         thread_kind)
    device._thread = None
    if port is not None:
        device._serial = None
        try:
            port.close()
        except Exception:
            logger.exception("%s: error while closing %s (ignored)", device.name, device.port)


class PolledSerialDevice(Device):
    """A device on a serial port (or a simulator's pty) that a thread polls."""

    #: Polls in a row without an answer before the device counts as gone.
    MAX_MISSED_POLLS: ClassVar[int] = 3
    #: Longest single blocking read; bounds how late the poll thread notices a stop.
    READ_SLICE_S: ClassVar[float] = 0.05
    #: The port settings (baud rate, parity, ...) of the protocol.
    SERIAL_SETTINGS: ClassVar[Mapping[str, Any]] = {}
    #: The poll thread is called ``f"{THREAD_PREFIX}-{name}"``.
    THREAD_PREFIX: ClassVar[str] = "poll"
    #: What the polls are called in the reason a silent device is lost for.
    POLLS_NAME: ClassVar[str] = "status requests"

    def __init__(self, name: str, *, port: str, timeout: float, poll_interval: float) -> None:
        super().__init__(name, timeout=timeout)
        if not port:
            raise ValueError(f"{name}: port names the serial device, e.g. /dev/ttyUSB0")
        if poll_interval <= 0:
            raise ValueError(f"{name}: poll_interval must be positive, not {poll_interval}")
        self.port = port
        self.poll_interval = poll_interval
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._link = threading.RLock()
        self._missed = 0

    # --- to fill in ---------------------------------------------------------------------------
    @abstractmethod
    def _poll_step(self) -> None:
        """One poll of the poll thread (link lock held); counts a poll unanswered in ``_missed``."""

    def _poll_error(self, exc: DeviceError, stop: threading.Event) -> None:
        """A device error in the poll thread: logged, and polling goes on."""
        log.error("%s: %s", self.name, exc)

    def _join_timeout(self) -> float:
        """How long a close waits for the poll thread."""
        return max(2 * self.timeout, 1.0)

    # --- open and close -----------------------------------------------------------------------
    def _open_port(self) -> None:
        """A fresh stop flag and miss count, and the port opened."""
        self._stop = threading.Event()
        self._missed = 0
        self._serial = serial.Serial(self.port, timeout=min(self.READ_SLICE_S, self.timeout),
                                     write_timeout=self.timeout, **self.SERIAL_SETTINGS)

    def _start_polling(self) -> None:
        self._thread = threading.Thread(target=self._poll_loop,
                                        name=f"{self.THREAD_PREFIX}-{self.name}", daemon=True)
        self._thread.start()

    def _close(self) -> None:
        stop_and_close(self, join_timeout=self._join_timeout(), thread_kind="poll")

    # --- the wire -----------------------------------------------------------------------------
    def _port(self) -> serial.Serial:
        port = self._serial
        if port is None:
            raise serial.PortNotOpenError()
        return port

    @contextlib.contextmanager
    def _exchange(self, what: str) -> Iterator[None]:
        """The link lock, with port errors turned into device errors."""
        self.require_open()
        with self._link:
            self.require_open()
            try:
                yield
            except OSError as exc:
                raise DeviceOperationError(f"{self.name}: {what}: {exc}") from exc

    # --- the poll thread ----------------------------------------------------------------------
    def _poll_loop(self) -> None:
        stop = self._stop
        while not stop.wait(self.poll_interval):
            try:
                with self._link:
                    if stop.is_set():
                        return
                    self._poll_step()
            except OSError as exc:
                self.lost_from_thread(stop, f"port error: {exc}")
                return
            except DeviceError as exc:
                self._poll_error(exc, stop)
            except Exception:
                log.exception("%s: unexpected error in the poll loop (polling on)", self.name)
            if self._missed >= self.MAX_MISSED_POLLS:
                self.lost_from_thread(stop, f"no answer to {self._missed} {self.POLLS_NAME} in a row")
                return

