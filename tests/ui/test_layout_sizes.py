"""Every screen laid out at every supported size (16:9, 16:10, 5:4, 4:3; layout.SUPPORTED): the
screen is filled edge to edge (no letterbox bands: the top bar at the top, the bottom band at the
bottom), every region inside the screen, no two buttons, meters, chips or bet areas overlapping,
every text at least theme.MIN_TEXT_PX real pixels tall and inside the box it was given (its line
box at most 3 real pixels past it). One frame per screen and size."""

from __future__ import annotations

import itertools
import math
import re

import pytest

from firmware.ui import theme
from firmware.ui.demo import demo_games
from firmware.ui.layout import SUPPORTED, Rect, Scaler
from firmware.ui.render import render

#: Regions that must never overlap one another (touch targets and meters).
SOLID = re.compile(r"^(button\.[a-z_.0-9]+|meter\.(credit|bet|win)|chip\.\d+|spot\.\d+\.[a-z_]+)$")
SHOTS = [(screen, game) for game in demo_games() for screen in ("table", "war")] + \
    [("paytable", "baccarat-war"), ("help", "baccarat-war"), ("games", "baccarat-war"), ("attract", "baccarat-war"),
     ("service", "baccarat-war"), ("recall", "baccarat-war"), ("calibration", "baccarat-war")]
TABLES = ("table", "war")


def overlap(a: Rect, b: Rect) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


def inside(inner: Rect, outer: Rect, slack: int = 1) -> bool:
    return (inner.x >= outer.x - slack and inner.y >= outer.y - slack and inner.right <= outer.right + slack
            and inner.bottom <= outer.bottom + slack)


@pytest.mark.parametrize("size", SUPPORTED, ids=[f"{w}x{h}" for w, h in SUPPORTED])
@pytest.mark.parametrize("screen, game", SHOTS, ids=[f"{s}-{g}" for s, g in SHOTS])
def test_the_screen_lays_out_at_every_size(screen, game, size):
    surface, frame = render(screen, size, game)
    scaler = Scaler(*size)
    if screen in TABLES:
        assert frame.regions["meter.credit"].bottom > scaler.canvas.bottom - 150
    assert_laid_out(surface, frame, size, banded=screen in TABLES)


def assert_laid_out(surface, frame, size, *, banded: bool) -> None:
    """The checks above on one drawn frame (``banded``: a screen with a top bar and a bottom band
    that must reach the screen's edges)."""
    scaler = Scaler(*size)
    canvas = scaler.canvas
    # No letterbox: the design canvas covers the whole screen.
    assert scaler.offset == (0, 0) and scaler.rect(canvas) == (0, 0, *size), (scaler.offset, canvas)
    if banded:                                       # the top bar and the bottom band reach the edges
        w, h = size
        for y in (0, h - 1):
            assert tuple(surface.get_at((w // 2, y)))[:3] == theme.BAND, (y, surface.get_at((w // 2, y)))
    for name, r in frame.regions.items():
        assert inside(r, canvas, 0), (name, r, canvas)
    solid = {name: r for name, r in frame.regions.items() if SOLID.match(name)}
    for (a, ra), (b, rb) in itertools.combinations(sorted(solid.items()), 2):
        assert not overlap(ra, rb), (a, ra, b, rb)
    assert frame.texts
    # A text's line box (the font's ascent and descent, more than its letters) may pass its box by at
    # most 3 pixels of the real screen.
    slack = max(4, math.ceil(3 / scaler.scale))
    for t in frame.texts:
        assert t.px >= theme.MIN_TEXT_PX, (t.text, t.px)
        assert inside(t.rect, canvas, 0), (t.text, t.rect)
        assert t.box is None or t.rect.w <= t.box.w + 1, (t.text, t.rect, t.box)      # never wider than its box
        assert t.box is None or inside(t.rect, t.box, slack), (t.text, t.rect, t.box)
