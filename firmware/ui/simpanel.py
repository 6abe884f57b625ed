"""The simulator panel beside the game (``egm run --sim`` with a display).

A developer or a lab engineer at a desk has no note to insert and no door to open: the panel's
buttons are the simulated cabinet's controls, the same ones ``egm simctl`` sends (``note 20``,
``door open main``, ``key audit on``, ``paper out``...). Each goes through the terminal's command
queue (its ``sim`` command, on the terminal's thread) to the device simulators, so the production
drivers see exactly what real hardware would send; the panel never changes the terminal itself.
It shows the simulators' state (doors, keys, paper) read from the simulators, and each answer or
refusal on its message line.

:class:`PanelledApp` puts the panel to the right of an app (the player's screens) in one window:
the app draws on the left part at its own size, the panel on a strip as tall as the app; a click
goes to whichever it lands on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from typing import Any

import pygame

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.layout import Rect, Scaler
from firmware.ui.messages import key, text
from firmware.ui.painter import Frame, Painter
from firmware.ui.view import ButtonView
from firmware.ui.widgets import draw_button
from hal.events import Button, Door, KeySwitch

log = logging.getLogger(__name__)

#: The panel's design canvas (a tall strip beside a 1920 x 1080 screen).
PANEL_W, PANEL_H = 480, 1080

DOOR_LABELS = {Door.MAIN: key("sim.door_main"), Door.CASH_BOX: key("sim.door_cash_box"),
               Door.LOGIC: key("sim.door_logic")}
DECK = ((Button.DEAL, key("sim.deck_deal")), (Button.BET, key("sim.deck_bet")),
        (Button.REPEAT, key("sim.deck_repeat")), (Button.CASH_OUT, key("sim.deck_cash_out")),
        (Button.HELP, key("sim.deck_help")), (Button.SERVICE, key("sim.deck_service")))


class SimPanel:
    """The controls of the simulated devices fitted (``rig``: a :class:`sim_hardware.rig.SimRig`)."""

    def __init__(self, terminal: Any, rig: Any) -> None:
        self.terminal = terminal
        self.rig = rig
        self.message = text("sim.ready")
        self.pending: list[tuple[str, Future]] = []
        self.frame: Frame | None = None
        self.scaler: Scaler | None = None

    def _sim(self, slot: str) -> Any:
        twin = self.rig.twins.get(slot)
        return None if twin is None else twin.simulator

    # --- what it offers ----------------------------------------------------------------------
    def sections(self) -> list[tuple[str, list[ButtonView]]]:
        """(heading, buttons) for each simulated device fitted."""
        status = self.terminal.snapshot or {}
        out: list[tuple[str, list[ButtonView]]] = []
        if self._sim("bill_validator") is not None:
            notes = sorted({c // 100 for c in self.terminal.cfg.money.notes_cents if c % 100 == 0})
            buttons = [self._button(f"sim.note.{n}", text("sim.note", dollars=n), ("note", str(n))) for n in notes]
            ticket = status.get("last_ticket")
            buttons.append(self._button("sim.ticket", text("sim.ticket"), ("ticket", str(ticket)), bool(ticket)))
            buttons.append(self._button("sim.bad_note", text("sim.bad_note"), ("bad-note",)))
            out.append((text("sim.heading_money"), buttons))
        io = self._sim("io_board")
        if io is not None:
            doors = []
            for door, label in DOOR_LABELS.items():
                is_open = bool(io.inputs.get(door))
                doors.append(self._button(f"sim.door.{door.value}",
                                          (text("sim.door_close", door=text(label)) if is_open
                                           else text("sim.door_open", door=text(label))),
                                          ("door", "close" if is_open else "open", door.value), style=is_open))
            audit = bool(io.inputs.get(KeySwitch.AUDIT))
            doors.append(self._button("sim.key.audit", text("sim.key_off") if audit else text("sim.key_on"),
                                      ("key", "audit", "off" if audit else "on"), style=audit))
            jackpot = bool(io.inputs.get(KeySwitch.JACKPOT_RESET))
            doors.append(self._button("sim.key.jackpot_reset",
                                      text("sim.jackpot_off") if jackpot else text("sim.jackpot_on"),
                                      ("key", "jackpot_reset", "off" if jackpot else "on"), style=jackpot))
            out.append((text("sim.heading_cabinet"), doors))
            out.append((text("sim.heading_deck"), [
                self._button(f"sim.button.{b.value}", text(label), ("button", b.value)) for b, label in DECK]))
        printer = self._sim("printer")
        if printer is not None:
            empty = printer.paper == 0
            out.append((text("sim.heading_printer"), [
                self._button("sim.paper", text("sim.paper_load") if empty else text("sim.paper_out"),
                             ("paper", "load" if empty else "out"), style=empty),
                self._button("sim.jam", text("sim.printer_jam"), ("printer", "jam")),
                self._button("sim.clear_jam", text("sim.printer_clear"), ("printer", "clear-jam")),
            ]))
        if self._sim("shoe") is not None:
            out.append((text("sim.heading_shoe"), [
                self._button("sim.misread", text("sim.shoe_misread"), ("shoe", "misread"))]))
        return out

    @staticmethod
    def _button(name: str, label: str, words: Sequence[str], enabled: bool = True,
                style: bool = False) -> ButtonView:
        return ButtonView(name, label, UiAction("sim", tuple(words)), enabled, "deal" if style else "normal")

    # --- a frame -----------------------------------------------------------------------------
    def poll(self) -> None:
        still = []
        for words, future in self.pending:
            if not future.done():
                still.append((words, future))
                continue
            error = future.exception()
            if error is None:
                answer = future.result() or {}
                refused = any(answer.get(k) is False for k in ("inserted", "pressed", "changed"))
                self.message = (text("sim.no_effect", control=words) if refused
                                else text("sim.done", control=words))
            else:
                self.message = text("sim.refused", control=words, reason=str(error).splitlines()[0])
                log.info("simulator %s refused: %s", words, error)
        self.pending = still

    def press(self, action: UiAction) -> None:
        words = list(action.arg)
        self.pending.append((" ".join(words), self.terminal.submit("sim", words=words)))

    def click(self, x: float, y: float) -> None:
        """A click at pixel (x, y) of the panel's surface."""
        if self.frame is None or self.scaler is None:
            return
        action = self.frame.action_at(*self.scaler.to_design(x, y))
        if action is not None and action.name == "sim":
            self.press(action)

    def draw(self, surface: pygame.Surface) -> Frame:
        self.scaler = Scaler(*surface.get_size(), PANEL_W, PANEL_H)
        p = Painter(surface, self.scaler)
        p.fill(theme.PANEL)
        p.region("sim.panel", Rect(0, 0, PANEL_W, PANEL_H))
        p.text(text("sim.title"), Rect(12, 10, PANEL_W - 24, 40), theme.LABEL, theme.ACCENT)
        y = 60
        for heading, buttons in self.sections():
            p.text(heading, Rect(12, y, PANEL_W - 24, 28), theme.MIN_TEXT, theme.TEXT_DIM, align="left")
            y += 32
            for i in range(0, len(buttons), 3):
                line = buttons[i:i + 3]
                for r, button in zip(Rect(12, y, PANEL_W - 24, 62).split_h(*([1] * len(line)), gap=8), line,
                                     strict=True):
                    draw_button(p, r, button, size=theme.MIN_TEXT)
                y += 70
            y += 6
        p.region("sim.message", Rect(12, PANEL_H - 110, PANEL_W - 24, 100))
        p.lines(p.wrap(self.message, PANEL_W - 24, theme.MIN_TEXT)[:4], Rect(12, PANEL_H - 110, PANEL_W - 24, 100),
                theme.MIN_TEXT, theme.TEXT)
        self.frame = p.frame
        return self.frame


