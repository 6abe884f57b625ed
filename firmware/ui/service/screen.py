"""The service screen: draws a :class:`~firmware.ui.service.view.ServiceView` with the core painter.

One screen for every service page: a title bar (the page, who is logged in, the cabinet state,
MENU and LOG OUT), a body laid out as the view says (``grid``, ``keypad``, ``list``, ``columns``,
``split``, ``recall``, ``calibration``), a message line (the API's answers and refusals) and a
bottom band (paging, page buttons). Everything is in design pixels (1920 x 1080) through the core's
:class:`~firmware.ui.painter.Painter`, so 1280 x 720 is the same screen two thirds the size, and
hit regions are the geometry drawn. Buttons are the core's widgets, cards the core's card faces,
outcomes the core's result tags; no text is below :data:`~firmware.ui.theme.MIN_TEXT`.

Long tables are paged here (the screen knows how many rows fit): PREVIOUS / NEXT appear under them.
A row's tone is a colour *and* a shape (ring, cross, bar), never a colour alone.

Named regions (what the tests look for): ``title``, ``subtitle``, ``message``, ``body``,
``table.<name>``, ``row.<...>``, ``panel.<name>``, ``keypad``, ``keypad.entry``, ``round``,
``round.dealer``, ``round.seat.N``, ``round.wager.N.W`` (and ``.result``), ``pager``, and every
button by its name (``menu.meters``, ``role.auditor``, ``key.7``, ``button.enter``...).
"""

from __future__ import annotations

import math
from typing import ClassVar

from firmware.ui import theme
from firmware.ui.cards import card_size, draw_card
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.screens.base import Screen
from firmware.ui.service import view as v
from firmware.ui.service.actions import ServiceAction
from firmware.ui.service.calibration import draw_calibration
from firmware.ui.service.text import msg
from firmware.ui.view import ButtonView
from firmware.ui.widgets import draw_button, draw_result

#: Tone -> (text colour, mark shape or "" for none). Shapes are the outcome marks of the theme.
TONE_STYLE: dict[str, tuple[theme.Colour, str]] = {
    "normal": (theme.TEXT, ""),
    "dim": (theme.TEXT_DIM, ""),
    "heading": (theme.FELT_LINE, ""),
    "good": (theme.HIGHLIGHT, "ring"),
    "alert": ((255, 150, 60), "cross"),
    "warn": (theme.ACCENT, "bar"),
    "selected": (theme.TEXT_DARK, "star"),
}
SERVICE_BG: theme.Colour = (16, 22, 34)
ROW_STRIPE: theme.Colour = (24, 30, 44)


def tone_style(tone: str) -> tuple[theme.Colour, str]:
    return TONE_STYLE.get(tone, TONE_STYLE["normal"])


def _button(r: Rect, b: ButtonView, p: Painter, size: int = theme.LABEL) -> None:
    draw_button(p, r, b, size=size)


