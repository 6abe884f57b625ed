"""Hold'em War shown from its record beat by beat: the hole cards, the five community cards in
their beats, each hand's made poker hand by name (the kernel's), the split that starts a war; and
the war family's high-card war scores shown as ranks (J, Q, K, A)."""

from __future__ import annotations

import random

import pygame
import pytest

from firmware.cards.card import parse_cards
from firmware.cards.poker5 import describe, eval7
from firmware.cards.source import RngShoe
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_config, demo_round, play_round, status_doc
from firmware.ui.games import game_ui
from firmware.ui.games.poker import hand_name5
from firmware.ui.par import sheet_for_config

GAME = "holdem-war"


def ui(cfg=None, game=GAME):
    return game_ui(GameContext.from_config(cfg or demo_config(game), game))


def shown(hand):
    return [c.card for c in hand.cards], [c.card for c in hand.extra]


def results(felt, seat=1):
    spot = next(s for s in felt.spots if s.seat == seat)
    return {a.wager: (a.result.outcome.value, a.result.amount) for a in spot.areas if a.result}


def test_the_demonstration_round_beat_by_beat():
    """9 2 and 9 3 both play the board's 5 6 7 8: a nine-high straight each, an exact split."""
    gui = ui()
    d = demo_round(GAME)
    record = play_round(gui.ctx, d.cards, d.wagers)
    beats = gui.timeline(record)
    kinds = [b.kind for b in beats]
    assert kinds[:10] == ["deal"] * 9 + ["scores"]
    assert [b.reveal.fresh for b in beats[:9]] == [
        (1, "initial", 0), ("dealer", "initial", 0), (1, "initial", 1), ("dealer", "initial", 1),
        *[("community", "community", i) for i in range(5)]]

    def felt_at(i, progress=1.0):
        return gui.felt(wagers={}, record=record, beat=beats[i], progress=progress, betting=False)

    felt = felt_at(3)                                        # the hole cards, no board yet
    assert shown(felt.spots[0].hand) == (["9h", "2c"], []) and shown(felt.dealer) == (["9d", "3c"], [])
    assert felt.community == () and felt.spots[0].hand.score == ""
    felt = felt_at(6, progress=0.4)                          # the third community card arriving
    assert [c.card for c in felt.community] == ["5s", "6h", "7d"] and felt.community[2].arriving == 0.4
    assert felt.community[0].arriving == 1.0
    scores = kinds.index("scores")
    felt = felt_at(scores)
    assert [c.card for c in felt.community] == ["5s", "6h", "7d", "8c", "Kd"]
    assert felt.spots[0].hand.score == "Straight, Nine high" == record["seats"][0]["hand"]
    assert felt.dealer.score == "Straight, Nine high" == record["dealer"]["hand"]
    assert beats[scores].caption == "The dealer has Straight, Nine high"
    side = kinds.index("side_bets")
    assert beats[side].caption == "TIE is settled on the best five cards"
    assert results(felt_at(side)) == {"tie": ("win", "95")}                 # TIE 5 at 18 to 1: 90 and its 5
    war = kinds.index("war")
    assert beats[war].banner == "WAR!" and felt_at(war).spots[0].hand.status == "AT WAR"
    step = kinds.index("war_step")
    felt = felt_at(step)                                     # the war cards K and 4: high card, K wins
    assert shown(felt.spots[0].hand) == (["9h", "2c"], ["Kh"]) and shown(felt.dealer) == (["9d", "3c"], ["4s"])
    assert felt.spots[0].hand.score == "Straight, Nine high - WAR K"
    assert felt.dealer.score == "Straight, Nine high - WAR 4"
    assert results(felt)["bac"] == ("win", "20") and results(felt)["war"] == ("push", "10")
    assert beats[step].caption == "Spot 1 wins the war."
    felt = felt_at(len(beats) - 1)
    assert results(felt)["war_pool"] == ("win", "19")         # the pot 20 less 5%: 19 paid
    assert beats[-1].caption == "You win $1.44"              # BAC 20, WAR 10, TIE 95, pool 19


