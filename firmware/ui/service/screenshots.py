"""Headless renders of the service screens for ``egm screenshot service|recall|calibration``.

:func:`render` has the shape of the core's ``firmware.ui.render.render``: the screen's name, the
size, the game (unused: the service screens show every game), and it returns the surface and the
:class:`~firmware.ui.painter.Frame` drawn (named regions, hit areas). The state is a demonstration
(``firmware.ui.service.demo``) drawn by the same builders and screen as the cabinet's.
"""

from __future__ import annotations

import pygame

from firmware.errors import EgmError
from firmware.ui.layout import check_size
from firmware.ui.painter import Frame
from firmware.ui.service.builders import build
from firmware.ui.service.demo import demo_state
from firmware.ui.service.screen import ServiceScreen

#: The contract's screens (CONTRACTS.md) this package draws.
SCREENS = ("service", "recall", "calibration")
#: Further service pages that can be rendered by name (documentation, tests).
EXTRA = ("login", "meters")


def render(screen: str, size: tuple[int, int] = (1920, 1080), game: str = "baccarat-war", *,
           page: int = 0) -> tuple[pygame.Surface, Frame]:
    """Draw the service screen ``screen`` at ``size`` from its demonstration state."""
    if screen not in SCREENS + EXTRA:
        raise EgmError(f"unknown service screen {screen!r}; screens are {', '.join(SCREENS + EXTRA)}")
    surface = pygame.Surface(check_size(*size))
    state = demo_state(screen, size)
    state.list_page = max(0, page)
    return surface, ServiceScreen().render(surface, build(state))
