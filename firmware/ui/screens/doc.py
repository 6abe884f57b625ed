"""Pay-table and help pages: a title, sections of tables, paragraphs and example cards, paged.

The content is a :class:`~firmware.ui.view.DocView` a game builds from its active configuration and
its PAR sheet (``GameUi.paytable`` / ``GameUi.help``); this screen only lays it out.
"""

from __future__ import annotations

from typing import ClassVar

from firmware.ui import theme
from firmware.ui.cards import card_size, draw_card
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.screens.base import Screen
from firmware.ui.view import DocSection, DocView
from firmware.ui.widgets import draw_button


class DocScreen(Screen):
    name: ClassVar[str] = "doc"

    TITLE = Rect(40, 20, 1840, 60)
    BODY = Rect(60, 100, 1800, 820)
    FOOTER = Rect(60, 936, 1120, 130)
    BUTTONS = Rect(1240, 950, 660, 110)

    def draw(self, p: Painter, view: DocView) -> None:
        p.fill(theme.FELT_DARK)
        p.region("title", self.TITLE)
        p.text(view.title, self.TITLE, theme.TITLE, theme.ACCENT)
        body = Rect(self.BODY.x, self.BODY.y, self.BODY.w, self.BODY.h + p.extra)   # a taller screen: more room
        p.region("body", body)
        sections = view.pages[view.page] if view.pages else ()
        columns = body.split_h(1, 1, gap=60) if len(sections) > 1 else [body]
        halves = _balance(sections, len(columns))
        for column, part in zip(columns, halves, strict=True):
            y = column.y
            for section in part:
                y = self.draw_section(p, Rect(column.x, y, column.w, column.bottom - y), section) + 24
        with p.shifted(0, p.extra):
            self.draw_bottom(p, view)

    def draw_bottom(self, p: Painter, view: DocView) -> None:
        """The footer (how the figures were obtained) and the buttons, at the bottom."""
        p.region("footer", self.FOOTER)
        if view.footer:
            p.lines([view.footer], self.FOOTER, theme.SMALL, theme.TEXT_DIM, gap=4)
        if view.buttons:
            for r, button in zip(self.BUTTONS.split_h(*([1] * len(view.buttons)), gap=12), view.buttons,
                                 strict=True):
                draw_button(p, r, button)

    def draw_section(self, p: Painter, r: Rect, section: DocSection) -> int:
        """One section from the top of ``r``; the design y below it."""
        name = f"section.{len([k for k in p.frame.regions if k.startswith('section.')])}"
        y = r.y
        p.text(section.heading, Rect(r.x, y, r.w, theme.HEADING + 6), theme.HEADING, theme.FELT_LINE, align="left")
        y += theme.HEADING + 14
        for paragraph in section.paragraphs:
            y = p.lines([paragraph], Rect(r.x, y, r.w, r.bottom - y), theme.BODY, theme.TEXT) + 6
        if section.rows:
            widths = _column_weights(p, section.rows)
            for i, row in enumerate(section.rows):
                is_header = section.header and i == 0
                cells = Rect(r.x, y, r.w, theme.BODY + 12).split_h(*widths, gap=12)
                if not is_header and i % 2 == (1 if section.header else 0):
                    p.rect(Rect(r.x - 8, y - 2, r.w + 16, theme.BODY + 14), theme.FELT, radius=6)
                for j, (cell, value) in enumerate(zip(cells, row, strict=False)):
                    p.text(value, cell, theme.BODY, theme.ACCENT if is_header else theme.TEXT,
                           align="left" if j == 0 else "right")
                y += theme.BODY + 16
        for hand in section.cards:
            w, h = card_size(84)
            for i, card in enumerate(hand):
                draw_card(p, Rect(r.x + i * (w + 10), y, w, h), card)
            y += h + 12
        p.region(name, Rect(r.x, r.y, r.w, y - r.y))
        return y


def _column_weights(p: Painter, rows: tuple[tuple[str, ...], ...]) -> list[int]:
    """Columns as wide as their widest text (each at least a sixth of the widest)."""
    n = max(len(row) for row in rows)
    widths = [max((p.text_width(row[j], theme.BODY) for row in rows if j < len(row)), default=0) + 24
              for j in range(n)]
    top = max(widths)
    return [max(round(w), round(top / 6)) for w in widths]


def _balance(sections: tuple[DocSection, ...], columns: int) -> list[tuple[DocSection, ...]]:
    """Sections split into ``columns`` runs of about equal length (in rows and lines)."""
    if columns == 1:
        return [sections]
    weights = [2 + len(s.rows) + 2 * len(s.paragraphs) + 3 * len(s.cards) for s in sections]
    total, acc, cut = sum(weights), 0, len(sections)
    for i, w in enumerate(weights):
        if acc + w / 2 > total / 2:
            cut = i
            break
        acc += w
    cut = max(1, min(cut, len(sections) - 1))
    return [sections[:cut], sections[cut:]]
