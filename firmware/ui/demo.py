"""Demonstration states: deterministic tables for ``egm screenshot``, the docs and the tests.

Nothing here is drawn differently from the cabinet: a demonstration is a configuration, a
``status()``-shaped document, a bet slip and a round record, and the screens draw them with the
same builders as the running app. The round is a real one: played by the round kernel and the
game's own code from stacked cards (seed 000's FIG. 4/7/8 hand for Baccarat War: spot 1's Q 3
ties the dealer's 2 A at 3, the war cards 10/10 tie again, 6 against 9 wins it, and the same cards
win the war pool).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.ui.betting import BetSlip, stake
from firmware.ui.context import GameContext
from firmware.ui.games import game_ui
from firmware.ui.games.base import GameUi, coin_out
from firmware.ui.playback import Playback

#: Credits on the meter at the start of every demonstration ($20 at one cent a credit).
START_CREDITS = 2000

#: Per game: the stacked cards (dealing order) and the wagers of its demonstration round.
ROUNDS: dict[str, tuple[str, dict[int, dict[str, int]]]] = {
    "baccarat-war": ("Qs 2d 3h Ah Td Ts 6c 9s",
                     {1: {"bac": 10, "war": 10, "tie": 5, "four_card": 5, "war_pool": 10}}),
    "blackjack-war": ("Ks Qd 7h 7c 9h 4s",
                      {1: {"bac": 10, "war": 10, "tie": 5, "four_card": 5, "war_pool": 10}}),
}
#: The bets on the table in the "table" demonstration.
TABLE_BETS: dict[str, dict[int, dict[str, int]]] = {
    "baccarat-war": {1: {"bac": 25, "war": 25, "tie": 5, "four_card": 5, "war_pool": 10}},
    "blackjack-war": {1: {"bac": 25, "war": 25, "tie": 5, "four_card": 5, "war_pool": 10}},
}
DEMO_GAMES = tuple(ROUNDS)


def demo_config(game_id: str = "baccarat-war") -> Config:
    """One seat, the war pool on with a 10-credit house ante (the pool the default jurisdiction
    profile accepts on a one-seat terminal, docs/math/README.md), every game with screens enabled."""
    options = {g: {"pool": {"enabled": True, "dealer_ante": 10}} for g in ("baccarat-war", "blackjack-war")}
    return Config.model_validate({"games": {"enabled": list(DEMO_GAMES), "default": game_id, "seats": 1,
                                            "options": options}})


def play_round(ctx: GameContext, cards: str, wagers: dict[int, dict[str, int]], *,
               round_id: str = "demo") -> dict[str, Any]:
    """A real round through the kernel, from stacked cards: its record."""
    kernel = RoundKernel(ctx.game, ctx.options, limits=ctx.limits)
    kernel.play(wagers, StackedSource(parse_cards(cards)), round_id=round_id)
    return kernel.record()


@dataclass
class Demo:
    """Everything a screen needs for one demonstration."""

    gui: GameUi
    status: dict[str, Any]
    slip: BetSlip
    record: dict[str, Any] | None = None
    playback: Playback | None = None


def status_doc(game_id: str, credits: int, **more: Any) -> dict[str, Any]:
    """A ``Terminal.status()``-shaped document (the fields the screens read)."""
    return {"state": "IDLE", "interrupted": None, "tilts": [], "credits": credits, "credits_cents": credits,
            "game": game_id, "bet": 10, "round": None, "handpay": None, "printing": None, "message": "",
            "accepting_notes": True, "starting": False, "last_ticket": None, "last_round": None, **more}


def demo(screen: str, game_id: str = "baccarat-war") -> Demo:
    """The demonstration behind ``egm screenshot SCREEN``: ``table`` (bets on the table), ``war``
    (the demonstration round shown up to its war's end), or any other screen's starting state."""
    if game_id not in ROUNDS:
        raise KeyError(game_id)
    ctx = GameContext.from_config(demo_config(game_id), game_id)
    gui = game_ui(ctx)
    slip = BetSlip(ctx.limits, ctx.chips, link=gui.link)
    if screen == "table":
        slip.wagers = gui.link({s: dict(b) for s, b in TABLE_BETS[game_id].items()})
        return Demo(gui, status_doc(game_id, START_CREDITS), slip)
    if screen == "war":
        cards, wagers = ROUNDS[game_id]
        record = play_round(ctx, cards, wagers)
        credits = START_CREDITS - stake(wagers) + coin_out(record)
        playback = Playback(gui.beats(record))
        playback.seek("war_step", last=True)
        slip.last = {s: dict(b) for s, b in wagers.items()}
        return Demo(gui, status_doc(game_id, credits, last_round=record["round_id"]), slip, record, playback)
    return Demo(gui, status_doc(game_id, START_CREDITS), slip)
