"""The dealer's screen: the whole table from the dealer's side, on a touch screen.

:class:`DealerConsole` takes a *snapshot provider* (a callable returning the controller's snapshot
dict) and an *actions* object with the controller's operator methods ``open_betting()``,
``close_betting()``, ``deal()`` and ``declare_misdeal(reason)``; it is duck-typed
(:class:`DealerActions`), so the table controller (``firmware.table``, a layer this one never
imports) is wired to it by the command that serves the table, through :func:`run_dealer_screen`.

The screen shows what the live dealer must do next (the snapshot's ``dealer_prompt``) in big
letters, the phase and its clock, the dealer's cards, every seat, the war pool's contest and the
table's messages; under them the four buttons, each enabled only in the phases that allow it
(:data:`ACTION_PHASES`). A touch on an enabled button calls the action; a refusal (an
:class:`~firmware.errors.EgmError` the controller raises) is shown on the screen, never fatal.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import pygame

from firmware.config import Config
from firmware.errors import EgmError
from firmware.ui import input as ui_input
from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.context import GameContext
from firmware.ui.games import game_ui
from firmware.ui.games.base import GameUi
from firmware.ui.layout import Rect, Scaler
from firmware.ui.livetable.draw import draw_dealer, draw_messages, draw_phase, draw_pool, draw_seats
from firmware.ui.livetable.model import LiveTableView, live_table
from firmware.ui.messages import text
from firmware.ui.painter import Frame, Painter
from firmware.ui.screens.base import Screen
from firmware.ui.view import ButtonView
from firmware.ui.widgets import draw_button
from firmware.ui.window import run_window

log = logging.getLogger(__name__)

#: The phases in which each of the dealer's actions is offered (the button is disabled otherwise).
ACTION_PHASES: dict[str, frozenset[str]] = {
    "table_open": frozenset({"closed", "settled", "misdeal"}),
    "table_close": frozenset({"betting"}),
    "table_deal": frozenset({"dealing"}),
    "table_misdeal": frozenset({"dealing", "decisions", "showdown"}),
}


class DealerActions(Protocol):
    """The controller's operator methods the dealer's screen calls."""

    def open_betting(self) -> Any: ...

    def close_betting(self) -> Any: ...

    def deal(self) -> Any: ...

    def declare_misdeal(self, reason: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class DealerView:
    table: LiveTableView
    prompt: str                             #: what the dealer must do next, or that nothing is to do
    waiting: bool                           #: a prompt is waiting for the dealer
    buttons: tuple[ButtonView, ...]
    notice: str = ""                        #: the last refusal of an action


def dealer_buttons(phase: str) -> tuple[ButtonView, ...]:
    def button(action: str, label: str, style: str = "normal") -> ButtonView:
        return ButtonView(f"button.{action}", label, UiAction(action), phase in ACTION_PHASES[action], style)

    return (button("table_open", text("tbl.dealer.open"), "deal"), button("table_close", text("tbl.dealer.close")),
            button("table_deal", text("tbl.dealer.deal"), "deal"),
            button("table_misdeal", text("tbl.dealer.misdeal"), "cashout"))


def dealer_view(snapshot: Mapping[str, Any], gui: GameUi[Any, Any], *, notice: str = "") -> DealerView:
    view = live_table(snapshot, game_name=gui.name, label=gui.area_label, money=gui.ctx.money)
    return DealerView(view, view.prompt or text("tbl.dealer.no_prompt"), bool(view.prompt),
                      dealer_buttons(view.phase_id), notice)


class DealerScreen(Screen):
    name: ClassVar[str] = "dealer"

    TOP_BAR = Rect(0, 0, 1920, 72)
    PROMPT = Rect(24, 82, 1300, 124)
    PHASE = Rect(1344, 82, 552, 124)
    DEALER = Rect(700, 214, 520, 178)
    INFO = Rect(24, 214, 660, 178)
    MESSAGES = Rect(1236, 214, 660, 178)
    SEATS = Rect(24, 398, 1872, 362)
    POOL = Rect(24, 768, 1872, 190)
    BUTTONS = Rect(24, 972, 1872, 96)

    def draw(self, p: Painter, view: DealerView) -> None:
        table = view.table
        p.fill(theme.FELT)
        p.rect(self.TOP_BAR, theme.BAND)
        p.region("title", self.TOP_BAR)
        p.text(text("tbl.dealer.title", table=table.title), Rect(24, 6, 1300, 40), theme.HEADING, theme.TEXT,
               align="left")
        p.text(table.subtitle, Rect(24, 44, 1300, 26), theme.MIN_TEXT, theme.TEXT_DIM, align="left")
        p.text(table.seated, Rect(1336, 16, 560, 40), theme.BODY, theme.TEXT_DIM, align="right")
        with p.shifted(0, p.extra // 2):
            self.draw_table(p, view)
        with p.shifted(0, p.extra):
            p.rect(Rect(0, self.BUTTONS.y - 8, 1920, 1080 - self.BUTTONS.y + 8), theme.BAND)
            for r, button in zip(self.BUTTONS.split_h(*([1] * len(view.buttons)), gap=20), view.buttons, strict=True):
                draw_button(p, r, button, size=theme.HEADING)

    def draw_table(self, p: Painter, view: DealerView) -> None:
        table = view.table
        p.region("prompt", self.PROMPT)
        p.rect(self.PROMPT, theme.PANEL, radius=18)
        p.rect(self.PROMPT, theme.ACCENT if view.waiting else theme.PANEL_LINE, radius=18, width=4)
        label, words = self.PROMPT.inset(20, 8).split_h(2, 13, gap=16)
        p.text(text("tbl.dealer.prompt"), label, theme.HEADING, theme.FELT_LINE, align="left")
        p.text(view.prompt, words, theme.BANNER if view.waiting else theme.TITLE,
               theme.ACCENT if view.waiting else theme.TEXT_DIM, align="left")
        draw_phase(p, self.PHASE, table)
        draw_dealer(p, self.DEALER, table, card_h=110)
        lines = ([view.notice] if view.notice else []) + list(table.messages)
        p.text(text("tbl.dealer.messages"), Rect(self.MESSAGES.x, self.MESSAGES.y, 300, 28), theme.SMALL,
               theme.FELT_LINE, align="left")
        draw_messages(p, Rect(self.MESSAGES.x, self.MESSAGES.y + 30, self.MESSAGES.w, self.MESSAGES.h - 30), lines)
        draw_seats(p, self.SEATS, table.seats, card_h=78)
        if table.pool is not None:
            draw_pool(p, self.POOL, table.pool)


class DealerConsole:
    """The dealer's screen running: one :meth:`step` a frame reads the snapshot, takes the touches
    and draws. ``config``: where the games' options and the money's denomination come from (the
    table's configuration; default: the defaults)."""

    def __init__(self, provider: Callable[[], Mapping[str, Any]], actions: DealerActions, *,
                 size: tuple[int, int] = (1920, 1080), surface: pygame.Surface | None = None,
                 config: Config | None = None) -> None:
        self.provider = provider
        self.actions = actions
        self.surface = surface if surface is not None else pygame.Surface(size)
        self.scaler = Scaler(*self.surface.get_size())
        self.cfg = config if config is not None else Config()
        self.frame: Frame | None = None
        self.notice = ""
        self._guis: dict[str, GameUi[Any, Any]] = {}

    def gui(self, game_id: str) -> GameUi[Any, Any]:
        if game_id not in self._guis:
            self._guis[game_id] = game_ui(GameContext.from_config(self.cfg, game_id))
        return self._guis[game_id]

    def view(self) -> DealerView:
        snapshot = self.provider()
        return dealer_view(snapshot, self.gui(str(snapshot["game"])), notice=self.notice)

    def step(self, dt: float = 1 / 30, events: Iterable[pygame.event.Event] = ()) -> Frame:
        for action in ui_input.actions((), events, self.frame, self.scaler):
            self.dispatch(action)
        self.frame = DealerScreen().render(self.surface, self.view())
        return self.frame

    def touch(self, x: float, y: float) -> None:
        """A touch at screen pixel (x, y) on the last frame drawn."""
        action = ui_input.tap(self.frame, self.scaler, x, y)
        if action is not None:
            self.dispatch(action)

    def dispatch(self, action: UiAction) -> None:
        calls: dict[str, Callable[[], Any]] = {
            "table_open": self.actions.open_betting, "table_close": self.actions.close_betting,
            "table_deal": self.actions.deal,
            "table_misdeal": lambda: self.actions.declare_misdeal(text("tbl.dealer.misdeal_reason")),
        }
        call = calls.get(action.name)
        if call is None:
            return
        try:
            call()
        except EgmError as exc:
            log.info("dealer's %s refused: %s", action.name, exc)
            self.notice = text("message.refused", reason=str(exc))
        else:
            log.info("dealer: %s", action.name)
            self.notice = ""


def run_dealer_screen(provider: Callable[[], Mapping[str, Any]], actions: DealerActions, *, headless: bool,
                      stop: Callable[[], bool], fps: int = 30, size: tuple[int, int] = (1920, 1080),
                      fullscreen: bool = False, config: Config | None = None,
                      on_close: Callable[[], None] | None = None) -> DealerConsole:
    """Run the dealer's screen until ``stop()`` is true (or its window is closed: ``on_close`` is
    called then): in a window, or ``headless`` drawn off screen (no display; the frames still answer
    :meth:`DealerConsole.touch`). Returns the console (its last frame)."""
    console = DealerConsole(provider, actions, size=size, config=config)
    if headless:
        while not stop():
            console.step(1 / fps)
            time.sleep(1 / fps)
        return console
    run_window(console, caption=text("tbl.dealer.caption"), stopping=stop, fps=fps, fullscreen=fullscreen,
               on_close=on_close)
    return console
