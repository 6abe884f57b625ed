"""The screenshot of a terminal without screens (``egm run --headless``): its published status drawn
off screen by the same screens a cabinet's display runs.

:func:`headless_capture` is the terminal's ``capture`` factory (``Terminal(capture=...)``, wired by
``egm run``). Each ``screenshot`` request makes one :class:`~firmware.ui.app.UiApp` on demand
(``drive_terminal=False``) over a :class:`FrozenTerminal`: a copy of the terminal's published
snapshot and last round record that takes no input and runs no command, so nothing the screens
would do (connect for input, register a command, ask for a game, a bet or a deal) reaches the
terminal. The app draws one frame (the last round shown at its end, ``UiApp.settle``), and the
frame is encoded on the asking thread. The screens drawn on demand have no past: a headless
terminal shows its table (never the attract mode an idle screen reaches after a minute), and a
service menu at its first page.

pygame stays off any display: ``SDL_VIDEODRIVER`` (and the audio driver) default to ``dummy`` here,
and only off-screen surfaces are drawn; requests are drawn one at a time.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from firmware.errors import EgmError

_LOCK = threading.Lock()


class FrozenTerminal:
    """What the screens read of a terminal, frozen at one moment; everything they would ask of it
    is refused (a future that fails), and nothing is connected or registered."""

    def __init__(self, terminal: Any) -> None:
        self.cfg = terminal.cfg
        if not terminal.snapshot:
            raise EgmError("the terminal has not shown anything yet (it is powering up)")
        self.snapshot = dict(terminal.snapshot)
        self.last_record = terminal.last_record
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.stopping = False

    def status(self) -> dict[str, Any]:
        return self.snapshot

    def connect_screens(self, on_input: Any, capture: Any = None) -> None:
        """Screens drawn for a screenshot take no input and are not captured again."""

    def register(self, **handlers: Callable[..., Any]) -> None:
        """Nothing is added to the real terminal's commands."""

    def submit(self, name: str, **args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(EgmError(f"{name}: a screenshot does not act on the terminal"))
        return future

    def step(self, timeout: float = 0.0) -> None:
        raise EgmError("a screenshot does not step the terminal")


def headless_capture(terminal: Any, *, par_cache: Any = None) -> Callable[[tuple[int, int]], dict[str, Any]]:
    """The ``capture`` of ``terminal`` when no screens are connected (the display driver is
    chosen when a screenshot is asked for, not here: ``egm run`` builds this before it looks for
    a display)."""

    def capture(size: tuple[int, int]) -> dict[str, Any]:
        return render_live(terminal, size, par_cache=par_cache)

    return capture


def render_live(terminal: Any, size: tuple[int, int], *, par_cache: Any = None) -> dict[str, Any]:
    """``terminal``'s published state drawn once at ``size``: the ``screenshot`` op's answer."""
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    import pygame

    from firmware.ui.app import UiApp
    from firmware.ui.capture import answer, grab
    from firmware.ui.games import NoScreenError
    from firmware.ui.layout import check_size

    frozen = FrozenTerminal(terminal)
    with _LOCK:
        if not pygame.font.get_init():
            pygame.font.init()
        try:
            app = UiApp(frozen, size=check_size(*size), drive_terminal=False,  # type: ignore[arg-type]
                        par_cache=par_cache)
        except NoScreenError as exc:
            raise EgmError(f"no screen to capture: {exc}") from None
        app.settle()
        app.step(0.0)
        lab = frozen.snapshot.get("lab")
        shot = grab(app.surface, app.frame, app.scaler, size, screen=app.screen,
                    state=frozen.snapshot.get("state"), lab=None if lab is None else str(lab.get("id")))
    return answer(shot)
