"""Game selection, when the configuration enables more than one game."""

from __future__ import annotations

from typing import ClassVar

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.screens.base import Screen
from firmware.ui.view import SelectView
from firmware.ui.widgets import draw_button


class SelectScreen(Screen):
    name: ClassVar[str] = "games"

    TITLE = Rect(40, 30, 1840, 80)
    LIST = Rect(260, 140, 1400, 760)
    BUTTONS = Rect(1500, 950, 400, 110)

    def draw(self, p: Painter, view: SelectView) -> None:
        p.fill(theme.FELT_DARK)
        p.region("title", self.TITLE)
        p.text(view.title, self.TITLE, theme.TITLE, theme.ACCENT)
        rows = max(1, len(view.games))
        height = min(150, (self.LIST.h - 20 * (rows - 1)) // rows)
        for i, game in enumerate(view.games):
            r = Rect(self.LIST.x, self.LIST.y + i * (height + 20), self.LIST.w, height)
            name = f"game.{game.game_id}"
            p.rect(r, theme.PANEL, radius=18)
            p.rect(r, theme.ACCENT if game.current else theme.PANEL_LINE, radius=18, width=4 if game.current else 2)
            title, detail = r.inset(30, 12).split_v(3, 2)
            p.text(game.name, title, theme.TITLE, theme.TEXT, align="left")
            p.text(game.detail, detail, theme.BODY, theme.TEXT_DIM, align="left")
            p.hit(r, UiAction("select_game", game.game_id), name)
        with p.shifted(0, p.extra):                       # the buttons at the bottom of any screen
            self.draw_buttons(p, view)

    def draw_buttons(self, p: Painter, view: SelectView) -> None:
        for r, button in zip(self.BUTTONS.split_h(*([1] * len(view.buttons)), gap=12) if view.buttons else [],
                             view.buttons, strict=True):
            draw_button(p, r, button)
