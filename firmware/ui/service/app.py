"""The service screens on a running terminal, on their own: :class:`ServiceApp`.

The same frame as the player screens' app (``firmware.ui.app.UiApp``): the terminal's step (when
driven: tests and a single-threaded development loop), the answers that arrived, this frame's
touches (which the terminal hands over, ``Terminal.connect_screens``) and pygame events, then the
drawing, which returns the :class:`~firmware.ui.painter.Frame`. Touches are hit-tested against the frame on
screen, or go raw to the calibration while it runs.

On the cabinet the player app (``firmware.ui.app.UiApp``) hosts the same
:class:`~firmware.ui.service.menu.ServiceMenu` while the cabinet is in SERVICE (the audit key
turned); this app is the service menu alone, whatever the cabinet's state (tests, a bench).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pygame

from firmware.ui.input import DeviceInbox
from firmware.ui.layout import Scaler
from firmware.ui.money import Money
from firmware.ui.painter import Frame
from firmware.ui.service.calibration import install_calibration
from firmware.ui.service.link import TerminalLink
from firmware.ui.service.menu import ServiceMenu
from firmware.ui.service.text import msg
from firmware.ui.window import run_window

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal


class ServiceApp:
    def __init__(self, terminal: Terminal, *, size: tuple[int, int] = (1920, 1080),
                 surface: pygame.Surface | None = None, drive_terminal: bool = True) -> None:
        self.terminal = terminal
        self.surface = surface if surface is not None else pygame.Surface(size)
        self.scaler = Scaler(*self.surface.get_size())
        self.inbox = DeviceInbox(buttons=lambda: False)      # touches only: buttons stay with the terminal
        terminal.connect_screens(self.inbox.offer)
        install_calibration(terminal)
        cfg = terminal.cfg.terminal
        self.menu = ServiceMenu(TerminalLink(terminal), money=Money(cfg.denomination, cfg.currency),
                                size=self.surface.get_size())
        self.drive = drive_terminal
        self.frame: Frame | None = None

    def step(self, dt: float = 1 / 30, events: Iterable[pygame.event.Event] = ()) -> Frame:
        """One frame; the frame drawn."""
        if self.drive:
            self.terminal.step(0)
        self.frame = self.menu.step(self.inbox.drain(), events, self.scaler, self.surface)
        return self.frame

    def run(self, *, fps: int = 30, fullscreen: bool = False) -> None:
        """Open a window and run until the terminal stops or the window is closed."""
        run_window(self, caption=msg("service.title"), stopping=lambda: self.terminal.stopping, fps=fps,
                   fullscreen=fullscreen)
