"""A 3M MicroTouch serial touch controller, simulated: the device role of :class:`MicroTouchCodec`.

The controller answers the host's commands (``<SOH>FT<CR>`` Format Tablet, ``MS`` Mode Stream,
``Z`` Null, ``R`` Reset: ``<SOH>0<CR>``; ``OI`` Output Identity: ``<SOH>`` + its 6-character
identity + ``<CR>``; anything else ``<SOH>1<CR>``) and, whenever the control API touches its
sensor, writes Format Tablet reports at once: touching reports while a finger is down (``hold``
repeats a still finger's report, as Mode Stream does), one lift-off report at the last point.
It starts as the factory default leaves a controller: Format Tablet, Mode Stream. Only Format
Tablet is simulated (any other format command is refused).

Its sensor is mounted like a real one, not square with the screen: the evdev simulator's
:class:`~sim_hardware.touch_evdev.Sensor` maps a screen pixel to the raw point (0..16383) a finger
there produces (:data:`SENSOR` by default), so a calibration fitted on it is a real fit.

Control API (thread-safe; a report goes out on the calling thread, so its latency is the wire's):
``touch`` (a finger at a screen pixel: down, or a move while down), ``touch_raw``, ``drag``,
``hold``, ``lift``, ``tap``. Faults: ``write_raw`` (any bytes), ``garbage`` (line noise with no
sync byte), ``tear_next`` (the next report loses its end on the wire: the one after it brings a
new sync byte), ``split`` (the next report trickles out a few bytes at a time), ``unplug`` (the
serve loop closes the port: the driver's reads fail), ``repeat_replies``.
"""

from __future__ import annotations

import logging
import threading
import time

from drivers.codec import Garbage, Role
from drivers.touch.microtouch_codec import (
    FORMAT_TABLET,
    MODE_STREAM,
    NEGATIVE,
    NULL,
    OUTPUT_IDENTITY,
    POSITIVE,
    RAW_MAX,
    RESET,
    Command,
    MicroTouchCodec,
    Report,
    Response,
)
from sim_hardware.answering import AnsweringDevice
from sim_hardware.pty_link import BytePort
from sim_hardware.touch_evdev import Sensor

log = logging.getLogger(__name__)

#: The simulated controller's sensor: about 8 x 13.5 raw units per pixel of a 1920 x 1080 screen,
#: rotated 1.5 degrees and offset, inside 0..16383 over the whole screen.
SENSOR = Sensor(scale_x=8.0, scale_y=13.5, angle_deg=1.5, offset_x=450.0, offset_y=600.0,
                raw_max=RAW_MAX)
#: Line noise for :meth:`MicroTouchSimulator.garbage`: no byte with bit 7 set, no SOH.
NOISE = b"\x00\x13 noise\x0d\x7f\x02"


class _LockedPort:
    """The serve loop's port, with every write under the simulator's lock (a reply never lands in
    the middle of a report the control API is writing)."""

    def __init__(self, port: BytePort, lock: threading.RLock) -> None:
        self._port = port
        self._lock = lock

    @property
    def closed(self) -> bool:
        return self._port.closed

    def read(self, timeout: float) -> bytes:
        return self._port.read(timeout)

    def write(self, data: bytes) -> None:
        with self._lock:
            self._port.write(data)

    def close(self) -> None:
        with self._lock:
            self._port.close()


