"""Input to UI actions: the calibrated touchscreen, the button deck, and mouse and keys (development).

* **Touch** arrives as :class:`hal.events.Touch` in screen pixels, already calibrated by the touch
  driver (``hal.calibration``). A contact going down is a tap: its point is taken back to design
  pixels and hit-tested against the frame on screen (``Frame.action_at``). Moves and lifts do
  nothing (a finger sliding off a button does not press another).
* **The button deck** of the I/O board (:class:`hal.events.ButtonPressed`): DEAL deals, BET steps
  the chip value, REPEAT puts the last wagers back and deals, HELP opens the rules. CASH OUT and
  SERVICE stay with the terminal (its cash-out also retries a ticket after a printer handpay).
* **Mouse and keyboard** (pygame events, development): a left click is a tap; keys as in
  :data:`KEYS`; digits 1-5 pick the chips left to right.

The terminal's thread hands touches and buttons over through :class:`DeviceInbox` (the screens
connect its :meth:`~DeviceInbox.offer` with ``Terminal.connect_screens``); the app's thread takes
them on its next frame.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterable

import pygame

from firmware.ui.actions import UiAction
from firmware.ui.layout import Scaler
from firmware.ui.painter import Frame
from hal.events import Button, ButtonPressed, DeviceEvent, Touch, TouchPhase

#: The button deck: what each button means on the screens (None: the terminal handles it).
BUTTONS: dict[Button, UiAction | None] = {
    Button.DEAL: UiAction("deal"),
    Button.BET: UiAction("next_chip"),
    Button.REPEAT: UiAction("repeat_deal"),
    Button.HELP: UiAction("help"),
    Button.CASH_OUT: None,
    Button.SERVICE: None,
}

#: Development keys.
KEYS: dict[int, UiAction] = {
    pygame.K_d: UiAction("deal"), pygame.K_RETURN: UiAction("deal"),
    pygame.K_r: UiAction("repeat"), pygame.K_c: UiAction("clear"), pygame.K_x: UiAction("cash_out"),
    pygame.K_h: UiAction("help"), pygame.K_p: UiAction("paytable"), pygame.K_g: UiAction("games"),
    pygame.K_ESCAPE: UiAction("back"), pygame.K_SPACE: UiAction("skip"), pygame.K_b: UiAction("next_chip"),
    pygame.K_LEFT: UiAction("page", -1), pygame.K_RIGHT: UiAction("page", 1),
}
CHIP_KEYS = (pygame.K_1, pygame.K_2, pygame.K_3, pygame.K_4, pygame.K_5)


class DeviceInbox:
    """Touches and deck buttons from the terminal's thread to the app's (thread-safe).

    ``buttons()`` says whether the screens take deck buttons now (the service menu does not: they
    stay with the terminal); it is read on the terminal's thread, so it reads a plain flag."""

    def __init__(self, buttons: Callable[[], bool] = lambda: True) -> None:
        self._queue: queue.SimpleQueue[DeviceEvent] = queue.SimpleQueue()
        self._buttons = buttons

    def offer(self, event: DeviceEvent) -> bool:
        """The terminal's input to the screens: keep touches; keep deck buttons the screens handle
        (True: the terminal leaves them alone)."""
        if isinstance(event, ButtonPressed):
            if BUTTONS.get(event.button) is None or not self._buttons():
                return False
            self._queue.put(event)
            return True
        if isinstance(event, Touch):
            self._queue.put(event)
        return False

    def drain(self) -> list[DeviceEvent]:
        out = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out


def tap(frame: Frame | None, scaler: Scaler, x: float, y: float) -> UiAction | None:
    """The action under screen pixel (x, y) in ``frame``."""
    if frame is None:
        return None
    return frame.action_at(*scaler.to_design(x, y))


def from_device(event: DeviceEvent, frame: Frame | None, scaler: Scaler) -> UiAction | None:
    if isinstance(event, ButtonPressed):
        return BUTTONS.get(event.button)
    if isinstance(event, Touch) and event.phase is TouchPhase.DOWN:
        return tap(frame, scaler, event.x, event.y)
    return None


def from_pygame(event: pygame.event.Event, frame: Frame | None, scaler: Scaler,
                chips: tuple[int, ...] = ()) -> UiAction | None:
    if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
        return tap(frame, scaler, *event.pos)
    if event.type == pygame.FINGERDOWN:
        return tap(frame, scaler, event.x * scaler.width, event.y * scaler.height)
    if event.type == pygame.KEYDOWN:
        if event.key in CHIP_KEYS:
            i = CHIP_KEYS.index(event.key)
            return UiAction("chip", chips[i]) if i < len(chips) else None
        return KEYS.get(event.key)
    return None


def actions(device_events: Iterable[DeviceEvent], pygame_events: Iterable[pygame.event.Event],
            frame: Frame | None, scaler: Scaler, chips: tuple[int, ...] = ()) -> list[UiAction]:
    """Every action of this frame's input, devices first (in arrival order)."""
    out = [from_device(e, frame, scaler) for e in device_events]
    out += [from_pygame(e, frame, scaler, chips) for e in pygame_events]
    return [a for a in out if a is not None]
