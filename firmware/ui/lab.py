"""Lab mode's panel: a test lab's operator prompt over whatever the player's screens show.

While the terminal's status holds a ``lab`` prompt (``firmware.cabinet.lab``), every frame of the
screens (the player's, the service menu's) gets a service-style panel drawn over it: "LAB TEST -
<id>", the prompt's text, and two large buttons, DONE and COULD NOT DO IT. A touch on a button (the
touchscreen through the terminal, or a click) is taken by the panel before the screen under it sees
the frame's input, and sent to the terminal as ``lab_answer`` (``source="screen"``), through its
command queue like any other request of the screens. A touch elsewhere on the panel does nothing;
a touch outside it goes to the screen under it (a lab step may be a touch on the table).

Once answered (or timed out) the buttons are greyed and the answer is shown, until the prompt is
cleared or replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

import pygame

from firmware.ui import input as ui_input
from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.layout import Rect, Scaler
from firmware.ui.messages import key, text
from firmware.ui.painter import Frame, Painter
from firmware.ui.view import ButtonView
from firmware.ui.widgets import draw_button
from hal.events import DeviceEvent, Touch, TouchPhase

log = logging.getLogger(__name__)

#: The panel's actions: its two buttons, and the panel itself (a touch on it does nothing).
DONE, CANNOT, PANEL = "lab_done", "lab_cannot", "lab_panel"
ANSWER_OF = {DONE: "done", CANNOT: "cannot"}
ANSWERED = {"done": key("lab.answered_done"), "cannot": key("lab.answered_cannot")}
#: The panel's size in design pixels (centred on the canvas).
PANEL_W, PANEL_H = 1500, 660
TEXT_LINES = 8
BUTTON_W, BUTTON_H = 620, 150

Submit = Callable[..., "Future[Any]"]


class LabPanel:
    """The panel of one app; ``submit`` is the terminal's (``Terminal.submit``)."""

    def __init__(self, submit: Submit) -> None:
        self.submit = submit
        self.sent: tuple[str, Future[Any]] | None = None

    # --- input -------------------------------------------------------------------------------------
    def take(self, lab: Mapping[str, Any] | None, device_events: Iterable[DeviceEvent],
             pygame_events: Iterable[pygame.event.Event], frame: Frame | None,
             scaler: Scaler) -> tuple[list[DeviceEvent], list[pygame.event.Event]]:
        """This frame's input less what the panel (drawn in ``frame``) took; a button answers."""
        devices, events = list(device_events), list(pygame_events)
        self._collect()
        if lab is None or frame is None:
            return devices, events
        kept_devices = []
        for event in devices:
            action = None
            if isinstance(event, Touch) and event.phase is TouchPhase.DOWN:
                action = ui_input.tap(frame, scaler, event.x, event.y)
            if action is not None and action.name in (DONE, CANNOT, PANEL):
                self._act(action, lab)
            else:
                kept_devices.append(event)
        kept_events = []
        for pygame_event in events:
            action = None
            if pygame_event.type in (pygame.MOUSEBUTTONDOWN, pygame.FINGERDOWN):
                action = ui_input.from_pygame(pygame_event, frame, scaler)
            if action is not None and action.name in (DONE, CANNOT, PANEL):
                self._act(action, lab)
            else:
                kept_events.append(pygame_event)
        return kept_devices, kept_events

    def _act(self, action: UiAction, lab: Mapping[str, Any]) -> None:
        answer = ANSWER_OF.get(action.name)
        if answer is None or not answerable(lab) or self.sent is not None:
            return
        log.info("lab prompt %s: %s touched on the screen", lab["id"], answer)
        self.sent = (str(lab["id"]), self.submit("lab_answer", id=str(lab["id"]), answer=answer, source="screen"))

    def _collect(self) -> None:
        """The answer sent: a refusal is logged (the panel shows what the terminal holds)."""
        if self.sent is None or not self.sent[1].done():
            return
        error = self.sent[1].exception()
        if error is not None:
            log.warning("lab prompt %s: the screen's answer was refused: %s", self.sent[0], error)
        self.sent = None

    # --- drawing -----------------------------------------------------------------------------------
    def draw(self, surface: pygame.Surface, scaler: Scaler, frame: Frame | None,
             lab: Mapping[str, Any]) -> Frame:
        """The panel over ``surface``; ``frame`` (what is under it) with the panel's regions and hit
        areas added on top (a copy: the screen's own frame is left as it drew it)."""
        p = Painter(surface, scaler)
        if frame is not None:
            p.frame = Frame(dict(frame.regions), list(frame.texts), list(frame.hits))
        draw_lab_panel(p, lab)
        return p.frame


def answerable(lab: Mapping[str, Any]) -> bool:
    return lab.get("answer") is None and not lab.get("timed_out")


def draw_lab_panel(p: Painter, lab: Mapping[str, Any]) -> None:
    canvas = p.canvas
    p.shade(canvas, theme.SHADE, 120)
    box = canvas.centered(PANEL_W, PANEL_H)
    p.hit(box, UiAction(PANEL), "lab")
    p.rect(box.move(0, 6), theme.SHADE, radius=24)
    p.rect(box, theme.PANEL, radius=24)
    p.rect(box, theme.ACCENT, radius=24, width=6)
    inner = box.inset(50, 36)
    title = Rect(inner.x, inner.y, inner.w, theme.TITLE + 10)
    p.region("lab.title", title)
    p.text(text("lab.title", id=str(lab["id"])), title, theme.TITLE, theme.ACCENT)
    body = Rect(inner.x, title.bottom + 24, inner.w, TEXT_LINES * (theme.LABEL + 8))
    p.region("lab.text", body)
    lines = p.wrap(str(lab.get("text", "")), body.w, theme.LABEL)
    if len(lines) > TEXT_LINES:
        lines = [*lines[:TEXT_LINES - 1], " ".join(lines[TEXT_LINES - 1:])]   # the last line shortened
    p.lines(lines, body, theme.LABEL, theme.TEXT, gap=8, align="center")
    status = Rect(inner.x, body.bottom + 8, inner.w, theme.HEADING + 8)
    p.region("lab.answer", status)
    answer = lab.get("answer")
    if answer in ANSWERED:
        p.text(text(ANSWERED[answer]), status, theme.HEADING, theme.HIGHLIGHT)
    elif lab.get("timed_out"):
        p.text(text("lab.timed_out"), status, theme.HEADING, theme.HIGHLIGHT)
    elif lab.get("time_left_s") is not None:
        p.text(text("lab.time_left", seconds=f"{float(lab['time_left_s']):.0f}"), status, theme.BODY,
               theme.TEXT_DIM)
    else:
        p.text(text("lab.waiting"), status, theme.BODY, theme.TEXT_DIM)
    enabled = answerable(lab)
    row = Rect(inner.x, inner.bottom - BUTTON_H, inner.w, BUTTON_H)
    gap = inner.w - 2 * BUTTON_W
    done = Rect(row.x + gap // 3, row.y, BUTTON_W, BUTTON_H)
    cannot = Rect(row.x + inner.w - gap // 3 - BUTTON_W, row.y, BUTTON_W, BUTTON_H)
    draw_button(p, done, ButtonView("lab.done", text("lab.done"), UiAction(DONE), enabled, "deal"),
                size=theme.BANNER // 2)
    draw_button(p, cannot, ButtonView("lab.cannot", text("lab.cannot"), UiAction(CANNOT), enabled, "normal"),
                size=theme.BANNER // 2)