class MicroTouchSimulator(AnsweringDevice):
    """One simulated controller; serve it on a byte port (``run_on_pty(sim)``)."""

    WHO = "microtouch sim"

    def __init__(self, *, sensor: Sensor | None = None, identity: str = "EG0001") -> None:
        super().__init__()
        if len(identity) != 6 or not identity.isascii() or not identity.isprintable():
            raise ValueError(f"an Output Identity is 6 printable ASCII characters, not {identity!r}")
        self.sensor = sensor or SENSOR
        self.identity = identity
        self._codec = MicroTouchCodec(Role.DEVICE)
        self._port: _LockedPort | None = None
        self._split = 0
        self._tear = 0
        self.stream_mode = True
        #: Mode Stream repeats a finger that is down this often (None: only the reports asked for,
        #: :meth:`hold`). A real controller streams many times a second while touched.
        self.stream_interval_s: float | None = 0.1
        self.touching = False
        self.point = (0, 0)                  #: the last raw point reported
        self.commands: list[str] = []        #: every command the host sent, in order
        self.garbage_from_host = 0
        self.reports_sent = 0

    # --- the host's side ------------------------------------------------------------------------
    def feed(self, data: bytes) -> list[bytes]:
        with self._lock:
            out: list[bytes] = []
            for event in self._received(data):
                if isinstance(event, Garbage):
                    self.garbage_from_host += 1
                    log.debug("microtouch sim: garbage from the host (%s)", event.reason)
                    continue
                assert isinstance(event, Command)
                self.commands.append(event.text)
                out += self._copies(self._codec.send(Response(self._answer(event.text))))
            return out

    def _answer(self, command: str) -> str:
        if command in (FORMAT_TABLET, NULL):
            return POSITIVE
        if command == MODE_STREAM:
            self.stream_mode = True
            return POSITIVE
        if command == RESET:
            self.touching = False                # a reset stops the data of the touch under way
            return POSITIVE
        if command == OUTPUT_IDENTITY:
            return self.identity
        log.info("microtouch sim: command %r refused (not simulated)", command)
        return NEGATIVE

    def serve(self, port: BytePort, stop: threading.Event) -> None:
        locked = _LockedPort(port, self._lock)
        with self._lock:
            self._port = locked
        streamer = threading.Thread(target=self._stream, args=(stop,), name="microtouch-sim-stream", daemon=True)
        streamer.start()
        try:
            super().serve(locked, stop)          # type: ignore[arg-type]
        finally:
            with self._lock:
                self._port = None
            streamer.join(1.0)

    def _stream(self, stop: threading.Event) -> None:
        """Mode Stream: the finger that is down is reported again every ``stream_interval_s``."""
        while not stop.wait(self.stream_interval_s or 0.05):
            with self._lock:
                if self._port is None:
                    return
                if self.stream_interval_s is None or not (self.touching and self.stream_mode):
                    continue
                try:
                    self._report(*self.point, True)
                except OSError:              # unplugged: nothing more to stream
                    return

    # --- the wire ---------------------------------------------------------------------------------
    def _write(self, data: bytes) -> None:
        """Write on the serving port now (``OSError`` if not serving: not started, or unplugged)."""
        with self._lock:
            port = self._port
            if port is None or self._unplug:
                raise OSError("the MicroTouch simulator is not serving (unplugged or not started)")
            if self._split:
                step, self._split = self._split, 0
                for i in range(0, len(data), step):
                    port.write(data[i:i + step])
                    time.sleep(0.001)
            else:
                port.write(data)

    def _report(self, x: int, y: int, touching: bool) -> None:
        with self._lock:
            data = self._codec.send(Report(x, y, touching))
            if self._tear:
                keep, self._tear = self._tear, 0
                data = data[:keep]
            self._write(data)
            self.touching, self.point = touching, (x, y)
            self.reports_sent += 1

    # --- touches ---------------------------------------------------------------------------------
    def touch_raw(self, x: int, y: int) -> None:
        """A finger at raw point (x, y): a touch-down, or a move of the finger already down."""
        self._report(x, y, True)

    def touch(self, x: float, y: float) -> tuple[int, int]:
        """A finger at screen pixel (x, y) through the sensor; the raw point it produced."""
        raw = self.sensor.raw(x, y)
        self.touch_raw(*raw)
        return raw

    def hold(self, n: int = 1) -> None:
        """The finger stays still: Mode Stream sends its report ``n`` more times."""
        with self._lock:
            if not self.touching:
                raise ValueError("no finger on the sensor to hold")
            for _ in range(n):
                self._report(*self.point, True)

    def drag(self, start: tuple[float, float], end: tuple[float, float],
             steps: int = 8) -> list[tuple[int, int]]:
        """A finger from screen pixel ``start`` to ``end`` in ``steps`` moves (it stays down);
        the raw points reported."""
        if steps < 1:
            raise ValueError("a drag is at least 1 step")
        (x0, y0), (x1, y1) = start, end
        return [self.touch(x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps)
                for i in range(steps + 1)]

    def lift(self) -> None:
        """The finger leaves the sensor: one report at the last point, proximity clear."""
        with self._lock:
            if not self.touching:
                raise ValueError("no finger on the sensor to lift")
            self._report(*self.point, False)

    def tap(self, x: float, y: float) -> tuple[int, int]:
        """Touch at screen pixel (x, y) and lift; the raw point."""
        with self._lock:
            raw = self.touch(x, y)
            self.lift()
            return raw

    # --- faults -----------------------------------------------------------------------------------
    def write_raw(self, data: bytes) -> None:
        self._write(data)

    def garbage(self, data: bytes = NOISE) -> None:
        """Line noise: ``data`` (by default bytes that can start neither a report nor a response)."""
        self._write(data)

    def tear_next(self, keep: int = 3) -> None:
        """The next report loses all but its first ``keep`` bytes (1..4) on the wire."""
        if not 1 <= keep <= 4:
            raise ValueError(f"a torn report keeps 1..4 of its 5 bytes, not {keep}")
        with self._lock:
            self._tear = keep

    def split(self, step: int = 1) -> None:
        """The next write goes out ``step`` bytes at a time (a report torn across reads)."""
        if step < 1:
            raise ValueError("a split is at least 1 byte")
        with self._lock:
            self._split = step


__all__ = ["NOISE", "SENSOR", "MicroTouchSimulator"]
