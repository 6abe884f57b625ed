"""The screen contract, and the table every game's screen is built on.

A :class:`Screen` draws one view model (``firmware.ui.view``) with a :class:`~firmware.ui.painter.Painter`
and returns the :class:`~firmware.ui.painter.Frame`: its named regions and its touchable areas.
Screens hold no state and no text of their own; the same view drawn twice gives the same pixels.

:class:`TableScreen` draws what every game's table shares (the title bar, the meters, the chip
tray, cash out, clear / repeat / deal, the message line, banners, a lockup overlay and the "touch
to skip" area while a round is shown) and leaves the felt to the game's subclass
(:meth:`TableScreen.draw_felt`). A new game's table is a subclass with one method.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import pygame

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.layout import Rect
from firmware.ui.painter import Frame, Painter
from firmware.ui.view import ChromeView, TableView
from firmware.ui.widgets import draw_banner, draw_button, draw_chip_tray, draw_meter, draw_overlay


class Screen(ABC):
    """Draws a view model; :meth:`render` gives the frame (regions and hit areas)."""

    name: ClassVar[str]

    @abstractmethod
    def draw(self, p: Painter, view: Any) -> None:
        """Draw ``view`` (design coordinates: 1920 x 1080, and ``p.extra`` rows more on a taller
        screen, which the screen shares out with :meth:`Painter.shifted`)."""

    def render(self, surface: pygame.Surface, view: Any) -> Frame:
        p = Painter(surface)
        self.draw(p, view)
        return p.frame


class TableScreen(Screen):
    """A game's table: the shared chrome around the game's felt."""

    name: ClassVar[str] = "table"

    # The chrome's layout (design pixels); a subclass may move things.
    TOP_BAR = Rect(0, 0, 1920, 72)
    TITLE = Rect(24, 6, 900, 40)
    SUBTITLE = Rect(24, 44, 900, 26)
    TOP_BUTTONS = Rect(1300, 10, 600, 54)
    FELT = Rect(0, 72, 1920, 856)
    MESSAGE = Rect(260, 880, 1400, 44)
    BAND = Rect(0, 930, 1920, 150)
    CASH_OUT = Rect(20, 946, 190, 118)
    METERS = (Rect(226, 946, 340, 118), Rect(578, 946, 220, 118), Rect(810, 946, 220, 118))
    CHIPS = Rect(1040, 946, 410, 118)
    BUTTONS = Rect(1462, 950, 440, 110)
    BANNER = Rect(360, 440, 1200, 120)

    def draw(self, p: Painter, view: TableView) -> None:
        chrome = view.chrome
        p.fill(theme.FELT)
        if chrome.skippable:                              # under everything else: a touch anywhere
            p.hit(p.canvas, UiAction("skip"), "skip")
        with p.shifted(0, p.extra // 2):                  # a taller screen: the felt in the middle
            self.draw_felt(p, view.felt, chrome)
        self.draw_chrome(p, chrome)
        if chrome.banner:
            with p.shifted(0, p.extra // 2):
                draw_banner(p, chrome.banner, self.BANNER)
        if chrome.overlay:
            p.frame.hits.clear()                          # a lockup: nothing on the table answers
            draw_overlay(p, chrome.overlay, chrome.overlay_detail)

    @abstractmethod
    def draw_felt(self, p: Painter, felt: Any, chrome: ChromeView) -> None:
        """The game's table between the title bar and the message line (``FELT``)."""

    def draw_chrome(self, p: Painter, chrome: ChromeView) -> None:
        p.rect(self.TOP_BAR, theme.BAND)
        p.region("title", self.TITLE)
        p.text(chrome.title, self.TITLE, theme.HEADING, theme.TEXT, align="left")
        p.text(chrome.subtitle, self.SUBTITLE, theme.MIN_TEXT, theme.TEXT_DIM, align="left")
        if chrome.top:
            for r, button in zip(self.TOP_BUTTONS.split_h(*([1] * len(chrome.top)), gap=12), chrome.top,
                                 strict=True):
                draw_button(p, r, button, size=theme.BODY)
        with p.shifted(0, p.extra):                       # the band at the bottom of any screen
            self.draw_band(p, chrome)

    def draw_band(self, p: Painter, chrome: ChromeView) -> None:
        """The message line and the bottom band: cash out, the meters, the chips, the buttons."""
        p.region("message", self.MESSAGE)
        if chrome.message:
            p.shade(self.MESSAGE, theme.SHADE, 110, radius=12)
            p.text(chrome.message, self.MESSAGE.inset(12, 2), theme.LABEL, theme.TEXT)
        p.rect(self.BAND, theme.BAND)
        draw_button(p, self.CASH_OUT, chrome.cash_out)
        for r, meter in zip(self.METERS, chrome.meters, strict=False):
            draw_meter(p, r, meter)
        draw_chip_tray(p, self.CHIPS, chrome.chips, lambda value: UiAction("chip", value))
        if chrome.buttons:
            weights = [3 if b.style == "deal" else 2 for b in chrome.buttons]
            for r, button in zip(self.BUTTONS.split_h(*weights, gap=10), chrome.buttons, strict=True):
                draw_button(p, r, button)
