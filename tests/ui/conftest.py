"""The screens' tests run headless: SDL's dummy video and audio drivers, set before pygame loads."""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame  # noqa: E402
import pytest  # noqa: E402

SIZES = [(1920, 1080), (1280, 720)]


@pytest.fixture
def session(request, tmp_path):
    """A terminal with simulated devices and the player's screens (``tests/ui/session.py``), for the
    test module's ``GAMES`` (the games configuration; Baccarat War's acceptance set without one)."""
    from tests.ui.session import Session

    s = Session(tmp_path, games=getattr(request.module, "GAMES", None))
    yield s
    s.close()


@pytest.fixture(scope="session", autouse=True)
def _fonts():
    pygame.font.init()
    yield


def colour_at(surface: pygame.Surface, scaler, x: float, y: float) -> tuple[int, int, int]:
    """The colour of design point (x, y) on a rendered surface."""
    return tuple(surface.get_at(scaler.point(x, y)))[:3]


def region_pixels(surface: pygame.Surface, scaler, rect):
    """The pixels of a design rectangle as an (h, w, 3) array."""
    import numpy as np

    x, y, w, h = scaler.rect(rect)
    return np.transpose(pygame.surfarray.pixels3d(surface)[x:x + w, y:y + h], (1, 0, 2)).copy()
