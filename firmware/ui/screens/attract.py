"""Attract mode: what an idle cabinet shows until someone touches it or puts money in."""

from __future__ import annotations

import math
from typing import ClassVar

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.cards import card_size, draw_card
from firmware.ui.layout import Rect
from firmware.ui.painter import Painter
from firmware.ui.screens.base import Screen
from firmware.ui.view import AttractView


class AttractScreen(Screen):
    name: ClassVar[str] = "attract"

    TITLE = Rect(160, 120, 1600, 130)
    CARDS = Rect(360, 300, 1200, 300)
    LINES = Rect(260, 640, 1400, 160)
    PROMPT = Rect(260, 840, 1400, 90)
    GAMES = Rect(160, 960, 1600, 60)

    def draw(self, p: Painter, view: AttractView) -> None:
        p.fill(theme.ATTRACT)
        p.hit(p.canvas, UiAction("wake"), "wake")
        with p.shifted(0, p.extra // 2):                  # a taller screen: in the middle
            self.draw_show(p, view)

    def draw_show(self, p: Painter, view: AttractView) -> None:
        p.region("title", self.TITLE)
        p.text(view.title, self.TITLE, 110, theme.ACCENT)
        p.region("cards", self.CARDS)
        w, h = card_size(240)
        n = len(view.cards)
        for i, card in enumerate(view.cards):
            x = self.CARDS.x + (self.CARDS.w - n * (w + 30) + 30) // 2 + i * (w + 30)
            bob = round(14 * math.sin(view.t * 2.0 + i * 0.9))
            face_up = (view.t * 0.5 + i * 0.25) % 2 < 1.4
            draw_card(p, Rect(x, self.CARDS.y + 20 + bob, w, h), card if face_up else None)
        p.region("lines", self.LINES)
        p.lines(list(view.lines), self.LINES, theme.HEADING, theme.TEXT, align="center")
        p.region("prompt", self.PROMPT)
        pulse = 0.5 + 0.5 * math.sin(view.t * 3.0)
        colour = tuple(round(a + (b - a) * pulse) for a, b in zip(theme.TEXT, theme.ACCENT, strict=True))
        p.text(view.prompt, self.PROMPT, theme.BANNER - 16, colour)
        p.region("games", self.GAMES)
        p.text("  -  ".join(view.games), self.GAMES, theme.BODY, theme.TEXT_DIM)
