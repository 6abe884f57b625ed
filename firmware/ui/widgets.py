"""The pieces every screen is made of: buttons, meters, chips, bet areas, hands, banners.

Each ``draw_*`` draws one view-model object into a design rectangle and registers its named region
and, where it can be touched, its hit region with the action it carries.
"""

from __future__ import annotations

import math

from firmware.ui import theme
from firmware.ui.cards import card_size, draw_card, fan
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.view import (
    BetAreaView,
    ButtonView,
    CardView,
    ChipView,
    HandView,
    MeterView,
    ResultView,
)

BUTTON_COLOURS = {"normal": theme.BUTTON, "deal": theme.BUTTON_DEAL, "cashout": theme.BUTTON_CASHOUT,
                  "top": theme.PANEL}


def draw_button(p: Painter, r: Rect, button: ButtonView, *, size: int = theme.LABEL) -> None:
    p.region(button.name, r)
    colour = BUTTON_COLOURS.get(button.style, theme.BUTTON) if button.enabled else theme.DISABLED
    p.rect(r.move(0, 4), theme.SHADE, radius=14)
    p.rect(r, colour, radius=14)
    p.rect(r, theme.PANEL_LINE if button.enabled else theme.PANEL, radius=14, width=2)
    fg = theme.text_on(colour) if button.enabled else theme.TEXT_DIM
    words = p.wrap(button.label, r.w - 16, size)
    if len(words) > 1 and len(words) * (size + 4) <= r.h:
        top = r.y + (r.h - len(words) * (size + 4)) // 2
        for i, part in enumerate(words):
            p.text(part, Rect(r.x + 8, top + i * (size + 4), r.w - 16, size + 4), size, fg)
    else:
        p.text(button.label, r.inset(8), size, fg)
    if button.enabled:
        p.hit(r, button.action, button.name)


def draw_meter(p: Painter, r: Rect, meter: MeterView) -> None:
    p.region(meter.name, r)
    p.rect(r, theme.PANEL, radius=10)
    p.rect(r, theme.PANEL_LINE, radius=10, width=2)
    label, value, detail = r.inset(10, 4).split_v(24, 46, 26)
    p.text(meter.label, label, theme.SMALL, theme.FELT_LINE, align="left")
    p.text(meter.value, value, theme.METER, theme.TEXT, align="left")
    p.text(meter.detail, detail, theme.SMALL, theme.TEXT_DIM, align="left")


