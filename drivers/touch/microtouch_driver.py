"""3M MicroTouch serial touchscreen driver: :class:`TouchDecoder` over pyserial, one reader thread.

``port`` is the controller's serial port (``/dev/ttyS0``, a ``/dev/serial/by-id/...`` link of a
USB adapter, or a simulator's pty) at 9600 8N1, the controllers' factory default. Open brings the
controller to a known state, each command answered ``<SOH>0<CR>`` within ``timeout`` or the open
fails with a :class:`~hal.errors.DeviceInitError` naming it:

1. ``<SOH>FT<CR>`` Format Tablet (5-byte binary reports; refused in 7-bit mode),
2. ``<SOH>MS<CR>`` Mode Stream (reports while touched and one at lift-off: every phase is seen).

Then the controller speaks unasked: one reader thread (pyserial reads of at most
``READ_SLICE_S``, so ``close`` never waits long) decodes the reports and emits one
:class:`~hal.events.Touch` per contact change, in screen pixels through the
:class:`~hal.calibration.Calibration` given as its JSON dict (the record kept in critical memory),
exactly as the evdev driver does. With ``calibration=None`` the raw sensor coordinates (0..16383)
are reported, for the calibration screen. Commands asked later (:meth:`identity`) are answered on
the same line between reports; the reader thread hands the answer over.

Gone: a port error (the USB adapter unplugged, the pty's simulator gone) is
:meth:`~hal.base.Device.lost`. An untouched controller says nothing, so after ``probe_interval``
seconds of silence the reader sends the Null command ``<SOH>Z<CR>`` (it changes nothing); if
``MAX_MISSED`` in a row go unanswered within ``timeout`` the controller is lost too (a cable pulled
behind the adapter). ``probe_interval=None`` turns the probe off. ``reopen()`` recovers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import ChainMap
from collections.abc import Mapping
from typing import Any, ClassVar

import serial

from drivers.codec import NEED_DATA
from drivers.serial_loop import read_some, stop_and_close
from drivers.touch.contact import Contact, load_calibration, to_touch
from drivers.touch.microtouch_codec import (
    FORMAT_TABLET,
    MODE_STREAM,
    NULL,
    OUTPUT_IDENTITY,
    SERIAL,
    Command,
    Response,
    TouchDecoder,
    encode,
)
from hal.devices.touch import Touchscreen
from hal.errors import DeviceInitError, DeviceOperationError, DeviceTimeoutError
from hal.events import Touch

log = logging.getLogger(__name__)

#: The commands' names in messages.
NAMES = {FORMAT_TABLET: "Format Tablet", MODE_STREAM: "Mode Stream", NULL: "Null",
         OUTPUT_IDENTITY: "Output Identity"}
#: What the reader thread waits on while a probe is unanswered (an asked command: its text).
_PROBE = object()


class MicroTouch(Touchscreen):
    device_class: ClassVar[str] = "touch"
    #: Longest single blocking read; bounds how late the reader thread notices a stop.
    READ_SLICE_S: ClassVar[float] = 0.02
    #: Null commands in a row without an answer before the controller counts as gone.
    MAX_MISSED: ClassVar[int] = 3

    def __init__(self, name: str, *, port: str, timeout: float = 1.0,
                 calibration: Mapping[str, Any] | None = None,
                 probe_interval: float | None = 2.0, lift_gap: float | None = 0.5) -> None:
        super().__init__(name, timeout=timeout)
        if not port:
            raise ValueError(f"{name}: port names the controller's serial device, e.g. /dev/ttyS0")
        if probe_interval is not None and probe_interval <= 0:
            raise ValueError(f"{name}: probe_interval must be positive (or None), "
                             f"not {probe_interval}")
        if lift_gap is not None and lift_gap <= 0:
            raise ValueError(f"{name}: lift_gap must be positive (or None), not {lift_gap}")
        self.port = port
        self.probe_interval = probe_interval
        #: Seconds a finger that is down may send no report before its lift-off counts as lost
        #: (Mode Stream repeats a still finger many times a second; None: never).
        self.lift_gap = lift_gap
        self._last_report_at = 0.0
        self.calibration = load_calibration(name, calibration)
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._ask_lock = threading.Lock()
        #: Guards what is awaited (``_outstanding``), the answer (``_reply``) and the probe state.
        self._cond = threading.Condition()
        self._outstanding: object | None = None
        self._reply: Response | None = None
        self._last_heard = self._probe_at = 0.0
        self._missed = 0
        self._counts = {"unexpected_responses": 0, "probes": 0, "missed_probes": 0}
        self._fresh_decoder()

    def _fresh_decoder(self) -> None:
        """A new decoder (no half-read report survives a reopen). Link health: reports, repeats,
        garbage (the decoder's), responses, probes (the driver's)."""
        self._decoder = TouchDecoder()
        self.counters = ChainMap(self._decoder.counters, self._counts)

    # --- lifecycle hooks ---------------------------------------------------------------------
    def _open(self) -> None:
        self._stop = threading.Event()
        self._fresh_decoder()
        with self._cond:
            self._outstanding = self._reply = None
            self._missed = 0
            self._last_heard = self._probe_at = time.monotonic()
        self._serial = serial.Serial(self.port, timeout=self.READ_SLICE_S,
                                     write_timeout=self.timeout, **SERIAL)
        self._serial.reset_input_buffer()            # whatever the line held before us
        self._thread = threading.Thread(target=self._read_loop, args=(self._serial, self._stop),
                                        name=f"microtouch-{self.name}", daemon=True)
        self._thread.start()
        for command in (FORMAT_TABLET, MODE_STREAM):
            reply = self._ask(command)
            if not reply.ok:
                hint = " (it refuses it in 7-bit mode)" if command == FORMAT_TABLET else ""
                raise DeviceInitError(
                    f"{self.name}: the controller refused {NAMES[command]} "
                    f"(<SOH>{command}<CR> answered {reply.text!r}){hint}")

    def _close(self) -> None:
        stop_and_close(self, join_timeout=max(2 * self.timeout, 1.0), thread_kind="reader",
                       logger=log)

    # --- the cabinet's requests ---------------------------------------------------------------
    def identity(self) -> str:
        """The controller's Output Identity: its type (2 characters) and a build id (4)."""
        self.require_open()
        return self._ask(OUTPUT_IDENTITY).text

    # --- commands -----------------------------------------------------------------------------
    def _ask(self, command: str) -> Response:
        """Send ``command`` and wait for its answer (the reader thread hands it over)."""
        what = f"{NAMES.get(command, command)} (<SOH>{command}<CR>)"
        with self._ask_lock:
            with self._cond:
                # a probe in flight is answered or given up within one timeout
                if not self._cond.wait_for(lambda: self._outstanding is None, 2 * self.timeout):
                    raise DeviceTimeoutError(f"{self.name}: the line stayed busy before {what}")
                self._outstanding, self._reply = command, None
            try:
                self._write(encode(Command(command)))
                with self._cond:
                    self._cond.wait_for(lambda: self._reply is not None, self.timeout)
                    reply = self._reply
            finally:
                with self._cond:
                    self._outstanding = self._reply = None
                    self._cond.notify_all()
        if reply is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to {what} on {self.port} "
                                     f"within {self.timeout:g} s")
        return reply

    def _write(self, data: bytes) -> None:
        with self._write_lock:
            port = self._serial
            try:
                if port is None:
                    raise serial.PortNotOpenError()
                port.write(data)
            except OSError as exc:
                raise DeviceOperationError(f"{self.name}: write failed: {exc}") from exc

    # --- the reader thread ----------------------------------------------------------------------
    def _read_loop(self, port: serial.Serial, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                data = read_some(port)
                now = time.monotonic()
                self._expire_silent_finger(now)      # before new data: a new touch is a touch-down
                if data:
                    self._receive(data, now)
                if self._probe_due(now):
                    with self._write_lock:
                        port.write(encode(Command(NULL)))
            except OSError as exc:
                self.lost_from_thread(stop, f"port error: {exc}")
                return
            except Exception:
                log.exception("%s: unexpected error in the reader thread (reading on)", self.name)
            if self._missed >= self.MAX_MISSED:
                self.lost_from_thread(stop, f"no answer to {self._missed} Null commands in a row")
                return

    def _expire_silent_finger(self, now: float) -> None:
        if self.lift_gap is None:
            return
        with self._cond:
            contact = (self._decoder.expire() if self._decoder.touching
                       and now - self._last_report_at > self.lift_gap else None)
        if contact is not None:
            log.info("%s: the finger went silent for %.2f s: its lift-off counts as lost", self.name,
                     now - self._last_report_at)
            self._emit(self.to_touch(contact))

    def _receive(self, data: bytes, now: float) -> None:
        decoder = self._decoder
        with self._cond:
            self._last_heard, self._missed = now, 0       # it speaks: it is there
            decoder.receive_data(data)
            reports = decoder.reports
        while True:
            with self._cond:
                event = decoder.next_event()
                if isinstance(event, Response):
                    self._answer(event)
                    continue
            if event is NEED_DATA:
                with self._cond:
                    if decoder.reports != reports:
                        self._last_report_at = now
                return
            self._emit(self.to_touch(event))

    def _answer(self, response: Response) -> None:
        """A response arrived (``_cond`` held): it answers the probe or the asked command."""
        if self._outstanding is None:
            self._counts["unexpected_responses"] += 1
            log.debug("%s: a response nobody asked for: %r", self.name, response.text)
        elif self._outstanding is _PROBE:
            self._outstanding = None
            self._missed = 0
        else:
            self._reply = response
        self._cond.notify_all()

    def _probe_due(self, now: float) -> bool:
        """Whether to send a Null command now (and count an unanswered one)."""
        if self.probe_interval is None:
            return False
        with self._cond:
            if self._outstanding is _PROBE and now - self._probe_at >= self.timeout:
                self._missed += 1
                self._counts["missed_probes"] += 1
                self._outstanding = None
                self._cond.notify_all()
            if (self._outstanding is not None or self._missed >= self.MAX_MISSED
                    or (now - self._last_heard < self.probe_interval and not self._missed)):
                return False
            self._outstanding, self._probe_at = _PROBE, now
            self._counts["probes"] += 1
            return True

    def to_touch(self, contact: Contact) -> Touch:
        """The cabinet's event for a raw contact: calibrated to screen pixels if calibrated."""
        return to_touch(self.name, self.calibration, contact)

