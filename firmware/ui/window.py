"""The window: one pygame loop for every app (the player's screens, the service menu alone).

An app has a ``surface`` and a ``scaler`` and a ``step(dt, events) -> Frame``; :func:`run_window`
opens the display at the surface's size, steps the app once a frame with the frame's events, and
shows what it drew, until ``stopping()`` says so or the window is closed (``on_close`` is then
called: the terminal is asked to stop). Drawing goes back off screen afterwards (a restart, tests).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pygame

from firmware.ui.layout import Scaler


def run_window(app: Any, *, caption: str, stopping: Callable[[], bool], fps: int = 30, fullscreen: bool = False,
               on_close: Callable[[], None] | None = None, until: Callable[[], bool] | None = None) -> None:
    pygame.display.init()
    pygame.font.init()
    offscreen = app.surface
    window = pygame.display.set_mode(offscreen.get_size(), pygame.FULLSCREEN if fullscreen else 0)
    pygame.display.set_caption(caption)
    app.surface = window
    app.scaler = Scaler(*window.get_size())
    clock = pygame.time.Clock()
    try:
        while not stopping():
            dt = clock.tick(fps) / 1000
            events = pygame.event.get()
            if any(e.type == pygame.QUIT for e in events):
                if on_close is not None:
                    on_close()
                break
            app.step(dt, events)
            pygame.display.flip()
            if until is not None and until():
                break
    finally:
        pygame.display.quit()
        app.surface = offscreen
        app.scaler = Scaler(*offscreen.get_size())
