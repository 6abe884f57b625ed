"""Drawing in design coordinates, and what a drawn frame offers to touch.

A :class:`Painter` wraps a pygame surface and a :class:`~firmware.ui.layout.Scaler`: screens draw
in design pixels and never see the real size. While it draws, the painter records a
:class:`Frame`: the named regions drawn (``dealer``, ``spot.1.bac``, ``button.deal``...: what the
tests look for), the texts and where they went, and the hit regions, each with the
:class:`~firmware.ui.actions.UiAction` a touch there means. Hit-testing a frame is therefore the
same geometry the player sees, at any screen size.

Text uses only the font that ships with pygame (``freesansbold.ttf``), loaded by path so its size
is its pixel height. Nothing is ever smaller than :data:`~firmware.ui.theme.MIN_TEXT` design pixels
nor :data:`~firmware.ui.theme.MIN_TEXT_PX` pixels of the real screen: a longer text shrinks to that
size and is then shortened with an ellipsis.

A taller canvas (a 16:10, 5:4 or 4:3 screen: :func:`~firmware.ui.layout.canvas_for`) has
:attr:`Painter.extra` design rows more than the 1080 a screen is designed on; a screen moves its
parts down with :meth:`Painter.shifted` (its bottom band by ``extra``, its content by half).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import pygame

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.layout import DESIGN_H, Rect, Scaler
from firmware.ui.theme import Colour

FONT_PATH = os.path.join(os.path.dirname(pygame.__file__), "freesansbold.ttf")
ELLIPSIS = "..."


@functools.cache
def _font(px: int) -> pygame.font.Font:
    if not pygame.font.get_init():
        pygame.font.init()
    return pygame.font.Font(FONT_PATH, px)


@dataclass(frozen=True, slots=True)
class Hit:
    rect: Rect
    action: UiAction
    name: str


@dataclass(frozen=True, slots=True)
class DrawnText:
    text: str
    rect: Rect                   #: where it was drawn (design pixels)
    size: int                    #: its design size after any shrinking
    box: Rect | None = None      #: the box it was given
    px: int = 0                  #: its height in pixels of the real screen (the font's size)


@dataclass
class Frame:
    """What one drawing put on the screen: named regions, texts, and touchable areas."""

    regions: dict[str, Rect] = field(default_factory=dict)
    texts: list[DrawnText] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)

    def action_at(self, x: float, y: float) -> UiAction | None:
        """The action under design point (x, y): the last drawn (topmost) hit region wins."""
        for hit in reversed(self.hits):
            if hit.rect.contains(x, y):
                return hit.action
        return None

    def hit(self, name: str) -> Hit:
        for h in self.hits:
            if h.name == name:
                return h
        raise KeyError(f"no hit region {name!r}; drawn: {', '.join(h.name for h in self.hits)}")

    def texts_in(self, name: str) -> list[str]:
        """The texts drawn inside the named region."""
        area = self.regions[name]
        return [t.text for t in self.texts
                if area.contains(*t.rect.center)]


class Painter:
    """Draws on ``surface`` in design pixels; collects the :class:`Frame`."""

    def __init__(self, surface: pygame.Surface, scaler: Scaler | None = None) -> None:
        self.surface = surface
        self.scaler = scaler if scaler is not None else Scaler(*surface.get_size())
        self.frame = Frame()
        self.origin = (0, 0)            #: added to every design coordinate (:meth:`shifted`)

    @property
    def canvas(self) -> Rect:
        """The whole design canvas (1920 wide; 1080 tall or more)."""
        return self.scaler.canvas

    @property
    def extra(self) -> int:
        """Design rows the canvas has beyond the 1080 the screens are designed on."""
        return max(0, self.scaler.design_h - DESIGN_H)

    @contextlib.contextmanager
    def shifted(self, dx: int, dy: int) -> Iterator[None]:
        """Everything drawn (and every region and hit area) moved by (dx, dy) design pixels."""
        saved = self.origin
        self.origin = (saved[0] + dx, saved[1] + dy)
        try:
            yield
        finally:
            self.origin = saved

    def _r(self, r: Rect) -> Rect:
        return r.move(*self.origin) if self.origin != (0, 0) else r

    def _p(self, x: float, y: float) -> tuple[float, float]:
        return (x + self.origin[0], y + self.origin[1])

    # --- bookkeeping ------------------------------------------------------------------------------
    def region(self, name: str, rect: Rect) -> Rect:
        self.frame.regions[name] = self._r(rect)
        return rect

    def hit(self, rect: Rect, action: UiAction, name: str) -> None:
        self.frame.hits.append(Hit(self._r(rect), action, name))
        self.frame.regions.setdefault(name, self._r(rect))

    # --- shapes -----------------------------------------------------------------------------------
    def fill(self, colour: Colour) -> None:
        self.surface.fill(colour)

    def rect(self, r: Rect, colour: Colour, *, radius: int = 0, width: int = 0) -> None:
        s = self.scaler
        pygame.draw.rect(self.surface, colour, s.rect(self._r(r)), s.length(width) if width else 0,
                         border_radius=s.length(radius) if radius else -1)

    def shade(self, r: Rect, colour: Colour, alpha: int, *, radius: int = 0) -> None:
        """A translucent rectangle (dimming, banners)."""
        x, y, w, h = self.scaler.rect(self._r(r))
        layer = pygame.Surface((w, h), pygame.SRCALPHA)
        pygame.draw.rect(layer, (*colour, alpha), (0, 0, w, h),
                         border_radius=self.scaler.length(radius) if radius else -1)
        self.surface.blit(layer, (x, y))

    def ellipse(self, r: Rect, colour: Colour, *, width: int = 0) -> None:
        pygame.draw.ellipse(self.surface, colour, self.scaler.rect(self._r(r)),
                            self.scaler.length(width) if width else 0)

    def circle(self, center: tuple[float, float], radius: float, colour: Colour, *, width: int = 0) -> None:
        pygame.draw.circle(self.surface, colour, self.scaler.point(*self._p(*center)), self.scaler.length(radius),
                           self.scaler.length(width) if width else 0)

    def line(self, a: tuple[float, float], b: tuple[float, float], colour: Colour, width: int = 2) -> None:
        pygame.draw.line(self.surface, colour, self.scaler.point(*self._p(*a)), self.scaler.point(*self._p(*b)),
                         self.scaler.length(width))

    def polygon(self, points: list[tuple[float, float]], colour: Colour, *, width: int = 0) -> None:
        pygame.draw.polygon(self.surface, colour, [self.scaler.point(*self._p(*p)) for p in points],
                            self.scaler.length(width) if width else 0)

    def mark(self, kind: str, center: tuple[float, float], size: float, colour: Colour) -> None:
        """The shape that goes with an outcome (theme.OUTCOME_STYLES): star, cross, bar or ring."""
        cx, cy = center
        if kind == "star":
            points = []
            for i in range(10):
                radius = size if i % 2 == 0 else size * 0.45
                angle = -math.pi / 2 + i * math.pi / 5
                points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
            self.polygon(points, colour)
        elif kind == "cross":
            w = max(3, round(size / 3))
            self.line((cx - size, cy - size), (cx + size, cy + size), colour, w)
            self.line((cx - size, cy + size), (cx + size, cy - size), colour, w)
        elif kind == "bar":
            self.rect(Rect(round(cx - size), round(cy - size / 3), round(2 * size), max(2, round(size / 1.5))), colour)
        else:
            self.circle(center, size, colour, width=max(2, round(size / 3)))

    # --- text -------------------------------------------------------------------------------------
    def text(self, text: str, r: Rect, size: int, colour: Colour, *, align: str = "center",
             valign: str = "center") -> Rect:
        """``text`` inside ``r``: shrunk (down to MIN_TEXT) and then shortened to fit its width."""
        if size < theme.MIN_TEXT:
            raise ValueError(f"text of {size} px is below the {theme.MIN_TEXT} px minimum")
        if not text:
            return Rect(r.x, r.y, 0, 0)
        s = self.scaler
        scale = s.scale
        chosen, shown = size, text
        r = self._r(r)

        def width_of(t: str, px: int) -> float:
            return _font(pixels(px)).size(t)[0] / scale

        def pixels(px: int) -> int:
            return max(theme.MIN_TEXT_PX, round(px * scale))

        while chosen > theme.MIN_TEXT and width_of(shown, chosen) > r.w:
            chosen = max(theme.MIN_TEXT, chosen - 2)
        keep = len(text)
        while keep > 1 and width_of(shown, chosen) > r.w:
            keep -= 1
            shown = text[:keep].rstrip() + ELLIPSIS
        font = _font(pixels(chosen))
        image = font.render(shown, True, colour)
        w, h = image.get_size()
        box = s.rect(r)
        if align == "left":
            x = box[0]
        elif align == "right":
            x = box[0] + box[2] - w
        else:
            x = box[0] + (box[2] - w) // 2
        if valign == "top":
            y = box[1]
        elif valign == "bottom":
            y = box[1] + box[3] - h
        else:
            y = box[1] + (box[3] - h) // 2
        self.surface.blit(image, (x, y))
        ox, oy = s.offset
        drawn = Rect(round((x - ox) / scale), round((y - oy) / scale), round(w / scale), round(h / scale))
        self.frame.texts.append(DrawnText(shown, drawn, chosen, r, pixels(chosen)))
        return drawn.move(-self.origin[0], -self.origin[1])

    def text_width(self, text: str, size: int) -> float:
        """The width of ``text`` at ``size``, in design pixels."""
        scale = self.scaler.scale
        return _font(max(theme.MIN_TEXT_PX, round(size * scale))).size(text)[0] / scale

    def lines(self, lines: list[str], r: Rect, size: int, colour: Colour, *, gap: int = 6,
              align: str = "left") -> int:
        """Lines one under the other from the top of ``r``, each wrapped to its width; returns the
        design y below the last line."""
        y = r.y
        for line in lines:
            for part in self.wrap(line, r.w, size):
                self.text(part, Rect(r.x, y, r.w, size + 4), size, colour, align=align)
                y += size + gap
        return y

    def wrap(self, text: str, width: int, size: int) -> list[str]:
        words, out, current = text.split(), [], ""
        for word in words:
            trial = f"{current} {word}".strip()
            if current and self.text_width(trial, size) > width:
                out.append(current)
                current = word
            else:
                current = trial
        if current:
            out.append(current)
        return out or [""]
