"""Linux evdev touchscreen driver: :class:`TouchDecoder` over ``os.read`` of an event node.

``path`` is an event device node (``/dev/input/eventN``, or a stable ``/dev/input/by-id/...``
link) or a FIFO carrying the same records (the simulator's). One reader thread waits with
``select`` on the node and on a wake-up pipe (so ``close`` never waits for a touch), reads whole
records, decodes them and emits one :class:`~hal.events.Touch` per contact change, in screen pixels
through the :class:`~hal.calibration.Calibration` given as its JSON dict (the record kept in critical
memory). With ``calibration=None`` the raw sensor coordinates are reported as they are: that is what
the calibration screen needs to fit one.

Reading a stream needs no library: ``python-evdev`` is not used. What it would add (the axis ranges
by ``EVIOCGABS``, ``EVIOCGRAB`` to keep the X server off the device) is not needed for a FIFO and is
left out; the kiosk session does not run another consumer of the node.

The node disappearing (``ENODEV`` on read: unplugged) or a FIFO whose writer closed it (end of
stream after data) is :meth:`~hal.base.Device.lost`; ``reopen()`` recovers.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from drivers.codec import NEED_DATA
from drivers.touch.contact import Contact, load_calibration, to_touch
from drivers.touch.evdev_codec import RECORD, TouchDecoder
from hal.devices.touch import Touchscreen
from hal.events import Touch

log = logging.getLogger(__name__)

#: Records read at most per ``os.read`` (a read of an evdev node returns whole records only).
READ_RECORDS = 64


class EvdevTouch(Touchscreen):
    device_class: ClassVar[str] = "touch"

    def __init__(self, name: str, *, path: str, timeout: float = 1.0,
                 calibration: Mapping[str, Any] | None = None, max_slots: int = 16) -> None:
        super().__init__(name, timeout=timeout)
        if not path:
            raise ValueError(f"{name}: an evdev touchscreen needs a path (/dev/input/eventN)")
        self.path = self.port = path
        self.max_slots = max_slots
        self.calibration = load_calibration(name, calibration)
        self._fd = -1
        self._wake: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._fresh_decoder()

    def _fresh_decoder(self) -> None:
        """A new decoder (no half-read record survives a reopen); its counters are the device's."""
        self._decoder = TouchDecoder(self.max_slots)
        self.counters = self._decoder.counters

    # --- lifecycle hooks ---------------------------------------------------------------------
    def _open(self) -> None:
        self._stop = threading.Event()
        self._fresh_decoder()
        self._fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._wake = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._thread = threading.Thread(target=self._read_loop, args=(self._fd, self._stop),
                                        name=f"evdev-{self.name}", daemon=True)
        self._thread.start()

    def _close(self) -> None:
        self._stop.set()
        wake, self._wake = self._wake, None
        if wake is not None:
            with contextlib.suppress(OSError):
                os.write(wake[1], b"x")
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=max(2 * self.timeout, 1.0))
            if thread.is_alive():
                log.error("%s: the reader thread did not stop", self.name)
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)
        if wake is not None:
            for end in wake:
                os.close(end)

    # --- the reader thread ---------------------------------------------------------------------
    def _read_loop(self, fd: int, stop: threading.Event) -> None:
        wake = self._wake
        assert wake is not None
        seen_data = False
        while not stop.is_set():
            try:
                ready, _, _ = select.select([fd, wake[0]], [], [])
                if stop.is_set():
                    return
                if fd not in ready:
                    continue
                data = os.read(fd, READ_RECORDS * RECORD.size)
            except BlockingIOError:
                continue
            except OSError as exc:
                reason = ("the device was unplugged" if exc.errno == errno.ENODEV
                          else f"read error: {exc}")
                self.lost_from_thread(stop, reason)
                return
            if not data:
                if not seen_data:         # a FIFO nobody has opened for writing yet
                    stop.wait(0.01)
                    continue
                self.lost_from_thread(stop, "the event stream ended")
                return
            seen_data = True
            self._receive(data)

    def _receive(self, data: bytes) -> None:
        decoder = self._decoder
        decoder.receive_data(data)
        while (contact := decoder.next_event()) is not NEED_DATA:
            self._emit(self.to_touch(contact))

    def to_touch(self, contact: Contact) -> Touch:
        """The cabinet's event for a raw contact: calibrated to screen pixels if calibrated."""
        return to_touch(self.name, self.calibration, contact)
