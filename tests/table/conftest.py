"""Fixtures of the live table's tests: a controller in process over a ledger in a temporary
directory, fake stations that record what the controller sends them, and a development PKI."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware.config.schema import Config, TableSection
from firmware.ledger.ledger import Ledger
from firmware.table.build import build_controller


class FakeStations:
    """The controller's outbound side: every message, by station, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def send(self, station: str, type_: str, body: dict[str, Any]) -> None:
        self.sent.append((station, type_, body))

    def of(self, station: str, type_: str) -> list[dict[str, Any]]:
        return [b for s, t, b in self.sent if s == station and t == type_]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def bet(bet_id: str, wagers: dict[str, int], *, round_id: str | None = None, seat: int = 0,
        game: str = "baccarat-war") -> dict[str, Any]:
    return {"bet_id": bet_id, "round_id": round_id, "seat": seat, "game": game, "wagers": wagers, "cover": 0}


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``table(stack=[...], source=..., shoe=..., cfg=..., **settings)``: a controller (and its fake stations
    and clock) over the ledger in tmp_path/table; call it again to restart the controller on the
    same ledger."""
    opened: list[Ledger] = []

    def make(*, stack: list[str] | None = None, source: str = "stacked", game: str = "baccarat-war",
             ledger_dir: Path | None = None, shoe: Any = None, cfg: Config | None = None,
             **settings: Any) -> tuple[Any, FakeStations, Clock]:
        for ledger in opened:
            ledger.close()
        opened.clear()
        ledger = Ledger.open(ledger_dir or tmp_path / "table")
        opened.append(ledger)
        values = {"auto_open": False, "betting_window_s": 10.0, "between_rounds_s": 0.0, "game": game}
        values.update(settings)
        out, clock = FakeStations(), Clock()
        controller = build_controller(ledger, TableSection(**values), source=source, stack=stack, out=out,
                                      clock=clock, seed=b"table tests", shoe=shoe, cfg=cfg)
        return controller, out, clock

    yield make
    for ledger in opened:
        ledger.close()
