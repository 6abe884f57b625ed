"""The table of the hand-setting games (Split 21 Stud, Double Super 9): its view model, the dice and
the positions they decide, and the screen.

The felt: the dice box at the top left (the dice as the round rolled them, what they decide, and
the eight positions with the first hand's position marked), the dealer's two hands at the top, a
box of reminders at the top right, and per spot the two hands its cards are set into (each card a
touch target while the player sets them), the spot's result line and its wager areas. The felt
draws what the view says; what it says comes from ``firmware.ui.games.setting``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.cards import card_size, draw_card, fan
from firmware.ui.layout import Rect, row
from firmware.ui.painter import Painter
from firmware.ui.playback import Beat
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import BetAreaView, CardView, ChromeView, ResultView
from firmware.ui.widgets import draw_bet_area, draw_result

#: Beat lengths, seconds.
SHOW_S = 1.2
RESULT_S = 1.4


# --- what a beat shows -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SetReveal:
    """What the table shows from one beat of a completed round on."""

    dealer: bool = False                                    #: the dealer's hands are face up
    results: frozenset[tuple[int, str]] = frozenset()      #: (seat, wager) settled on screen
    settled: bool = False


def beat(kind: str, reveal: SetReveal, caption: str, duration: float = SHOW_S) -> Beat:
    return Beat(kind, duration, reveal, caption)


# --- the view model --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DiceView:
    label: str                          #: DIE / DICE
    faces: tuple[int, ...]              #: () before the round: the note says when they are rolled
    sides: int                          #: 6: pips; otherwise the number on a polygon
    note: str                           #: what the dice decide, in words
    positions: tuple[PositionMark, ...] = ()


@dataclass(frozen=True, slots=True)
class PositionMark:
    """One of the eight positions around the table."""

    position: int
    label: str                          #: "1".."8", or the dealer's mark
    state: str                          #: "" (nobody), "player", "dealer"
    first: bool = False                 #: the position that receives the first card


@dataclass(frozen=True, slots=True)
class SetHandView:
    """One of the two hands a spot's (or the dealer's) cards are set into."""

    name: str                           #: region: spot.1.hand.high, dealer.hand.front
    label: str                          #: HIGH / LOW / FRONT / BACK
    cards: tuple[CardView, ...] = ()
    actions: tuple[UiAction | None, ...] = ()   #: per card: a touch moves it to the other hand
    score: str = ""
    result: ResultView | None = None
    #: per touchable card: its region, by its position in the dealt order (spot.1.card.2)
    touch_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SetSeatView:
    seat: int
    label: str                          #: SPOT 1
    hands: tuple[SetHandView, ...]      #: () while nothing is dealt
    hidden: int = 0                     #: face-down cards (dealt, not yet shown)
    summary: str = ""                   #: e.g. the five cards' poker hand
    note: str = ""                      #: while setting: how to, or why a setting was refused
    areas: tuple[BetAreaView, ...] = ()
    highlight: bool = False             #: this spot is being set now


@dataclass(frozen=True, slots=True)
class SetFeltView:
    dealer: SetSeatView
    dice: DiceView | None
    seats: tuple[SetSeatView, ...]
    reminders: tuple[str, ...] = ()     #: the rules a player sets by (top right)
    reminder_title: str = ""


# --- drawing -----------------------------------------------------------------------------------------
PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.25, 0.25), (0.75, 0.75)),
    3: ((0.25, 0.25), (0.5, 0.5), (0.75, 0.75)),
    4: ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)),
    5: ((0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)),
    6: ((0.25, 0.22), (0.75, 0.22), (0.25, 0.5), (0.75, 0.5), (0.25, 0.78), (0.75, 0.78)),
}


def draw_die(p: Painter, r: Rect, face: int, sides: int) -> None:
    """A six-sided die with its pips, or any other die as a polygon with its number."""
    if sides == 6 and face in PIPS:
        p.rect(r.move(0, 4), theme.SHADE, radius=r.w // 6)
        p.rect(r, theme.CARD_FACE, radius=r.w // 6)
        p.rect(r, theme.CARD_EDGE, radius=r.w // 6, width=2)
        for fx, fy in PIPS[face]:
            p.circle((r.x + fx * r.w, r.y + fy * r.h), max(4, r.w // 11), theme.SHADE)
        return
    cx, cy = r.x + r.w / 2, r.y + r.h / 2
    corners = [(cx + r.w / 2 * math.cos(math.pi / 8 + k * math.pi / 4),
                cy + r.h / 2 * math.sin(math.pi / 8 + k * math.pi / 4)) for k in range(8)]
    p.polygon(corners, theme.CARD_FACE)
    p.polygon(corners, theme.CARD_EDGE, width=2)
    p.text(str(face), r.inset(r.w // 5), theme.HEADING, theme.SHADE)


def draw_hand_box(p: Painter, r: Rect, hand: SetHandView, card_h: int, *, touchable: bool,
                  compact: bool = False) -> None:
    """A hand's box: its name (and result tag) on top, its cards, its score under them (smaller
    type when ``compact``: many spots at the table)."""
    p.region(hand.name, r)
    p.rect(r, theme.FELT_DARK, radius=16)
    p.rect(r, theme.ACCENT if touchable else theme.FELT_LINE, radius=16, width=3 if touchable else 2)
    label_size, score_size = (theme.BODY, theme.MIN_TEXT) if compact else (theme.LABEL, theme.BODY)
    head = Rect(r.x + 10, r.y + 3, r.w - 20, label_size + 4)
    if hand.result is not None:
        name_box, tag = head.split_h(2, 3, gap=8)
        p.text(hand.label, name_box, label_size, theme.FELT_LINE, align="left")
        draw_result(p, tag.inset(0, 1), hand.result)
        p.region(hand.name + ".result", tag)
    else:
        p.text(hand.label, head, label_size, theme.FELT_LINE, align="left")
    card_w, _ = card_size(card_h)
    cards = Rect(r.x + 10, head.bottom + 4, r.w - 20, card_h)
    slots = fan(cards, max(1, len(hand.cards)), card_w)
    for i, (slot, card) in enumerate(zip(slots, hand.cards, strict=False)):
        draw_card(p, slot, card.card, outline=theme.HIGHLIGHT if card.outline else None, dim=card.dim)
        action = hand.actions[i] if i < len(hand.actions) else None
        if action is not None:
            name = hand.touch_names[i]
            p.region(name, slot)
            p.hit(slot, action, name)
    if hand.score:
        score = Rect(r.x + 8, cards.bottom + 2, r.w - 16, score_size + 6)
        p.region(hand.name + ".score", score)
        p.text(hand.score, score, score_size, theme.TEXT)


class SetTableScreen(TableScreen):
    """The hand-setting table (one layout for both games; the cards per hand differ)."""

    DICE = Rect(24, 84, 430, 300)
    DEALER = Rect(474, 84, 972, 300)
    REMINDERS = Rect(1466, 84, 430, 300)
    SEATS = Rect(24, 396, 1872, 478)
    #: The most cards one hand can hold (its box is made wide enough for them).
    HAND_CARDS = 3
    #: A spot narrower than this puts its hands one above the other.
    COMPACT_BELOW = 560

    def draw_felt(self, p: Painter, felt: SetFeltView, chrome: ChromeView) -> None:
        if felt.dice is not None:
            self.draw_dice(p, self.DICE, felt.dice)
        self.draw_dealer(p, self.DEALER, felt.dealer)
        if felt.reminders:
            self.draw_reminders(p, self.REMINDERS, felt.reminder_title, felt.reminders)
        boxes = row(self.SEATS, max(1, len(felt.seats)), 1320, 16)
        for box, seat in zip(boxes, felt.seats, strict=False):
            self.draw_seat(p, box, seat)

    # --- the dice and the positions ------------------------------------------------------------
    def draw_dice(self, p: Painter, r: Rect, dice: DiceView) -> None:
        p.region("dice", r)
        p.rect(r, theme.FELT_DARK, radius=18)
        p.rect(r, theme.FELT_LINE, radius=18, width=2)
        p.text(dice.label, Rect(r.x + 12, r.y + 6, r.w - 24, theme.LABEL + 4), theme.LABEL, theme.FELT_LINE,
               align="left")
        size = 76
        if dice.faces:
            faces = row(Rect(r.x + 12, r.y + 44, r.w - 24, size), len(dice.faces), size, 18)
            for box, face in zip(faces, dice.faces, strict=True):
                draw_die(p, box, face, dice.sides)
        note = Rect(r.x + 12, r.y + (126 if dice.faces else 56), r.w - 24, 3 * (theme.MIN_TEXT + 4))
        p.region("dice.note", note)
        p.lines(p.wrap(dice.note, note.w, theme.MIN_TEXT)[:3], note, theme.MIN_TEXT, theme.TEXT, gap=4, align="left")
        if dice.positions:
            self.draw_positions(p, Rect(r.x + 12, r.y + 206, r.w - 24, 88), dice.positions)

    def draw_positions(self, p: Painter, r: Rect, marks: tuple[PositionMark, ...]) -> None:
        """The eight positions clockwise; the first to be dealt to has an arrow and a ring."""
        p.region("dice.positions", r)
        step = r.w / len(marks)
        radius = min(22, int(step / 2) - 3)
        for i, mark in enumerate(marks):
            cx, cy = r.x + step * (i + 0.5), r.y + r.h - radius - 6
            name = f"dice.position.{mark.position}"
            p.region(name, Rect(round(cx - radius), round(cy - radius), 2 * radius, 2 * radius))
            fill = {"player": theme.BUTTON, "dealer": theme.POT}.get(mark.state, theme.FELT)
            p.circle((cx, cy), radius, fill)
            p.circle((cx, cy), radius, theme.ACCENT if mark.first else theme.FELT_LINE, width=4 if mark.first else 2)
            p.text(mark.label, Rect(round(cx - radius), round(cy - 11), 2 * radius, 22), theme.MIN_TEXT,
                   theme.TEXT if mark.state else theme.TEXT_DIM)
            if mark.first:                                   # an arrow down to it: not the colour alone
                top = cy - radius - 8
                p.polygon([(cx - 12, top - 18), (cx + 12, top - 18), (cx, top)], theme.ACCENT)

    def draw_reminders(self, p: Painter, r: Rect, title: str, lines: tuple[str, ...]) -> None:
        p.region("reminders", r)
        p.rect(r, theme.FELT_DARK, radius=18)
        p.rect(r, theme.FELT_LINE, radius=18, width=2)
        p.text(title, Rect(r.x + 12, r.y + 6, r.w - 24, theme.LABEL + 4), theme.LABEL, theme.FELT_LINE, align="left")
        y = r.y + 44
        for line in lines:
            wrapped = p.wrap(line, r.w - 28, theme.MIN_TEXT)
            height = len(wrapped) * (theme.MIN_TEXT + 4)
            if y + height > r.bottom - 6:
                break
            p.lines(wrapped, Rect(r.x + 14, y, r.w - 28, height), theme.MIN_TEXT, theme.TEXT, gap=4, align="left")
            y += height + 8

    # --- the dealer and the spots --------------------------------------------------------------
    def draw_dealer(self, p: Painter, r: Rect, dealer: SetSeatView) -> None:
        p.region("dealer", r)
        head = Rect(r.x, r.y, r.w, theme.LABEL + 8)
        p.text(dealer.label, head, theme.LABEL, theme.FELT_LINE)
        body = Rect(r.x, head.bottom + 2, r.w, r.h - head.h - 2 - (theme.BODY + 10))
        self.draw_hands(p, body, dealer, card_h=150)
        if dealer.summary:
            line = Rect(r.x, r.bottom - theme.BODY - 8, r.w, theme.BODY + 8)
            p.region("dealer.summary", line)
            p.text(dealer.summary, line, theme.BODY, theme.TEXT)

    def draw_hands(self, p: Painter, r: Rect, who: SetSeatView, *, card_h: int, vertical: bool = False) -> None:
        """The two hands side by side, or one above the other (or the face-down cards, or two
        empty boxes)."""
        card_w, _ = card_size(card_h)
        if who.hidden and not who.hands:
            slots = fan(Rect(r.x, r.y + (r.h - card_h) // 2, r.w, card_h), who.hidden, card_w)
            for slot in slots:
                draw_card(p, slot, None)
            return
        hands = who.hands
        if not hands:
            return
        if vertical:
            boxes = r.split_v(*([1] * len(hands)), gap=10)
        else:
            width = min((r.w - 16 * (len(hands) - 1)) // len(hands), self.HAND_CARDS * round(card_w * 1.08) + 28)
            boxes = row(r, len(hands), width, 24)
        for box, hand in zip(boxes, hands, strict=True):
            draw_hand_box(p, box, hand, card_h, touchable=any(a is not None for a in hand.actions), compact=vertical)

    def draw_seat(self, p: Painter, r: Rect, seat: SetSeatView) -> None:
        """A spot: its two hands side by side, or (a narrow spot, many at the table) one above the
        other with its wager areas two to a row."""
        p.region(f"spot.{seat.seat}", r)
        p.rect(r, theme.FELT_DARK, radius=22)
        p.rect(r, theme.HIGHLIGHT if seat.highlight else theme.FELT_LINE, radius=22, width=3 if seat.highlight else 2)
        compact = r.w < self.COMPACT_BELOW
        head = Rect(r.x + 16, r.y + 6, r.w - 32, theme.LABEL + 6)
        label, summary = head.split_h(1, 3, gap=10) if not compact else (head, None)
        p.text(seat.label, label, theme.LABEL, theme.HIGHLIGHT if seat.highlight else theme.FELT_LINE, align="left")
        if seat.summary and summary is not None:
            p.region(f"spot.{seat.seat}.summary", summary)
            p.text(seat.summary, summary, theme.BODY, theme.TEXT, align="right")
        columns = 2 if compact and len(seat.areas) > 2 else max(1, len(seat.areas))
        lines = -(-len(seat.areas) // columns) if seat.areas else 0
        line_h = 92 if lines <= 1 else 56
        areas_h = lines * line_h + (lines - 1) * 8
        note_h = theme.BODY + 10
        hands = Rect(r.x + 12, head.bottom + 4, r.w - 24, r.h - head.h - areas_h - note_h - 30)
        if compact:
            card_h = (hands.h - 10) // 2 - (theme.BODY + 7) - (theme.MIN_TEXT + 8) - 6
            card_h = min(card_h, int((hands.w - 24) / (self.HAND_CARDS * 1.08) / 0.714))
            self.draw_hands(p, hands, seat, card_h=card_h, vertical=True)
        else:
            card_h = min(170, hands.h - (theme.LABEL + 10) - (theme.BODY + 16) - 10)
            fits = (hands.w - 24) // 2 - 28
            if self.HAND_CARDS * card_size(card_h)[0] * 1.08 > fits:
                card_h = max(60, int(fits / (self.HAND_CARDS * 1.08) / 0.714))
            self.draw_hands(p, hands, seat, card_h=card_h)
        note = Rect(r.x + 16, hands.bottom + 4, r.w - 32, note_h)
        p.region(f"spot.{seat.seat}.note", note)
        line = seat.note or (seat.summary if compact else "")
        if line:
            p.shade(note, theme.SHADE, 90, radius=10)
            p.text(line, note.inset(8, 2), theme.BODY if not compact else theme.MIN_TEXT, theme.TEXT)
        if not seat.areas:
            return
        top = r.bottom - areas_h - 10
        for i in range(lines):
            chunk = seat.areas[i * columns:(i + 1) * columns]
            band = Rect(r.x + 12, top + i * (line_h + 8), r.w - 24, line_h)
            width = min(300, (band.w - 12 * (columns - 1)) // columns)
            for box, area in zip(row(band, len(chunk), width, 12), chunk, strict=True):
                action = UiAction("bet", (area.seat, area.wager)) if area.enabled and not area.linked else None
                draw_bet_area(p, box, area, action, chip_label=f"{area.amount:,}" if area.amount else "")
