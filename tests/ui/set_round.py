"""A hand-setting round (Split 21 Stud, Double Super 9) held open in the real kernel while it waits
for the player, and the ``status()``-shaped document the screens read from it (tests of both games)."""

from __future__ import annotations

from typing import Any

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_config, status_doc
from firmware.ui.games import game_ui


def ui(game: str, options: dict[str, Any] | None = None, seats: int = 1):
    if options is None and seats == 1:
        cfg = demo_config(game)
    else:
        cfg = Config.model_validate({"games": {"enabled": [game], "default": game, "seats": seats,
                                               "options": {game: options or {}}}})
    return game_ui(GameContext.from_config(cfg, game))


class OpenRound:
    """The game's demonstration round (or the given cards, wagers and dice), dealt and waiting."""

    def __init__(self, gui, cards: str | None = None, wagers=None, dice=None) -> None:
        d = gui.demo
        self.gui = gui
        self.wagers = wagers or d.wagers
        self.dice = tuple(dice or d.dice)
        self.kernel = RoundKernel(gui.ctx.game, gui.ctx.options, limits=gui.ctx.limits)
        self.kernel.begin(self.wagers, StackedSource(parse_cards(cards or d.cards)), dice=self.dice, round_id="r1")

    def status(self) -> dict[str, Any]:
        k = self.kernel
        pending = [{"seat": r.seat, "kind": r.kind, "actions": list(r.actions), "hint": r.hint,
                    "view": k.decision_view(r.seat)} for r in k.pending()]
        decided = [{"seat": seat, "action": action, "view": k.decision_view(seat)}
                   for seat, action in k.decisions] if pending else []
        return status_doc(self.gui.ctx.game_id, 2000, state="PLAYING",
                          round={"round_id": "r1", "dice": list(self.dice), "decide_within_s": 20.0,
                                 "pending": pending, "decided": decided})

    def view(self):
        slip = BetSlip(self.gui.ctx.limits, self.gui.ctx.chips, link=self.gui.link)
        slip.last = self.wagers
        return table_view(self.gui, self.status(), slip)

    def act(self, what: str, seat: int = 1, *more: Any):
        return self.gui.act((what, seat, *more), self.status())

    def request(self, seat: int = 1):
        return next(r for r in self.status()["round"]["pending"] if r["seat"] == seat)


# --- reading a spot's view (SetSeatView) -----------------------------------------------------------
def hands(seat_view):
    """The spot's hands: label -> its cards."""
    return {h.label: [c.card for c in h.cards] for h in seat_view.hands}


def scores(seat_view):
    return {h.label: h.score for h in seat_view.hands}


def results(seat_view):
    """Each wager's settled result on the spot: wager -> (outcome, amount)."""
    return {a.wager: (a.result.outcome.value, a.result.amount) for a in seat_view.areas if a.result}
