"""The player's screens, run in the suite's process over what the terminal under test publishes.

:class:`Screens` is the product's own :class:`~firmware.ui.app.UiApp` (the code a cabinet's display
runs: hit areas, navigation, the pay table and help pages, the round's playback) over a frozen copy
of the terminal's status and its last round record as the terminal reports them (``status`` and
the service ``recall``). It acts on nothing: every command the screens would send is refused. A
test taps the drawn buttons (a left click at a hit area's centre, through the screens' own
hit-testing) and reads what the screens then show: their mode, the frame's hit areas, the view
model the table is drawn from.
"""

from __future__ import annotations

import dataclasses
import enum
import os
from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from typing import Any

from firmware.config import Config
from firmware.errors import EgmError

SIZE = (1920, 1080)


class _Frozen:
    """What the screens read of a terminal, frozen; everything they would ask of it is refused."""

    def __init__(self, cfg: Config, snapshot: Mapping[str, Any], record: Mapping[str, Any] | None) -> None:
        self.cfg = cfg
        self.snapshot: dict[str, Any] = dict(snapshot)
        self.last_record = dict(record) if record is not None else None
        self.handlers: dict[str, Any] = {}

    def status(self) -> dict[str, Any]:
        return self.snapshot

    def connect_screens(self, *args: Any, **kwargs: Any) -> None:
        """No input reaches these screens but the test's taps."""

    def register(self, **handlers: Any) -> None:
        """Nothing is added to any terminal's commands."""

    def submit(self, name: str, **args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(EgmError(f"{name}: the lab's copy of the screens does not act on the terminal"))
        return future


class Screens:
    """The player's screens over ``snapshot`` (the terminal's status) and ``record`` (its last
    round, the service recall's newest), the round's playback run to its end."""

    def __init__(self, cfg: Config, snapshot: Mapping[str, Any], record: Mapping[str, Any] | None) -> None:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        import pygame

        from firmware.ui.app import UiApp

        if not pygame.font.get_init():
            pygame.font.init()
        # the screens show a round record when the status names a round they have not shown yet:
        # up first without it, then with the terminal's own status
        self.terminal = _Frozen(cfg, {**snapshot, "last_round": None}, record)
        self.app = UiApp(self.terminal, size=SIZE, drive_terminal=False)  # type: ignore[arg-type]
        self.app.step(0.0)
        self.terminal.snapshot = dict(snapshot)
        self.frame = self.app.step(0.0)
        if self.app.playback is not None and not self.app.playback.done:
            self.press("skip")

    @property
    def mode(self) -> str:
        return str(self.app.mode)

    def buttons(self) -> list[str]:
        """The names of the hit areas drawn (what a touch can reach now)."""
        return [h.name for h in self.frame.hits]

    def tap(self, name: str) -> str:
        """A touch at the centre of hit area ``name`` (KeyError if it is not drawn); the mode after it."""
        import pygame

        hit = self.frame.hit(name)
        x, y = hit.rect.center
        event = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=self.app.scaler.point(x, y), button=1)
        self.frame = self.app.step(0.0, [event])
        return self.mode

    def press(self, action: str, arg: Any = None) -> None:
        """An action the screens take from the button deck (``skip``)."""
        from firmware.ui.actions import UiAction

        self.app.dispatch(UiAction(action, arg))
        self.frame = self.app.step(0.0)

    def table(self) -> Any:
        """The view model the table is drawn from now."""
        from firmware.ui.builders import table_view

        app = self.app
        return table_view(app.gui, app.status, app.slip, record=app.record, playback=app.playback,
                          message=app.message)

    def paytable_rows(self) -> list[tuple[str, ...]]:
        """Every row of every page of the pay table the screens draw for the game shown, each
        after its section's heading: ``(heading, cell, cell...)``."""
        doc = self.app.gui.paytable(self.app.sheet())
        return [(section.heading, *row) for page in doc.pages for section in page for row in section.rows]


def walk(view: Any) -> Iterator[Any]:
    """Every dataclass instance inside ``view`` (itself included), depth first."""
    if dataclasses.is_dataclass(view) and not isinstance(view, type):
        yield view
        for f in dataclasses.fields(view):
            yield from walk(getattr(view, f.name))
    elif isinstance(view, tuple | list):
        for item in view:
            yield from walk(item)
    elif isinstance(view, dict):
        for item in view.values():
            yield from walk(item)


def shown_cards(view: Any) -> list[str]:
    """The cards the table shows face up (``CardView.card``), sorted."""
    return sorted(str(v.card) for v in walk(view) if type(v).__name__ == "CardView" and getattr(v, "card", None))


def shown_results(view: Any) -> dict[tuple[int, str], tuple[str, int | None]]:
    """(seat, wager) -> (outcome, net) of every bet area the table shows with a result."""
    out: dict[tuple[int, str], tuple[str, int | None]] = {}
    for v in walk(view):
        if type(v).__name__ == "BetAreaView" and getattr(v, "result", None) is not None:
            outcome = v.result.outcome
            paid = getattr(v.result, "paid", None)
            net = None if paid is None else int(paid) - int(v.amount)
            out[(int(v.seat), str(v.wager))] = (outcome.value if isinstance(outcome, enum.Enum) else str(outcome), net)
    return out


def recorded_cards(record: Any) -> list[str]:
    """Every card the round record holds under ``cards`` or a ``*_cards`` key (``war_cards``...), sorted."""
    found: list[str] = []

    def visit(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                visit(v, str(k))
        elif isinstance(node, list):
            if (key == "cards" or key.endswith("_cards")) and all(isinstance(c, str) for c in node):
                found.extend(node)
            else:
                for item in node:
                    visit(item, key)

    visit({k: v for k, v in record.items() if k != "options"})
    return sorted(found)


def recorded_results(record: Mapping[str, Any]) -> dict[tuple[int, str], tuple[str, int | None]]:
    """(seat, wager) -> (outcome, net) of the round record's seats."""
    out: dict[tuple[int, str], tuple[str, int | None]] = {}
    for seat in record.get("seats") or []:
        for wager, result in (seat.get("results") or {}).items():
            out[(int(seat["seat"]), str(wager))] = (str(result.get("outcome")), result.get("net"))
    return out
