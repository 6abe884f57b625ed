"""Headless rendering of a named screen from a demonstration state (``egm screenshot``, tests).

The same builders and screens as the running app (``firmware.ui.app``), drawn on an off-screen
surface: no window, no display driver needed.
"""

from __future__ import annotations

from dataclasses import replace

import pygame

from firmware.config import Config
from firmware.errors import EgmError
from firmware.ui.builders import attract_view, select_view, table_view
from firmware.ui.demo import demo, demo_config
from firmware.ui.games.base import doc_buttons
from firmware.ui.layout import check_size
from firmware.ui.painter import Frame
from firmware.ui.par import sheet_for_config
from firmware.ui.screens.attract import AttractScreen
from firmware.ui.screens.doc import DocScreen
from firmware.ui.screens.select import SelectScreen

#: The screens ``egm screenshot`` draws (CONTRACTS.md): the player's, and the service menu's
#: (drawn by ``firmware.ui.service.screenshots``).
PLAYER = ("table", "war", "paytable", "help", "attract", "games")
SERVICE = ("service", "recall", "calibration")
BUILT = PLAYER + SERVICE


class PageError(EgmError):
    """A help or pay-table page the document does not have."""


def render(screen: str, size: tuple[int, int] = (1920, 1080), game: str = "baccarat-war", *,
           page: int = 0, config: Config | None = None) -> tuple[pygame.Surface, Frame]:
    """Draw ``screen`` of ``game`` at ``size``; the surface and what was drawn where. ``config``:
    the terminal configuration the game's options come from (default: the demonstration's,
    :func:`~firmware.ui.demo.demo_config`)."""
    if screen not in BUILT:
        raise EgmError(f"unknown screen {screen!r}; screens are {', '.join(BUILT)}")
    if screen in SERVICE:
        from firmware.ui.service.screenshots import render as render_service

        return render_service(screen, size, game, page=page)
    surface = pygame.Surface(check_size(*size))
    d = demo(screen, game, config)
    gui = d.gui
    if screen in ("table", "war"):
        view = table_view(gui, d.status, d.slip, record=d.record, playback=d.playback)
        return surface, gui.screen().render(surface, view)
    if screen in ("paytable", "help"):
        sheet = sheet_for_config(config or demo_config(game), game, gui.ctx.options)
        doc = gui.paytable(sheet) if screen == "paytable" else gui.help(sheet)
        if not 0 <= page < len(doc.pages):
            raise PageError(f"the {screen} of {game} has {len(doc.pages)} page(s); there is no page {page + 1}")
        doc = replace(doc, page=page, buttons=doc_buttons(page, len(doc.pages)))
        return surface, DocScreen().render(surface, doc)
    if screen == "games":
        return surface, SelectScreen().render(surface, select_view(list(gui.ctx.enabled), game))
    view = attract_view(gui, list(gui.ctx.enabled), 1.0, 0)
    return surface, AttractScreen().render(surface, view)
