"""Demonstration states: deterministic tables for ``egm screenshot``, the docs and the tests.

Nothing here is drawn differently from the cabinet: a demonstration is a configuration, a
``status()``-shaped document, a bet slip and a round record, and the screens draw them with the
same builders as the running app. The round is a real one: played by the round kernel and the
game's own code from the stacked cards, dice and decisions of the game's
:class:`~firmware.ui.games.base.DemoRound` (``GameUi.demo``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.ui.betting import BetSlip
from firmware.ui.context import GameContext
from firmware.ui.games import GAME_UIS, game_ui, game_ui_class
from firmware.ui.games.base import DemoRound, GameUi, coin_out, round_stake
from firmware.ui.playback import Playback

#: Credits on the meter at the start of every demonstration ($20 at one cent a credit).
START_CREDITS = 2000

def demo_games() -> tuple[str, ...]:
    """The games with screens (read live: tests take a game out of ``GAME_UIS``)."""
    return tuple(GAME_UIS)


def demo_round(game_id: str) -> DemoRound:
    return game_ui_class(game_id).demo


def demo_config(game_id: str = "baccarat-war") -> Config:
    """One seat, every game with screens enabled, each with its demonstration's options."""
    options = {g: dict(demo_round(g).options) for g in demo_games() if demo_round(g).options}
    return Config.model_validate({"games": {"enabled": list(demo_games()), "default": game_id, "seats": 1,
                                            "options": options}})


def play_round(ctx: GameContext, cards: str, wagers: dict[int, dict[str, int]], *,
               dice: Sequence[int] | None = None, decisions: Sequence[tuple[int, str]] = (),
               round_id: str = "demo") -> dict[str, Any]:
    """A real round through the kernel, from stacked cards (and dice, and the players' decisions
    in order; a decision not given is the game's automatic one): its record."""
    kernel = RoundKernel(ctx.game, ctx.options, limits=ctx.limits)
    answers = list(decisions)

    def decider(request: Any) -> str:
        for i, (seat, action) in enumerate(answers):
            if seat == request.seat:
                del answers[i]
                return action
        return ctx.game.automatic_decision(kernel.round, request)

    kernel.play(wagers, StackedSource(parse_cards(cards), shoe=ctx.game.shoe(ctx.options)), dice=tuple(dice) if dice is not None else None,
                decider=decider, round_id=round_id)
    return kernel.record()


def offered(gui: GameUi, wagers: dict[int, dict[str, int]]) -> dict[int, dict[str, int]]:
    """``wagers`` less those the table does not offer under its options (the pool of a
    configuration that switches it off, a bonus left off): what a player could have bet."""
    areas = set(gui.bet_areas())
    return {seat: {w: amount for w, amount in bets.items() if (seat, w) in areas}
            for seat, bets in wagers.items()}


def play_demo(ctx: GameContext, round_id: str = "demo") -> dict[str, Any]:
    """The game's demonstration round, played (the wagers its options offer): its record."""
    d = demo_round(ctx.game_id)
    return play_round(ctx, d.cards, offered(game_ui(ctx), d.wagers), dice=d.dice, decisions=d.decisions,
                      round_id=round_id)


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


def demo(screen: str, game_id: str = "baccarat-war", config: Config | None = None) -> Demo:
    """The demonstration behind ``egm screenshot SCREEN``: ``table`` (bets on the table), ``war``
    (the demonstration round shown up to the last beat of its ``seek`` kind: a war's end), or any
    other screen's starting state. ``config``: the terminal configuration whose options the game is
    played with (``egm screenshot`` passes the terminal's); the demonstration's bets it does not
    offer are left off. Without it, :func:`demo_config` (every wager of the demonstration)."""
    if game_id not in GAME_UIS:
        raise KeyError(game_id)
    ctx = GameContext.from_config(config or demo_config(game_id), game_id)
    gui = game_ui(ctx)
    d = gui.demo
    slip = BetSlip(ctx.limits, ctx.chips, link=gui.link)
    if screen == "table":
        slip.wagers = gui.link(offered(gui, d.table_bets))
        return Demo(gui, status_doc(game_id, START_CREDITS), slip)
    if screen == "war":
        record = play_demo(ctx)
        credits = START_CREDITS - round_stake(record) + coin_out(record)
        playback = Playback(gui.beats(record))
        playback.seek(d.seek, last=True)
        slip.last = offered(gui, d.wagers)
        return Demo(gui, status_doc(game_id, credits, last_round=record["round_id"]), slip, record, playback)
    return Demo(gui, status_doc(game_id, START_CREDITS), slip)