def draw_chip(p: Painter, center: tuple[int, int], radius: int, value_label: str, value: int, *,
              selected: bool = False, enabled: bool = True) -> None:
    colour = theme.chip_colour(value) if enabled else theme.DISABLED
    cx, cy = center
    if selected:
        p.circle(center, radius + 8, theme.ACCENT)
    p.circle((cx, cy + 3), radius, theme.SHADE)
    p.circle(center, radius, colour)
    p.circle(center, radius * 0.78, theme.CARD_FACE, width=max(3, radius // 9))
    for i in range(6):                                   # the edge spots of a casino chip
        a = i * math.pi / 3
        p.circle((cx + radius * 0.9 * math.cos(a), cy + radius * 0.9 * math.sin(a)), max(2, radius // 9),
                 theme.CARD_FACE)
    size = max(theme.MIN_TEXT, min(theme.LABEL, round(radius * 0.62)))
    p.text(value_label, Rect(cx - radius + 6, cy - size // 2 - 2, 2 * radius - 12, size + 4), size,
           theme.text_on(colour))


def draw_chip_tray(p: Painter, area: Rect, chips: tuple[ChipView, ...], action_for) -> None:
    p.region("chips", area)
    if not chips:
        return
    radius = min(area.h // 2 - 10, (area.w // len(chips)) // 2 - 6)
    slot = area.w // len(chips)
    for i, chip in enumerate(chips):
        center = (area.x + slot * i + slot // 2, area.y + area.h // 2)
        draw_chip(p, center, radius, chip.label, chip.value, selected=chip.selected, enabled=chip.enabled)
        box = Rect(center[0] - radius, center[1] - radius, 2 * radius, 2 * radius)
        p.region(f"chip.{chip.value}", box)
        if chip.enabled:
            p.hit(box, action_for(chip.value), f"chip.{chip.value}")


def draw_result(p: Painter, r: Rect, result: ResultView) -> None:
    """An outcome tag: its colour, its word and its shape (never the colour alone)."""
    style = theme.OUTCOME_STYLES[result.outcome]
    p.rect(r, style.colour, radius=8)
    fg = theme.text_on(style.colour)
    mark = min(r.h // 2 - 3, 12)
    p.mark(style.mark, (r.x + 6 + mark, r.y + r.h / 2), mark, fg)
    words = f"{result.label} {result.amount}".strip()
    p.text(words, Rect(r.x + 2 * mark + 10, r.y, r.w - 2 * mark - 12, r.h), theme.MIN_TEXT, fg)


def draw_bet_area(p: Painter, r: Rect, area: BetAreaView, action, *, chip_label: str) -> None:
    """A printed wager area on the felt: its name, the chips on it, and its result once known.

    Wide areas put the chip at the right and the result under the name; narrow ones (seven spots)
    put the name on its own line and a small chip and the result under it.
    """
    name = f"spot.{area.seat}.{area.wager}"
    p.region(name, r)
    filled = area.amount > 0
    p.rect(r, theme.FELT_DARK if not filled else (24, 96, 118), radius=14)
    p.rect(r, theme.ACCENT if area.enabled and not area.linked else theme.FELT_LINE, radius=14,
           width=3 if area.enabled else 2)
    wide = r.w >= 180
    if not filled and area.result is None:
        p.text(area.label, r.inset(6), theme.MIN_TEXT, theme.FELT_LINE)
    elif wide:
        radius = min(r.h // 2 - 6, 26)
        p.text(area.label, Rect(r.x + 10, r.y + 4, r.w - 2 * radius - 26, theme.MIN_TEXT + 6), theme.MIN_TEXT,
               theme.FELT_LINE, align="left")
        if filled:
            draw_chip(p, (r.right - radius - 8, r.y + r.h // 2), radius, chip_label, area.amount)
        tag = Rect(r.x + 6, r.bottom - 30, r.w - 2 * radius - 24, 26)
    else:
        radius = max(10, min(16, (r.h - theme.MIN_TEXT - 14) // 2))
        label = area.short or area.label
        p.text(label, Rect(r.x + 6, r.y + 3, r.w - 12, theme.MIN_TEXT + 4), theme.MIN_TEXT, theme.FELT_LINE)
        middle = (r.y + theme.MIN_TEXT + 8 + r.bottom) // 2
        if area.result is not None:                 # the result takes the line (the BET meter has the stake)
            tag = Rect(r.x + 4, middle - 13, r.w - 8, 26)
        else:
            draw_chip(p, (r.x + r.w // 2, middle), radius, chip_label, area.amount)
            tag = r
    if area.result is not None:
        draw_result(p, tag, area.result)
        p.region(name + ".result", tag)
    if area.enabled and action is not None:
        p.hit(r, action, name)


def draw_hand(p: Painter, area: Rect, hand: HandView, *, card_h: int, origin: tuple[int, int],
              label_size: int = theme.BODY) -> None:
    """A hand: its label, its cards (war cards after a gap), its score and status under them.

    ``origin`` is where a dealt card comes from (the shoe): a card still arriving is drawn part way.
    """
    p.region(hand.name, area)
    card_w, _ = card_size(card_h)
    label_h = label_size + 6
    if hand.label:
        p.text(hand.label, Rect(area.x, area.y, area.w, label_h), label_size,
               theme.HIGHLIGHT if hand.highlight else theme.FELT_LINE)
    cards_box = Rect(area.x, area.y + label_h, area.w, card_h)
    total = len(hand.cards) + len(hand.extra)
    if total:
        gap = card_w // 3 if hand.extra else 0
        slots = fan(Rect(cards_box.x, cards_box.y, cards_box.w - gap, card_h), max(total, 2), card_w)
        views: list[tuple[Rect, CardView]] = []
        for i, view in enumerate((*hand.cards, *hand.extra)):
            r = slots[i] if i < len(slots) else slots[-1]
            if i >= len(hand.cards):
                r = r.move(gap, 0)
            views.append((r, view))
        for r, view in views:
            draw_card_view(p, r, view, origin)
    info = Rect(area.x, cards_box.bottom + 4, area.w, theme.BODY + 6)
    line = "  ".join(part for part in (hand.score, hand.status) if part)
    if line:
        p.text(line, info, theme.BODY, theme.HIGHLIGHT if hand.highlight else theme.TEXT)
        p.region(hand.name + ".score", info)


def draw_card_view(p: Painter, r: Rect, view: CardView, origin: tuple[int, int]) -> None:
    """One card of a view at its place ``r`` (part way from ``origin`` while it arrives)."""
    draw_card(p, _arriving(r, view.arriving, origin), view.card, outline=theme.HIGHLIGHT if view.outline else None,
              dim=view.dim)


def _arriving(r: Rect, progress: float, origin: tuple[int, int]) -> Rect:
    if progress >= 1.0:
        return r
    t = max(0.0, progress)
    ease = 1 - (1 - t) ** 3
    ox, oy = origin
    return Rect(round(ox + (r.x - ox) * ease), round(oy + (r.y - oy) * ease), r.w, r.h)


def draw_shoe(p: Painter, r: Rect) -> tuple[int, int]:
    """The dealing shoe (three card backs); where a dealt card comes from."""
    p.region("shoe", r)
    for i in range(3):
        draw_card(p, Rect(r.x + 8 - 4 * i, r.y + 10 + 4 * i, 100, 140), None)
    return (r.x, r.y + 10)


def draw_banner(p: Painter, text: str, r: Rect) -> None:
    p.region("banner", r)
    p.shade(r, theme.SHADE, 160, radius=20)
    p.text(text, r.inset(20, 6), theme.BANNER, theme.ACCENT)


#: The most conditions a lockup notice lists (more are summed up in the last line's place).
OVERLAY_LINES = 6


def draw_overlay(p: Painter, text: str, detail: tuple[str, ...] = ()) -> None:
    """A lockup notice (out of service, handpay) over the whole screen, and under it ``detail``:
    the conditions that hold the cabinet (a door open, a printer out of paper...), one a line."""
    full = p.canvas
    p.shade(full, theme.SHADE, 170)
    lines = list(detail[:OVERLAY_LINES])
    if len(detail) > OVERLAY_LINES:
        lines[-1] = f"+ {len(detail) - OVERLAY_LINES + 1}"
    box = full.centered(1200, 180 + len(lines) * (theme.LABEL + 8) if lines else 260)
    p.region("overlay", box)
    p.rect(box, theme.PANEL, radius=20)
    p.rect(box, theme.ACCENT, radius=20, width=4)
    y = p.lines([text], box.inset(40, 60), theme.TITLE, theme.TEXT, align="center")
    if lines:
        area = Rect(box.x + 40, y + 14, box.w - 80, len(lines) * (theme.LABEL + 8))
        p.region("overlay.detail", area)
        p.lines(lines, area, theme.LABEL, theme.ACCENT, gap=8, align="center")
