"""Design coordinates: every screen is laid out on a canvas 1920 design pixels wide and scaled.

:class:`Rect` is a rectangle in design pixels (ints). The canvas takes the screen's shape
(:func:`canvas_for`): 1920 x 1080 for 16:9, 1920 x 1200 for 16:10, 1920 x 1440 for 4:3, 1920 x
1536 for 5:4, so those screens are filled edge to edge (no bars); the screens anchor their top
bar to the top, their bottom band to the bottom and give the room between to their content (the
design of each screen is its 1080 rows; :attr:`Painter.extra` is what a taller canvas adds). A
screen wider than 16:9 keeps 1920 x 1080 and gets bars at the sides. :class:`Scaler` maps design
pixels to the real surface with one uniform scale, and a touch or a click back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

DESIGN_W = 1920
DESIGN_H = 1080
#: The screen sizes a cabinet may have (``--size`` is checked against them).
MIN_SIZE = (320, 180)
MAX_SIZE = (7680, 4320)
#: The sizes the layouts are tested at: 16:9, 16:10 (two), 5:4, 4:3 (two).
SUPPORTED = ((1920, 1080), (1280, 720), (1920, 1200), (1280, 800), (1280, 1024), (1024, 768), (800, 600))


class SizeError(ValueError):
    """A screen size the layouts cannot draw on."""


def parse_size(value: str) -> tuple[int, int]:
    """``"1280x720"`` -> ``(1280, 720)``; :class:`SizeError` for anything else or out of range."""
    m = re.fullmatch(r"\s*(\d{1,5})\s*[xX]\s*(\d{1,5})\s*", value or "")
    if not m:
        raise SizeError(f"a size is WIDTHxHEIGHT in pixels, e.g. 1920x1080, not {value!r}")
    return check_size(int(m.group(1)), int(m.group(2)))


def check_size(width: int, height: int) -> tuple[int, int]:
    (lo_w, lo_h), (hi_w, hi_h) = MIN_SIZE, MAX_SIZE
    if not (lo_w <= width <= hi_w and lo_h <= height <= hi_h):
        raise SizeError(f"a screen of {width}x{height} pixels cannot be drawn: sizes from "
                        f"{lo_w}x{lo_h} to {hi_w}x{hi_h}")
    ratio = width / height
    if not 1.0 <= ratio <= 2.4:
        raise SizeError(f"a screen of {width}x{height} pixels is too narrow or too wide "
                        "(width/height from 1.0 to 2.4)")
    return width, height


def canvas_for(width: int, height: int) -> tuple[int, int]:
    """The design canvas of a ``width`` x ``height`` screen: 1920 wide and as tall as the screen's
    shape makes it (never less than 1080: a wider screen keeps 1080 and gets side bars)."""
    return DESIGN_W, max(DESIGN_H, round(DESIGN_W * height / width))


@dataclass(frozen=True, slots=True)
class Rect:
    """A rectangle in design pixels."""

    x: int
    y: int
    w: int
    h: int

    @property
    def right(self) -> int:
        return self.x + self.w

    @property
    def bottom(self) -> int:
        return self.y + self.h

    @property
    def center(self) -> tuple[int, int]:
        return (self.x + self.w // 2, self.y + self.h // 2)

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x < self.right and self.y <= y < self.bottom

    def inset(self, dx: int, dy: int | None = None) -> Rect:
        dy = dx if dy is None else dy
        return Rect(self.x + dx, self.y + dy, max(0, self.w - 2 * dx), max(0, self.h - 2 * dy))

    def move(self, dx: int, dy: int) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.w, self.h)

    def split_h(self, *weights: int, gap: int = 0) -> list[Rect]:
        """Side by side, widths in proportion to ``weights``, ``gap`` apart."""
        return [Rect(x, self.y, w, self.h) for x, w in _split(self.x, self.w, weights, gap)]

    def split_v(self, *weights: int, gap: int = 0) -> list[Rect]:
        """One above the other, heights in proportion to ``weights``, ``gap`` apart."""
        return [Rect(self.x, y, self.w, h) for y, h in _split(self.y, self.h, weights, gap)]

    def top(self, h: int) -> Rect:
        return Rect(self.x, self.y, self.w, min(h, self.h))

    def centered(self, w: int, h: int) -> Rect:
        cx, cy = self.center
        return Rect(cx - w // 2, cy - h // 2, w, h)

    def __iter__(self) -> Iterator[int]:
        yield from (self.x, self.y, self.w, self.h)


def _split(start: int, length: int, weights: tuple[int, ...], gap: int) -> list[tuple[int, int]]:
    if not weights:
        return []
    free = length - gap * (len(weights) - 1)
    total = sum(weights)
    out, pos, used = [], start, 0
    for i, weight in enumerate(weights):
        size = free - used if i == len(weights) - 1 else free * weight // total
        out.append((pos, size))
        pos += size + gap
        used += size
    return out


def row(area: Rect, count: int, width: int, gap: int) -> list[Rect]:
    """``count`` boxes ``width`` wide, ``gap`` apart, centred in ``area`` (narrower if they must)."""
    if count <= 0:
        return []
    width = min(width, (area.w - gap * (count - 1)) // count)
    total = count * width + gap * (count - 1)
    x0 = area.x + (area.w - total) // 2
    return [Rect(x0 + i * (width + gap), area.y, width, area.h) for i in range(count)]


@dataclass(frozen=True, slots=True)
class Scaler:
    """Design pixels -> the pixels of a ``width`` x ``height`` surface, and back. The design canvas
    is the screens' (:func:`canvas_for` the surface: ``design_h`` 0); a side panel (the
    simulator's) gives its own tall one."""

    width: int
    height: int
    design_w: int = DESIGN_W
    design_h: int = 0

    def __post_init__(self) -> None:
        if self.design_h == 0:
            check_size(self.width, self.height)
            object.__setattr__(self, "design_h", canvas_for(self.width, self.height)[1])
        elif self.width < 1 or self.height < 1:
            raise SizeError(f"a panel of {self.width}x{self.height} pixels cannot be drawn")

    @property
    def canvas(self) -> Rect:
        """The whole design canvas."""
        return Rect(0, 0, self.design_w, self.design_h)

    @property
    def scale(self) -> float:
        return min(self.width / self.design_w, self.height / self.design_h)

    @property
    def offset(self) -> tuple[int, int]:
        s = self.scale
        return (round((self.width - self.design_w * s) / 2), round((self.height - self.design_h * s) / 2))

    def length(self, n: float) -> int:
        return max(1, round(n * self.scale)) if n > 0 else 0

    def point(self, x: float, y: float) -> tuple[int, int]:
        ox, oy = self.offset
        return (ox + round(x * self.scale), oy + round(y * self.scale))

    def rect(self, r: Rect) -> tuple[int, int, int, int]:
        x0, y0 = self.point(r.x, r.y)
        x1, y1 = self.point(r.right, r.bottom)
        return (x0, y0, max(1, x1 - x0), max(1, y1 - y0))

    def to_design(self, x: float, y: float) -> tuple[float, float]:
        """A screen pixel (a touch, a click) in design pixels."""
        ox, oy = self.offset
        return ((x - ox) / self.scale, (y - oy) / self.scale)