class PanelledApp:
    """An app with the simulator panel to its right, in one window (``firmware.ui.window``)."""

    def __init__(self, app: Any, panel: SimPanel) -> None:
        self.app = app
        self.panel = panel
        w, h = app.surface.get_size()
        self.game_size = (w, h)
        self.panel_w = round(h * PANEL_W / PANEL_H)
        self._surface = pygame.Surface((w + self.panel_w, h))
        self.scaler: Any = None

    @property
    def surface(self) -> pygame.Surface:
        return self._surface

    @surface.setter
    def surface(self, surface: pygame.Surface) -> None:
        """The window (or an off-screen surface): the app gets its left part."""
        self._surface = surface
        w, h = self.game_size
        self.app.surface = surface.subsurface((0, 0, w, h))
        self.app.scaler = Scaler(w, h)

    def panel_surface(self) -> pygame.Surface:
        w, h = self.game_size
        return self._surface.subsurface((w, 0, self.panel_w, h))

    def step(self, dt: float = 1 / 30, events: Iterable[pygame.event.Event] = ()) -> Frame:
        w = self.game_size[0]
        mine = []
        for event in events:
            if event.type == pygame.MOUSEBUTTONDOWN and event.pos[0] >= w:
                if event.button == 1:
                    self.panel.click(event.pos[0] - w, event.pos[1])
            elif event.type in (pygame.MOUSEBUTTONUP, pygame.MOUSEMOTION) and event.pos[0] >= w:
                continue
            else:
                mine.append(event)
        self.panel.poll()
        frame = self.app.step(dt, mine)
        self.panel.draw(self.panel_surface())
        return frame
