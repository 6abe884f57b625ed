"""Screenshots of the running screens (the control socket's ``screenshot`` op).

Taking one is two halves on two threads. On the thread that draws (the window's, which owns
pygame), :func:`grab` copies the frame just drawn, scaled to the size asked, to plain bytes with
where its named regions are; on the asking thread, :func:`answer` encodes those bytes as PNG
(:func:`png`: zlib, no pygame) for the answer. :class:`FrameGrab` hands requests to the drawing
thread and the grabs back: an app calls :meth:`FrameGrab.serve` at the end of each frame, and
:meth:`FrameGrab.request` waits for it (a time-out when no frame is drawn).
"""

from __future__ import annotations

import base64
import struct
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pygame

from firmware.errors import EgmError
from firmware.ui.layout import Scaler
from firmware.ui.painter import Frame

#: How long a request waits for the next frame.
FRAME_WAIT_S = 5.0


class CaptureError(EgmError):
    """No frame could be captured (the screens drew none in time)."""


@dataclass(frozen=True)
class Grab:
    """One frame as RGB bytes at ``size``, its regions in those pixels, and what it showed."""

    rgb: bytes
    size: tuple[int, int]
    regions: dict[str, list[int]]
    screen: str
    state: str | None
    lab: str | None


def grab(surface: pygame.Surface, frame: Frame | None, scaler: Scaler, size: tuple[int, int], *,
         screen: str, state: str | None, lab: str | None) -> Grab:
    """The frame on ``surface`` at ``size`` (scaled when the surface is another size). On the
    thread that draws."""
    source = surface
    sw, sh = surface.get_size()
    if (sw, sh) != size:
        try:
            source = pygame.transform.smoothscale(surface, size)
        except ValueError:                    # smoothscale takes 24 and 32-bit surfaces only
            source = pygame.transform.scale(surface, size)
    rgb = pygame.image.tobytes(source, "RGB")
    fx, fy = size[0] / sw, size[1] / sh
    regions: dict[str, list[int]] = {}
    for name, rect in sorted((frame.regions if frame is not None else {}).items()):
        x, y, w, h = scaler.rect(rect)
        regions[name] = [round(x * fx), round(y * fy), round(w * fx), round(h * fy)]
    return Grab(rgb, size, regions, screen, state, lab)


def answer(shot: Grab) -> dict[str, Any]:
    """The ``screenshot`` op's answer (on the asking thread)."""
    w, h = shot.size
    return {"png_base64": base64.b64encode(png(shot.rgb, w, h)).decode("ascii"), "width": w, "height": h,
            "screen": shot.screen, "state": shot.state, "lab": shot.lab, "regions": shot.regions}


def png(rgb: bytes, width: int, height: int) -> bytes:
    """``rgb`` (rows of ``width`` RGB pixels, top first) as a PNG file (8-bit truecolour)."""
    stride = 3 * width
    if len(rgb) != stride * height:
        raise ValueError(f"{len(rgb)} bytes are not {width}x{height} RGB pixels")
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


@dataclass
class _Request:
    size: tuple[int, int]
    done: threading.Event = field(default_factory=threading.Event)
    shot: Grab | None = None
    error: BaseException | None = None


class FrameGrab:
    """Requests from any thread, served by the drawing thread once a frame."""

    def __init__(self, wait_s: float = FRAME_WAIT_S) -> None:
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._waiting: list[_Request] = []

    def request(self, size: tuple[int, int]) -> dict[str, Any]:
        """The next frame drawn, at ``size``, as the op's answer; CaptureError if none is drawn in time."""
        request = _Request(size)
        with self._lock:
            self._waiting.append(request)
        if not request.done.wait(self.wait_s):
            with self._lock:
                if request in self._waiting:
                    self._waiting.remove(request)
            if not request.done.is_set():
                raise CaptureError(f"the screens drew no frame within {self.wait_s:g} s")
        if request.error is not None:
            raise CaptureError(f"the screen could not be captured: {request.error}")
        assert request.shot is not None
        return answer(request.shot)

    def serve(self, take: Callable[[tuple[int, int]], Grab]) -> None:
        """On the drawing thread, after a frame: ``take(size)`` for every request waiting."""
        with self._lock:
            waiting, self._waiting = self._waiting, []
        for request in waiting:
            try:
                request.shot = take(request.size)
            except Exception as exc:          # an answer for the asker, never the window's end
                request.error = exc
            request.done.set()
