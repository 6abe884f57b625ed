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


def main(argv: list[str] | None = None) -> int:
    """``python -m firmware.ui.service.screenshots SCREEN --out FILE.png [--size WxH]``: what
    ``egm screenshot`` will do for these screens once it delegates to :func:`render`."""
    import argparse
    from pathlib import Path

    from firmware.ui.layout import SizeError, parse_size

    parser = argparse.ArgumentParser(prog="python -m firmware.ui.service.screenshots",
                                     description="render a service screen to a PNG, headless")
    parser.add_argument("screen", choices=SCREENS + EXTRA)
    parser.add_argument("--out", required=True, type=Path, help="the PNG to write")
    parser.add_argument("--size", default="1920x1080", help="WIDTHxHEIGHT (default 1920x1080)")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
    except SizeError as exc:
        parser.error(f"--size: {exc}")
    if args.out.suffix.lower() != ".png" or not args.out.parent.is_dir():
        parser.error(f"--out must be a .png file in an existing directory, not {str(args.out)!r}")
    surface, _ = render(args.screen, size)
    pygame.image.save(surface, str(args.out))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