def grid(area: Rect, count: int, columns: int, height: int, gap: int) -> list[Rect]:
    """``count`` boxes ``columns`` to a row, ``height`` tall (less if they must fit), from the top."""
    if count <= 0:
        return []
    rows = math.ceil(count / columns)
    height = min(height, (area.h - gap * (rows - 1)) // rows)
    width = (area.w - gap * (columns - 1)) // columns
    return [Rect(area.x + (i % columns) * (width + gap), area.y + (i // columns) * (height + gap), width, height)
            for i in range(count)]


class ServiceScreen(Screen):
    name: ClassVar[str] = "service"

    TOP_BAR = Rect(0, 0, 1920, 100)
    TITLE = Rect(30, 8, 1300, 50)
    SUBTITLE = Rect(30, 62, 1300, 30)
    TOP_BUTTONS = Rect(1440, 16, 460, 70)
    BODY = Rect(30, 116, 1860, 796)
    MESSAGE = Rect(30, 922, 1860, 58)
    BOTTOM = Rect(30, 990, 1860, 80)
    PAGER = Rect(30, 990, 760, 80)
    BAND_BUTTONS = Rect(1100, 990, 790, 80)

    ROW_H = 36
    ROW_TEXT = theme.SMALL
    HEADING_H = 46
    HEADER_H = 34

    def draw(self, p: Painter, view: v.ServiceView) -> None:
        p.fill(SERVICE_BG)
        if view.layout == "calibration":
            assert view.calibration is not None, "a calibration screen has its run's view"
            draw_calibration(p, view.calibration)
            return
        self.draw_top(p, view)
        with p.shifted(0, p.extra // 2):                  # a taller screen: the body in the middle
            pages, band = self.draw_body(p, view)
        with p.shifted(0, p.extra):                       # the bottom band at the bottom of any screen
            if band:
                self.draw_band_buttons(p, view.buttons)
            if pages > 1:
                self.draw_pager(p, view.tables[0].page if view.tables else 0, pages)
            self.draw_message(p, view)

    def draw_body(self, p: Painter, view: v.ServiceView) -> tuple[int, bool]:
        """The body of a layout; its pages, and whether its buttons go in the bottom band."""
        p.region("body", self.BODY)
        pages, band = 1, False
        layout = view.layout
        if layout == "grid":
            self.draw_grid(p, view)
        elif layout == "keypad":
            self.draw_keypad(p, view)
        elif layout == "list":
            pages, band = self.draw_tables(p, view.tables, [self.BODY]), True
        elif layout == "columns":
            pages = self.draw_tables(p, view.tables, self.BODY.split_h(*([1] * max(1, len(view.tables))), gap=40))
            band = True
        elif layout == "split":
            left, right = self.BODY.split_h(3, 2, gap=36)
            if view.tables:
                pages = self.draw_tables(p, view.tables, [left])
            else:
                right = self.BODY
            self.draw_side(p, right, view.panels, view.buttons)
        elif layout == "recall":
            left, right = self.BODY.split_h(9, 16, gap=30)
            pages = self.draw_tables(p, view.tables, [left])
            self.draw_round(p, right, view.round)
        else:
            raise ValueError(f"unknown service layout {layout!r}")
        return pages, band

    # --- chrome -----------------------------------------------------------------------------------
    def draw_top(self, p: Painter, view: v.ServiceView) -> None:
        p.rect(self.TOP_BAR, theme.BAND)
        p.line((0, self.TOP_BAR.bottom), (self.TOP_BAR.right, self.TOP_BAR.bottom), theme.PANEL_LINE, 2)
        p.region("title", self.TITLE)
        p.text(view.title, self.TITLE, theme.TITLE, theme.ACCENT, align="left")
        p.region("subtitle", self.SUBTITLE)
        p.text(view.subtitle, self.SUBTITLE, theme.SMALL, theme.TEXT_DIM, align="left")
        if view.top:
            boxes = self.TOP_BUTTONS.split_h(*([1] * len(view.top)), gap=16)
            for r, b in zip(boxes, view.top, strict=True):
                _button(r, b, p, theme.BODY)

    def draw_message(self, p: Painter, view: v.ServiceView) -> None:
        p.region("message", self.MESSAGE)
        if not view.message:
            return
        colour, mark = tone_style(view.message_tone)
        p.shade(self.MESSAGE, theme.SHADE, 140, radius=12)
        p.rect(self.MESSAGE, colour if view.message_tone != "normal" else theme.PANEL_LINE, radius=12, width=2)
        inner = self.MESSAGE.inset(16, 4)
        if mark:
            p.mark(mark, (inner.x + 14, inner.y + inner.h / 2), 12, colour)
            inner = Rect(inner.x + 40, inner.y, inner.w - 40, inner.h)
        p.text(view.message, inner, theme.BODY, colour if view.message_tone != "normal" else theme.TEXT,
               align="left")

    def draw_band_buttons(self, p: Painter, buttons: tuple[ButtonView, ...]) -> None:
        if not buttons:
            return
        width = min(260 * len(buttons) + 14 * (len(buttons) - 1), self.BAND_BUTTONS.w)
        area = Rect(self.BAND_BUTTONS.right - width, self.BAND_BUTTONS.y, width, self.BAND_BUTTONS.h)
        for r, b in zip(area.split_h(*([1] * len(buttons)), gap=14), buttons, strict=True):
            _button(r, b, p, theme.BODY)

    def draw_pager(self, p: Painter, page: int, pages: int) -> None:
        page = max(0, min(page, pages - 1))
        p.region("pager", self.PAGER)
        prev_r, label_r, next_r = self.PAGER.split_h(3, 3, 3, gap=14)
        _button(prev_r, ButtonView("button.prev", msg("button.prev"), ServiceAction("page", -1), page > 0), p,
                theme.BODY)
        p.text(msg("service.page_of", page=page + 1, pages=pages), label_r, theme.BODY, theme.TEXT)
        _button(next_r, ButtonView("button.next", msg("button.next"), ServiceAction("page", 1), page < pages - 1),
                p, theme.BODY)

    # --- grid and keypad --------------------------------------------------------------------------
    def draw_panels(self, p: Painter, area: Rect, panels: tuple[v.PanelView, ...], *, gap: int = 18) -> int:
        """Panels one under the other from the top of ``area``; the design y below the last."""
        y = area.y
        for panel in panels:
            y = self.draw_panel(p, Rect(area.x, y, area.w, area.bottom - y), panel) + gap
        return y

    def draw_panel(self, p: Painter, area: Rect, panel: v.PanelView) -> int:
        colour, mark = tone_style(panel.tone)
        lines: list[str] = []
        for line in panel.lines:
            lines += p.wrap(line, area.w - 40, theme.BODY)
        line_h = theme.BODY + 8
        height = min(area.h, 24 + theme.LABEL + 12 + len(lines) * line_h + (12 if lines else 0))
        box = Rect(area.x, area.y, area.w, height)
        p.region(panel.name, box)
        p.rect(box, theme.PANEL, radius=14)
        p.rect(box, colour if panel.tone not in ("normal", "dim") else theme.PANEL_LINE, radius=14, width=2)
        head = Rect(box.x + 20, box.y + 12, box.w - 40, theme.LABEL + 8)
        if mark:
            p.mark(mark, (head.x + 12, head.y + head.h / 2), 11, colour)
            head = Rect(head.x + 34, head.y, head.w - 34, head.h)
        p.text(panel.heading, head, theme.LABEL, theme.FELT_LINE if panel.tone == "normal" else colour, align="left")
        y = head.bottom + 8
        for line in lines:
            if y + line_h > box.bottom:
                break
            p.text(line, Rect(box.x + 20, y, box.w - 40, line_h), theme.BODY,
                   theme.TEXT_DIM if panel.tone == "dim" else theme.TEXT, align="left")
            y += line_h
        return box.bottom

    def draw_grid(self, p: Painter, view: v.ServiceView) -> None:
        y = self.draw_panels(p, self.BODY, view.panels)
        area = Rect(self.BODY.x, y + 10, self.BODY.w, self.BODY.bottom - y - 10)
        n = len(view.buttons)
        columns = 4 if n > 6 else (3 if n > 4 else max(1, min(n, 4)))
        if n == 4:
            columns = 2
        boxes = grid(area, n, columns, 150 if columns <= 2 else 130, 24)
        if columns <= 3 and n:
            width = min(area.w, columns * 520 + (columns - 1) * 24)
            inner = Rect(area.x + (area.w - width) // 2, area.y, width, area.h)
            boxes = grid(inner, n, columns, 150, 24)
        for r, b in zip(boxes, view.buttons, strict=True):
            _button(r, b, p, theme.HEADING)

    def draw_keypad(self, p: Painter, view: v.ServiceView) -> None:
        pad: v.KeypadView | None = view.keypad
        if pad is None:
            raise ValueError("a keypad layout needs a keypad")
        left, right = self.BODY.split_h(5, 6, gap=40)
        box = Rect(left.x, left.y + 40, left.w, 360)
        p.region("keypad.panel", box)
        p.rect(box, theme.PANEL, radius=16)
        p.rect(box, theme.PANEL_LINE, radius=16, width=2)
        p.text(pad.title, Rect(box.x + 24, box.y + 20, box.w - 48, 50), theme.TITLE, theme.ACCENT, align="left")
        p.lines([pad.prompt], Rect(box.x + 24, box.y + 84, box.w - 48, 90), theme.BODY, theme.TEXT)
        entry = Rect(box.x + 24, box.y + 200, box.w - 48, 110)
        p.region("keypad.entry", entry)
        p.rect(entry, SERVICE_BG, radius=12)
        p.rect(entry, theme.ACCENT, radius=12, width=3)
        p.text(pad.entry, entry.inset(16, 10), theme.BANNER if len(pad.entry) <= 12 else theme.HEADING,
               theme.TEXT)
        rows = math.ceil(len(pad.keys) / pad.columns)
        key_h = min(118, (right.h - 150 - 16 * rows) // max(1, rows))
        pad_area = Rect(right.x, right.y, right.w, rows * (key_h + 16))
        p.region(pad.name, pad_area)
        for r, b in zip(grid(pad_area, len(pad.keys), pad.columns, key_h, 16), pad.keys, strict=True):
            _button(r, b, p, theme.TITLE if len(b.label) <= 2 else theme.LABEL)
        if view.buttons:
            actions = Rect(right.x, pad_area.bottom + 20, right.w, 120)
            for r, b in zip(actions.split_h(*([1] * len(view.buttons)), gap=16), view.buttons, strict=True):
                _button(r, b, p, theme.HEADING)

    # --- tables -----------------------------------------------------------------------------------
    def capacity(self, area: Rect) -> int:
        return max(1, (area.h - self.HEADING_H - self.HEADER_H - 8) // self.ROW_H)

    def draw_tables(self, p: Painter, tables: tuple[v.TableView, ...], areas: list[Rect]) -> int:
        """Each table in its area; the number of pages the longest one needs."""
        pages = 1
        for table, area in zip(tables, areas, strict=False):
            pages = max(pages, self.draw_table(p, area, table))
        return pages

    def draw_table(self, p: Painter, area: Rect, table: v.TableView) -> int:
        p.region(f"table.{table.name}", area)
        p.text(table.heading, Rect(area.x, area.y, area.w, self.HEADING_H - 6), theme.HEADING, theme.FELT_LINE,
               align="left")
        per_page = self.capacity(area)
        pages = max(1, math.ceil(len(table.rows) / per_page))
        page = max(0, min(table.page, pages - 1))
        aligns = table.aligns or ("l" + "r" * (len(table.columns) - 1))
        mark_w = 30
        header = Rect(area.x + mark_w, area.y + self.HEADING_H, area.w - mark_w - 8, self.HEADER_H)
        cells = header.split_h(*table.weights, gap=14)
        for cell, name, align in zip(cells, table.columns, aligns, strict=False):
            p.text(name, cell, theme.MIN_TEXT, theme.ACCENT, align="left" if align == "l" else "right")
        p.line((area.x, header.bottom + 2), (area.right, header.bottom + 2), theme.PANEL_LINE, 2)
        y = header.bottom + 8
        if not table.rows and table.empty:
            p.text(table.empty, Rect(area.x + mark_w, y, area.w - mark_w, self.ROW_H), theme.BODY, theme.TEXT_DIM,
                   align="left")
        for i, row in enumerate(table.rows[page * per_page:(page + 1) * per_page]):
            index = page * per_page + i
            self.draw_row(p, Rect(area.x, y, area.w, self.ROW_H), row, table, index, aligns, mark_w)
            y += self.ROW_H
        return pages

    def draw_row(self, p: Painter, r: Rect, row: v.RowView, table: v.TableView, index: int, aligns: str,
                 mark_w: int) -> None:
        name = row.name or f"row.{table.name}.{index}"
        p.region(name, r)
        colour, mark = tone_style(row.tone)
        if row.tone == "selected":
            p.rect(r, theme.ACCENT, radius=8)
        elif index % 2:
            p.rect(r, ROW_STRIPE, radius=6)
        if mark:
            p.mark(mark, (r.x + mark_w / 2, r.y + r.h / 2), 9, colour)
        inner = Rect(r.x + mark_w, r.y, r.w - mark_w - 8, r.h)
        for cell, value, align in zip(inner.split_h(*table.weights, gap=14), row.cells, aligns, strict=False):
            p.text(value, cell, self.ROW_TEXT, colour, align="left" if align == "l" else "right")
        if row.action is not None:
            p.hit(r, row.action, name)  # type: ignore[arg-type]

    # --- panels and buttons on the side ---------------------------------------------------------
    def draw_side(self, p: Painter, area: Rect, panels: tuple[v.PanelView, ...],
                  buttons: tuple[ButtonView, ...]) -> None:
        columns = 3 if len(buttons) > 6 else 2
        rows = math.ceil(len(buttons) / columns)
        button_h = 66 if columns == 3 else 76
        buttons_h = rows * button_h + max(0, rows - 1) * 14
        panel_area = Rect(area.x, area.y, area.w, max(120, area.h - buttons_h - 20))
        y = self.draw_panels(p, panel_area, panels)
        top = max(y, area.bottom - buttons_h)
        boxes = grid(Rect(area.x, top, area.w, area.bottom - top), len(buttons), columns, button_h, 14)
        for r, b in zip(boxes, buttons, strict=True):
            _button(r, b, p, theme.BODY)

    # --- a recalled round -----------------------------------------------------------------------
    def draw_round(self, p: Painter, area: Rect, view: v.RoundView | None) -> None:
        p.region("round", area)
        p.rect(area, theme.FELT_DARK, radius=16)
        if view is None:
            p.text(msg("service.recall.choose"), area.inset(30), theme.LABEL, theme.TEXT_DIM)
            return
        inner = area.inset(22, 14)
        p.text(view.title, Rect(inner.x, inner.y, inner.w, theme.HEADING + 8), theme.HEADING, theme.ACCENT,
               align="left")
        y = inner.y + theme.HEADING + 12
        for line in view.lines:
            p.text(line, Rect(inner.x, y, inner.w, theme.SMALL + 6), theme.SMALL, theme.TEXT, align="left")
            y += theme.SMALL + 8
        wager_rows = math.ceil(len(view.wagers) / (2 if len(view.wagers) > 6 else 1))
        wagers_h = 12 + wager_rows * 34 if view.wagers else 0
        hand_rows = len(view.hands) + (1 if view.extra else 0)
        hands_area = Rect(inner.x, y + 6, inner.w, inner.bottom - y - 6 - wagers_h)
        row_h = min(190, hands_area.h // max(1, hand_rows))
        for hand in view.hands:
            self.draw_recall_hand(p, Rect(hands_area.x, y + 6, hands_area.w, row_h - 8), hand)
            y += row_h
        if view.extra:
            self.draw_recall_hand(p, Rect(hands_area.x, y + 6, hands_area.w, row_h - 8),
                                  v.RecallHand("round.community", "", view.extra))
            y += row_h
        if view.wagers:
            columns = 2 if len(view.wagers) > 6 else 1
            top = inner.bottom - wagers_h + 12
            boxes = grid(Rect(inner.x, top, inner.w, wagers_h - 12), len(view.wagers), columns, 30, 4)
            for r, line in zip(boxes, view.wagers, strict=True):
                p.region(line.name, r)
                label, stake, result = r.split_h(5, 3, 4, gap=10)
                p.text(line.label, label, theme.MIN_TEXT, theme.FELT_LINE, align="left")
                p.text(line.stake, stake, theme.MIN_TEXT, theme.TEXT, align="right")
                if line.result is not None:
                    draw_result(p, result, line.result)
                    p.region(line.name + ".result", result)

    def draw_recall_hand(self, p: Painter, r: Rect, hand: v.RecallHand) -> None:
        p.region(hand.name, r)
        label_w = 190
        if hand.label:
            p.text(hand.label, Rect(r.x, r.y, label_w, theme.LABEL + 6), theme.LABEL, theme.FELT_LINE, align="left")
        if hand.info or hand.war_scores:
            p.lines([hand.info, *hand.war_scores], Rect(r.x, r.y + theme.LABEL + 12, label_w, r.h - theme.LABEL - 12), theme.MIN_TEXT,
                    theme.TEXT)
        area = Rect(r.x + label_w + 10, r.y, r.w - label_w - 10, r.h)
        count = sum(len(g.cards) for g in hand.groups)
        if not count:
            return
        label_h = theme.MIN_TEXT + 6 if any(g.label for g in hand.groups) else 0
        card_h = area.h - label_h
        card_w, _ = card_size(card_h)
        gap = 28
        step = card_w + 8
        needed = step * count + gap * (len(hand.groups) - 1)
        if needed > area.w:
            scale = area.w / needed
            card_h = max(40, int(card_h * scale))
            card_w, _ = card_size(card_h)
            step = card_w + 8
        x = area.x
        for group in hand.groups:
            if group.label:
                p.text(group.label, Rect(x, area.y, max(step * len(group.cards), 90), label_h), theme.MIN_TEXT,
                       theme.HIGHLIGHT, align="left")
            for card in group.cards:
                draw_card(p, Rect(x, area.y + label_h, card_w, card_h), card)
                x += step
            x += gap
