"""Card faces drawn from shapes: no image files, no font glyphs for the suits.

The bundled font has no suit symbols, so suits are polygons and circles; ranks are text (their
labels come from the message catalogue). A card is drawn into any rectangle, so one function serves
the table, the recall screen and the pay tables. Suits differ by shape, not only by colour.
"""

from __future__ import annotations

import math

from firmware.cards.card import Card, parse_card
from firmware.ui import theme
from firmware.ui.layout import Rect
from firmware.ui.messages import text
from firmware.ui.painter import Painter
from firmware.ui.theme import Colour

#: Card width / height of a standard poker card.
ASPECT = 0.714


def card_size(height: int) -> tuple[int, int]:
    return (round(height * ASPECT), height)


def rank_label(card: Card) -> str:
    """``A``, ``10``, ``K``... (the catalogue's ``card.ranks``, 2 to ace)."""
    return text("card.ranks").split(",")[card.rank - 2].strip()


def suit_colour(suit: int) -> Colour:
    return theme.SUIT_RED if suit in (1, 2) else theme.SUIT_BLACK


def draw_suit(p: Painter, suit: int, center: tuple[float, float], size: float, colour: Colour) -> None:
    """Suit ``suit`` (0 spades, 1 hearts, 2 diamonds, 3 clubs) about ``size`` design px tall."""
    cx, cy = center
    r = size / 2
    if suit == 2:                                             # diamond
        p.polygon([(cx, cy - r), (cx + r * 0.72, cy), (cx, cy + r), (cx - r * 0.72, cy)], colour)
    elif suit == 1:                                           # heart: two lobes and a point
        lobe = r * 0.52
        p.circle((cx - lobe * 0.95, cy - r * 0.35), lobe, colour)
        p.circle((cx + lobe * 0.95, cy - r * 0.35), lobe, colour)
        p.polygon([(cx - r * 0.98, cy - r * 0.2), (cx + r * 0.98, cy - r * 0.2), (cx, cy + r)], colour)
    elif suit == 0:                                           # spade: an upturned heart and a stem
        lobe = r * 0.48
        p.circle((cx - lobe * 0.95, cy + r * 0.15), lobe, colour)
        p.circle((cx + lobe * 0.95, cy + r * 0.15), lobe, colour)
        p.polygon([(cx - r * 0.93, cy + r * 0.05), (cx + r * 0.93, cy + r * 0.05), (cx, cy - r)], colour)
        p.polygon([(cx, cy + r * 0.2), (cx + r * 0.35, cy + r), (cx - r * 0.35, cy + r)], colour)
    else:                                                     # club: three leaves and a stem
        leaf = r * 0.36
        p.circle((cx, cy - r * 0.45), leaf, colour)
        p.circle((cx - r * 0.42, cy + r * 0.12), leaf, colour)
        p.circle((cx + r * 0.42, cy + r * 0.12), leaf, colour)
        p.circle((cx, cy), leaf * 0.6, colour)
        p.polygon([(cx, cy), (cx + r * 0.3, cy + r), (cx - r * 0.3, cy + r)], colour)


def draw_back(p: Painter, r: Rect) -> None:
    radius = max(4, r.w // 10)
    p.rect(r, theme.CARD_FACE, radius=radius)
    inner = r.inset(max(3, r.w // 14))
    p.rect(inner, theme.CARD_BACK, radius=max(3, radius - 2))
    step = max(8, inner.w // 5)
    for i in range(-inner.h // step, inner.w // step + 1):
        x0 = inner.x + i * step
        segment = _clip((x0, inner.y), (x0 + inner.h, inner.bottom), inner)
        if segment is not None:
            p.line(segment[0], segment[1], theme.CARD_BACK_LINE, 1)
    p.rect(r, theme.CARD_EDGE, radius=radius, width=2)


def _clip(a: tuple[float, float], b: tuple[float, float],
          r: Rect) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The part of the 45-degree segment a-b inside ``r`` (None if none of it is)."""
    (x0, y0), (x1, y1) = a, b
    if x0 < r.x:
        y0 += r.x - x0
        x0 = r.x
    if x1 > r.right:
        y1 -= x1 - r.right
        x1 = r.right
    if x0 >= r.right or y1 <= y0:
        return None
    return (x0, y0), (x1, y1)


def draw_card(p: Painter, r: Rect, card: str | Card | None, *, outline: Colour | None = None,
              dim: bool = False) -> None:
    """A card face (``card`` in notation, ``Qs``) or its back (``None``) filling ``r``."""
    if card is None:
        draw_back(p, r)
    else:
        c = card if isinstance(card, Card) else parse_card(card)
        radius = max(4, r.w // 10)
        p.rect(r, theme.CARD_FACE, radius=radius)
        p.rect(r, theme.CARD_EDGE, radius=radius, width=2)
        colour = suit_colour(c.suit)
        label = rank_label(c)
        size = max(theme.MIN_TEXT, round(r.h * 0.24))
        corner = Rect(r.x + max(3, r.w // 16), r.y + max(2, r.h // 30), r.w // 2, size + 2)
        p.text(label, corner, size, colour, align="left")
        pip = max(8.0, r.h * 0.12)
        draw_suit(p, c.suit, (corner.x + pip * 0.55, corner.bottom + pip * 0.55), pip, colour)
        draw_suit(p, c.suit, (r.x + r.w * 0.58, r.y + r.h * 0.64), r.h * 0.42, colour)
    if dim:
        p.shade(r, theme.SHADE, 120, radius=max(4, r.w // 10))
    if outline is not None:
        grow = max(3, r.w // 16)
        p.rect(Rect(r.x - grow, r.y - grow, r.w + 2 * grow, r.h + 2 * grow), outline,
               radius=max(6, r.w // 8), width=max(3, grow))


def fan(area: Rect, count: int, card_w: int, *, max_step: float | None = None) -> list[Rect]:
    """Where ``count`` cards ``card_w`` wide go in ``area``, left to right, overlapping if they
    must (the step between them at most ``max_step``, by default a card and a gap)."""
    if count <= 0:
        return []
    step = max_step if max_step is not None else card_w * 1.08
    if count > 1:
        step = min(step, (area.w - card_w) / (count - 1))
    total = card_w + step * (count - 1)
    x0 = area.x + (area.w - total) / 2
    return [Rect(math.floor(x0 + i * step), area.y, card_w, area.h) for i in range(count)]