def test_hand_names_are_the_kernels():
    rnd = random.Random(7)
    for _ in range(3000):
        strength = eval7(rnd.sample(range(52), 7))
        assert hand_name5(strength) == describe(strength)
    for cards, name in (("As Ks Qs Js Ts 2d 3c", "Royal Flush"), ("Ah 2h 3h 4h 5h Kd Kc", "Straight Flush, Five high"),
                        ("Kd Kc Ks 5d 5c 2h 3s", "Full House, Kings over Fives"),
                        ("Kd Kc 5s 5d 2c 7h 9s", "Two Pair, Kings and Fives")):
        assert hand_name5(eval7(parse_cards(cards))) == name


@pytest.mark.parametrize("scoring, spot, dealer", [("high_card", "Q", "J"), ("aggregate", "10", "10")])
def test_blackjack_wars_high_card_scores_are_ranks_not_numbers(scoring, spot, dealer):
    """Ks 7h against Qd 7c: 17 each, war. The war cards Q and J: by high card the ranks show."""
    cfg = Config.model_validate({"games": {"enabled": ["blackjack-war"], "default": "blackjack-war", "seats": 1,
                                           "options": {"blackjack-war": {"war_scoring": scoring}}}})
    gui = ui(cfg, "blackjack-war")
    record = play_round(gui.ctx, "Ks Qd 7h 7c Qh Js Ac 2d", {1: {"bac": 10, "war": 10}})
    beats = gui.timeline(record)
    step = [b.kind for b in beats].index("war_step")
    felt = gui.felt(wagers={}, record=record, beat=beats[step], progress=1.0, betting=False)
    assert felt.spots[0].hand.score == f"WAR {spot}" and felt.dealer.score == f"WAR {dealer}"


def test_the_pay_table_shows_the_exact_sheet_and_says_not_computed_without_one():
    gui = ui()                                               # the war pool on, one spot: exact since 2026
    doc = gui.paytable(sheet_for_config(demo_config(GAME), GAME, gui.ctx.options))
    rows = doc.pages[0][0].rows
    assert ("TIE", "18 to 1", "96.28%") in rows and ("BAC", "1 to 1", "100.00%") in rows
    assert "exact" in doc.footer and "Monte Carlo" not in doc.footer
    cfg = Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 1}})
    gui = ui(cfg)                                            # the default options: the shipped exact sheet
    doc = gui.paytable(sheet_for_config(cfg, GAME, gui.ctx.options))
    rows = doc.pages[0][0].rows
    assert ("TIE", "18 to 1", "96.28%") in rows and "exact" in doc.footer
    doc = gui.paytable(None)                                 # no sheet for the configuration (yet)
    assert ("TIE", "18 to 1", "not computed") in doc.pages[0][0].rows
    assert "computed at start-up" in doc.footer
    notes = next(s for s in doc.pages[0] if s.heading == "NOTES").paragraphs
    assert notes[0] == "TIE pays 18 to 1 when your best five cards exactly split with the dealer's."


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_seven_spots_and_the_board_fit_the_table(size):
    cfg = Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 7,
                                           "options": {GAME: {"pool": {"enabled": True}}}}})
    gui = ui(cfg)
    wagers = {s: {"bac": 5, "war": 5, "tie": 1, "war_pool": 5} for s in range(1, 8)}
    kernel = RoundKernel(gui.ctx.game, gui.ctx.options)
    kernel.play(wagers, RngShoe(RngService.seeded(3), gui.ctx.game.shoe(gui.ctx.options)))
    record = kernel.record()
    frame = gui.screen().render(pygame.Surface(size), table_view(gui, status_doc(GAME, 5000),
                                                                 BetSlip(gui.ctx.limits, gui.ctx.chips), record=record))
    board = " ".join(frame.texts_in("community"))
    assert all(c[:-1].replace("T", "10") in board for c in record["community"])
    assert not frame.regions["dealer"].contains(*frame.regions["community"].center)
    for s in range(1, 8):
        name = hand_name5(int(record["seats"][s - 1]["score"]))
        assert frame.texts_in(f"spot.{s}.hand.score")[0].startswith(name[:3])   # shortened if it must
    assert min(t.size for t in frame.texts) >= 18
