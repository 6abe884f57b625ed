"""What a station's table view and the dealer's screen both draw: the seats 1-7 around the table,
the dealer's hand, the phase and its clock, the war pool's panel and the table's messages.

Each ``draw_*`` takes a view model of :mod:`.model` or :mod:`.pool` and a design rectangle, and
names its regions (``seat.3``, ``seat.3.result``, ``dealer``, ``pool``, ``pool.tier.1``, ``phase``)
for the tests and the screenshots.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware.ui import theme
from firmware.ui.layout import Rect
from firmware.ui.livetable.model import LiveTableView, SeatView
from firmware.ui.livetable.pool import PoolView, TierView
from firmware.ui.messages import text
from firmware.ui.painter import Painter
from firmware.ui.widgets import draw_hand, draw_result

#: The own seat's panel: filled lighter and framed in the accent colour, thicker than the others.
OWN_FILL = (24, 96, 118)
OWN_FRAME = 6
#: How much lower the middle seat sits than the end ones (the table's curve).
ARC = 44
ROW = 28
#: Lines a seat's bets take (five wagers with their names fit in three).
BET_LINES = 3


def draw_seat(p: Painter, r: Rect, seat: SeatView, *, card_h: int) -> None:
    """One seat: its number (YOU on the station's own), its station, its bets, its cards and the
    hand's label, its result once settled."""
    name = f"seat.{seat.seat}"
    p.region(name, r)
    p.rect(r, OWN_FILL if seat.own else theme.FELT_DARK, radius=16)
    p.rect(r, theme.ACCENT if seat.own else theme.FELT_LINE, radius=16, width=OWN_FRAME if seat.own else 2)
    inner = r.inset(12, 10)
    head = Rect(inner.x, inner.y, inner.w, 32)
    p.text(seat.label, Rect(head.x, head.y, head.w - 70, head.h), theme.LABEL,
           theme.ACCENT if seat.own else theme.FELT_LINE, align="left")
    if seat.own:
        tag = Rect(head.right - 66, head.y + 2, 66, 28)
        p.region(name + ".you", tag)
        p.rect(tag, theme.ACCENT, radius=8)
        p.text(text("tbl.you"), tag.inset(4, 2), theme.MIN_TEXT, theme.TEXT_DARK)
    line = Rect(inner.x, head.bottom + 2, inner.w, 24)
    p.text(seat.station, line, theme.SMALL, theme.TEXT if seat.taken else theme.TEXT_DIM, align="left")
    bets = Rect(inner.x, line.bottom + 4, inner.w, BET_LINES * (theme.MIN_TEXT + 4))
    p.region(name + ".bets", bets)
    for i, part in enumerate(p.wrap("   ".join(seat.bets), bets.w, theme.MIN_TEXT)[:BET_LINES]):
        p.text(part, Rect(bets.x, bets.y + i * (theme.MIN_TEXT + 4), bets.w, theme.MIN_TEXT + 4), theme.MIN_TEXT,
               theme.TEXT if seat.taken else theme.TEXT_DIM, align="left")
    hand = Rect(inner.x, bets.bottom + 2, inner.w, card_h + 2 * theme.BODY + 16)
    draw_hand(p, hand, seat.hand, card_h=card_h, origin=(r.x, r.y), label_size=theme.MIN_TEXT)
    foot = Rect(inner.x, r.bottom - 40, inner.w, 30)
    if seat.result is not None:
        p.region(name + ".result", foot)
        draw_result(p, foot, seat.result)
    elif seat.status:
        p.region(name + ".status", foot)
        p.rect(foot, theme.PANEL, radius=8)
        p.text(seat.status, foot.inset(6, 2), theme.MIN_TEXT, theme.ACCENT)
    if seat.taken and not seat.online:
        p.shade(r, theme.SHADE, 110, radius=16)


def seat_rects(area: Rect, count: int) -> list[Rect]:
    """Seats 1..count left to right along the table's curve (the middle one lowest)."""
    gap = 14
    w = (area.w - gap * (count - 1)) // count
    h = area.h - ARC
    mid = (count - 1) / 2
    out = []
    for i in range(count):
        dip = 1 - ((i - mid) / mid) ** 2 if mid else 1
        out.append(Rect(area.x + i * (w + gap), area.y + round(ARC * dip), w, h))
    return out


def draw_seats(p: Painter, area: Rect, seats: Sequence[SeatView], *, card_h: int) -> None:
    p.region("seats", area)
    for r, seat in zip(seat_rects(area, len(seats)), seats, strict=True):
        draw_seat(p, r, seat, card_h=card_h)


def draw_dealer(p: Painter, r: Rect, view: LiveTableView, *, card_h: int) -> None:
    p.rect(r, theme.FELT_DARK, radius=18)
    draw_hand(p, r.inset(12, 6), view.dealer, card_h=card_h, origin=(r.right, r.y))


def draw_phase(p: Painter, r: Rect, view: LiveTableView) -> None:
    """The phase in big letters and its clock (the betting window's time left)."""
    p.region("phase", r)
    p.rect(r, theme.PANEL, radius=16)
    p.rect(r, theme.ACCENT if view.phase_id == "betting" else theme.PANEL_LINE, radius=16, width=3)
    top, bottom = r.inset(16, 10).split_v(1, 1, gap=4)
    p.text(view.phase, top, theme.TITLE, theme.ACCENT if view.phase_id == "betting" else theme.TEXT)
    if view.clock:
        p.region("clock", bottom)
        p.text(view.clock, bottom, theme.HEADING, theme.TEXT)


def _rows(tiers: Sequence[TierView], fit: int) -> list[TierView]:
    """The tiers that fit, best score first: tied and contesting tiers before single hands."""
    if len(tiers) <= fit:
        return list(tiers)
    keep = sorted(range(len(tiers)), key=lambda i: (not (tiers[i].tied or tiers[i].contests), i))[:fit]
    return [tiers[i] for i in sorted(keep)]


def draw_pool(p: Painter, r: Rect, pool: PoolView) -> None:
    """The war pool: the pot and its outcome, the tiers of tied hands, and the contest step by step."""
    p.region("pool", r)
    p.rect(r, theme.POT, radius=16)
    p.rect(r, theme.FELT_LINE, radius=16, width=2)
    inner = r.inset(16, 8)
    head = Rect(inner.x, inner.y, inner.w, 34)
    p.text(pool.title, Rect(head.x, head.y, 200, head.h), theme.LABEL, theme.FELT_LINE, align="left")
    summary = Rect(head.x + 210, head.y, head.w - 210, head.h)
    p.region("pool.summary", summary)
    p.text("   ".join(pool.summary), summary, theme.BODY, theme.ACCENT, align="left")
    body = Rect(inner.x, head.bottom + 6, inner.w, inner.bottom - head.bottom - 6)
    if not pool.tiers:
        return
    left, right = body.split_h(12, 8, gap=24)
    fit = max(1, left.h // ROW)
    for i, tier in enumerate(_rows(pool.tiers, fit)):
        row = Rect(left.x, left.y + i * ROW, left.w, ROW - 2)
        p.region(f"pool.tier.{i + 1}", row)
        colour = theme.HIGHLIGHT if tier.contests else theme.TEXT_DIM
        if tier.contests:
            p.rect(row, theme.FELT_DARK, radius=6)
        score, hands, tied, note = row.split_h(4, 12, 3, 5, gap=8)
        p.text(tier.score, score, theme.MIN_TEXT, colour, align="left")
        p.text(tier.hands, hands, theme.MIN_TEXT, colour, align="left")
        p.text(text("tbl.pool.tied") if tier.tied else text("tbl.pool.single"), tied, theme.MIN_TEXT, colour)
        p.text(tier.note, note, theme.MIN_TEXT, colour, align="right")
    if pool.columns:
        _draw_steps(p, right, pool)


def _draw_steps(p: Painter, r: Rect, pool: PoolView) -> None:
    p.region("pool.contest", r)
    label_w = 90
    cols = Rect(r.x + label_w, r.y, r.w - label_w, ROW).split_h(*([1] * len(pool.columns)), gap=6)
    for i, (col, name) in enumerate(zip(cols, pool.columns, strict=True)):
        won = pool.winner_column == i
        if won:
            p.rect(Rect(col.x, r.y, col.w, r.h), theme.FELT_DARK, radius=6)
        p.text(name, col, theme.MIN_TEXT, theme.ACCENT if won else theme.FELT_LINE)
    for j, step in enumerate(pool.steps):
        y = r.y + (j + 1) * ROW
        if y + ROW > r.bottom:
            break
        p.text(step.label, Rect(r.x, y, label_w, ROW), theme.MIN_TEXT, theme.TEXT_DIM, align="left")
        for col, cell in zip(cols, step.cells, strict=True):
            box = Rect(col.x, y, col.w, ROW - 2)
            words = f"{cell.score} {text('tbl.pool.hand_out')}" if cell.out else cell.score
            p.text(words, box, theme.MIN_TEXT, theme.ACCENT if cell.winner else
                   theme.TEXT_DIM if cell.out else theme.TEXT)


def draw_messages(p: Painter, r: Rect, lines: Sequence[str], *, size: int = theme.BODY) -> None:
    p.region("messages", r)
    if lines:
        p.shade(r, theme.SHADE, 110, radius=12)
        p.lines(list(lines), r.inset(14, 6), size, theme.TEXT, gap=4)
