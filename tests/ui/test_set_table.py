"""The hand-setting table (set_table.py) shared by Split 21 Stud and Double Super 9: seven spots
fit at both sizes (a narrow spot puts its hands one above the other), nothing drawn in a box leaves
it, and every text is at least 18 px."""

from __future__ import annotations

import pygame
import pytest

from firmware.cards.source import RngShoe
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.demo import status_doc
from tests.ui.set_round import ui

WAGERS = {"split21-stud": {"ante": 5, "low": 5, "high": 10}, "double-super-9": {"bet": 5}}


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
@pytest.mark.parametrize("game", sorted(WAGERS))
def test_seven_spots_fit_the_table(game, size):
    gui = ui(game, {}, seats=7)
    rng = RngService.seeded(3)
    kernel = RoundKernel(gui.ctx.game, gui.ctx.options)
    kernel.play({s: dict(WAGERS[game]) for s in range(1, 8)}, RngShoe(rng, gui.ctx.game.shoe(gui.ctx.options)),
                dice=gui.ctx.game.roll_dice(rng))
    record = kernel.record()
    view = table_view(gui, status_doc(game, 5000), BetSlip(gui.ctx.limits, gui.ctx.chips), record=record)
    frame = gui.screen().render(pygame.Surface(size), view)
    spots = [frame.regions[f"spot.{s}"] for s in range(1, 8)]
    assert all(a.right <= b.x for a, b in zip(spots, spots[1:], strict=False))
    assert all(r.x >= 0 and r.right <= 1920 and r.bottom <= frame.regions["message"].y for r in spots)
    for s, spot in enumerate(spots, 1):
        first, second = (frame.regions[f"spot.{s}.hand.{h}"] for h in gui.hands)
        assert first.bottom <= second.y                              # one above the other
        for name in (f"spot.{s}.hand.{h}" for h in gui.hands):
            box = frame.regions[name]
            assert spot.contains(box.x, box.y) and spot.contains(box.right - 1, box.bottom - 1)
            inside = [t.rect for t in frame.texts if box.contains(*t.rect.center)]
            assert all(box.contains(t.x, t.y) and box.contains(t.right - 1, t.bottom - 1) for t in inside), name
        for wager in WAGERS[game]:
            area = frame.regions[f"spot.{s}.{wager}"]
            assert spot.contains(area.x, area.y) and spot.contains(area.right - 1, area.bottom - 1)
            assert f"spot.{s}.{wager}.result" in frame.regions
    assert min(t.size for t in frame.texts) >= 18
