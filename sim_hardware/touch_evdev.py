"""An evdev touchscreen, simulated: input_event records written into a FIFO the real driver reads.

The simulator plays the kernel's side of ``/dev/input/eventN`` with the device side of the same
codec (:class:`~drivers.touch.evdev_codec.TouchEncoder`): touches at raw sensor points become the
type-B multitouch records and ``SYN_REPORT`` a real panel would send. Its sensor is mounted like a
real one, not square with the screen: :class:`Sensor` maps a screen pixel to the raw point a finger
there produces (scale, rotation, offset), so a calibration fitted on it is a real fit.

Control API: ``down``/``move``/``up`` (one slot), ``frame`` (several slots in one report),
``tap``, ``two_finger``, ``touch_screen`` (a finger at a screen pixel, through the sensor).
Faults: ``write_raw`` (any bytes, e.g. half a record), ``syn_dropped`` (the kernel's overrun
marker), ``split`` (the next records trickle out a few bytes at a time), ``unplug`` (the writer
closes: the reader sees the end of the stream).

The FIFO must have a reader before a writer can open it without blocking: :meth:`connect` waits
up to ``timeout`` for the driver to open it.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Self

from drivers.touch.evdev_codec import EV_SYN, SYN_DROPPED, InputEvent, Phase, TouchEncoder

#: Raw axis range of the simulated panel (0..RAW_MAX on both axes).
RAW_MAX = 32767


@dataclass(frozen=True, slots=True)
class Sensor:
    """Screen pixel -> raw sensor point: ``scale`` raw units per pixel, rotated, then offset, and
    kept in the sensor's range ``0..raw_max``."""

    scale_x: float = 15.5
    scale_y: float = 27.0
    angle_deg: float = 1.5
    offset_x: float = 900.0
    offset_y: float = 1200.0
    raw_max: int = RAW_MAX

    def raw(self, x: float, y: float) -> tuple[int, int]:
        t = math.radians(self.angle_deg)
        rx = (math.cos(t) * x - math.sin(t) * y) * self.scale_x + self.offset_x
        ry = (math.sin(t) * x + math.cos(t) * y) * self.scale_y + self.offset_y
        top = self.raw_max
        return (min(max(round(rx), 0), top), min(max(round(ry), 0), top))


def make_fifo(path: str) -> str:
    """Create the FIFO at ``path`` unless one is there; ``ValueError`` if something else is."""
    try:
        os.mkfifo(path, 0o600)
    except FileExistsError:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            raise ValueError(f"{path} exists and is not a FIFO") from None
    return path


class EvdevTouchSimulator:
    """Writes a touchscreen's records into the FIFO at ``path``; thread-safe."""

    def __init__(self, path: str, *, sensor: Sensor | None = None,
                 single_touch: bool = False) -> None:
        self.path = path
        self.sensor = sensor or Sensor()
        self._encoder = TouchEncoder(single_touch=single_touch)
        self._fd = -1
        self._lock = threading.Lock()
        self._split = 0
        self.records_written = 0

    # --- the FIFO -----------------------------------------------------------------------------
    def connect(self, timeout: float = 2.0) -> Self:
        """Open the FIFO for writing once a reader has it open (``TimeoutError`` after ``timeout``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                if time.monotonic() >= deadline:
                    raise TimeoutError(f"no reader opened {self.path} within {timeout} s") from None
                time.sleep(0.005)
        os.set_blocking(fd, True)
        with self._lock:
            self._fd = fd
        return self

    @property
    def connected(self) -> bool:
        return self._fd >= 0

    def unplug(self) -> None:
        """Close the writing end: the driver reads the end of the stream."""
        with self._lock:
            fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    close = unplug

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd < 0:
                raise OSError(errno.EBADF, "the simulator is not connected to its FIFO")
            if self._split:
                step, self._split = self._split, 0
                for i in range(0, len(data), step):
                    os.write(self._fd, data[i:i + step])
                    time.sleep(0.001)
            else:
                os.write(self._fd, data)     # <= PIPE_BUF: one atomic write
            self.records_written += len(data) // 24

    # --- touches --------------------------------------------------------------------------------
    def frame(self, changes: Iterable[tuple[int, Phase, int, int]]) -> None:
        """One report: ``(slot, phase, raw_x, raw_y)`` changes, then ``SYN_REPORT``."""
        now = time.time()
        sec, usec = int(now), int(now % 1 * 1_000_000)
        with self._lock:
            data = self._encoder.frame(changes, sec=sec, usec=usec)
        self._write(data)

    def down(self, x: int, y: int, slot: int = 0) -> None:
        self.frame([(slot, Phase.DOWN, x, y)])

    def move(self, x: int, y: int, slot: int = 0) -> None:
        self.frame([(slot, Phase.MOVE, x, y)])

    def up(self, slot: int = 0) -> None:
        self.frame([(slot, Phase.UP, 0, 0)])

    def tap(self, x: int, y: int, slot: int = 0) -> None:
        self.down(x, y, slot)
        self.up(slot)

    def two_finger(self, first: tuple[int, int], second: tuple[int, int]) -> None:
        """Two fingers down in one report, then both lifted in one report."""
        self.frame([(0, Phase.DOWN, *first), (1, Phase.DOWN, *second)])
        self.frame([(0, Phase.UP, 0, 0), (1, Phase.UP, 0, 0)])

    def touch_screen(self, x: float, y: float) -> tuple[int, int]:
        """A tap at screen pixel (x, y) through the sensor; the raw point it produced."""
        raw = self.sensor.raw(x, y)
        self.tap(*raw)
        return raw

    # --- faults ---------------------------------------------------------------------------------
    def write_raw(self, data: bytes) -> None:
        self._write(data)

    def syn_dropped(self) -> None:
        """The kernel's overrun marker: the reader discards up to the next SYN_REPORT."""
        self._write(InputEvent(EV_SYN, SYN_DROPPED, 0).encode())

    def split(self, step: int = 5) -> None:
        """The next write goes out ``step`` bytes at a time (records split across reads)."""
        if step < 1:
            raise ValueError("a split is at least 1 byte")
        self._split = step
