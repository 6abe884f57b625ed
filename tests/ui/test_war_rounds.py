"""Baccarat War rounds shown step by step: what is visible at each beat comes from the record, in
the dealing order, and outcomes appear only once the round has reached them."""

from __future__ import annotations

import pygame
import pytest

from firmware.cards.source import RngShoe
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_config, demo_round, play_round, status_doc
from firmware.ui.games import game_ui
from firmware.ui.playback import Playback


def ui(cfg=None, game="baccarat-war"):
    ctx = GameContext.from_config(cfg or demo_config(game), game)
    return game_ui(ctx)


def shown_cards(felt, who):
    hand = felt.dealer if who == "dealer" else next(s.hand for s in felt.spots if s.seat == who)
    return [c.card for c in hand.cards], [c.card for c in hand.extra]


def results(felt, seat):
    spot = next(s for s in felt.spots if s.seat == seat)
    return {a.wager: (a.result.outcome.value, a.result.amount) for a in spot.areas if a.result}


def test_the_fig_8_round_beat_by_beat():
    gui = ui()
    d = demo_round("baccarat-war")
    cards, wagers = d.cards, d.wagers
    record = play_round(gui.ctx, cards, wagers)
    beats = gui.timeline(record)
    kinds = [b.kind for b in beats]
    assert kinds[:6] == ["deal"] * 4 + ["scores", "side_bets"]
    assert kinds.count("war_step") == 2 and kinds.count("pool_step") == 2 and kinds[-1] == "settle"

    def felt_at(i):
        return gui.felt(wagers={}, record=record, beat=beats[i], progress=1.0, betting=False)

    felt = felt_at(1)                                       # spot 1's first card, then the dealer's
    assert shown_cards(felt, 1) == (["Qs"], []) and shown_cards(felt, "dealer") == (["2d"], [])
    assert results(felt, 1) == {}
    war = kinds.index("war")
    felt = felt_at(war)
    assert beats[war].banner == "WAR!" and felt.dealer.highlight and felt.spots[0].hand.status == "AT WAR"
    assert results(felt, 1) == {"tie": ("win", "45"), "four_card": ("lose", "")}   # BAC waits for the war
    first = kinds.index("war_step")
    felt = felt_at(first)
    assert shown_cards(felt, 1) == (["Qs", "3h"], ["Td"]) and felt.spots[0].hand.score == "WAR 3"
    assert "bac" not in results(felt, 1)                    # 10 against 10: tied again
    second = kinds.index("war_step", first + 1)
    felt = felt_at(second)
    assert felt.spots[0].hand.score == "WAR 9" and felt.dealer.score == "WAR 2"
    assert results(felt, 1)["bac"] == ("win", "20") and results(felt, 1)["war"] == ("push", "10")
    assert "war_pool" not in results(felt, 1)
    pool = kinds.index("pool")
    assert {m.spot: m.state for m in felt_at(pool).pot.marks}[1] == "live" and felt_at(pool).pot.dealer_state == "live"
    felt = felt_at(len(beats) - 1)
    assert results(felt, 1)["war_pool"] == ("win", "19")                 # 20 less 5%: 19 paid
    assert {m.spot: m.state for m in felt.pot.marks}[1] == "winner" and felt.pot.dealer_state == "out"
    assert felt.spots[0].hand.status == "WINS THE POT"
    assert beats[-1].caption == "You win $0.94"           # paid: BAC 20, WAR 10, TIE 45, FOUR CARD 0, pool 19


def test_an_arriving_card_slides_in_and_the_win_meter_counts_the_tags_shown():
    gui = ui()
    d = demo_round("baccarat-war")
    cards, wagers = d.cards, d.wagers
    record = play_round(gui.ctx, cards, wagers)
    playback = Playback(gui.timeline(record))
    playback.advance(0.1)                                   # part way into the first card
    status = status_doc("baccarat-war", 2000 - 40 + 94)     # 40 staked, 94 paid back
    slip = BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link)
    view = table_view(gui, status, slip, record=record, playback=playback)
    card = view.felt.spots[0].hand.cards[0]
    assert 0 < card.arriving < 1 and view.chrome.skippable and view.chrome.message == "Dealing"
    meters = {m.name: m.detail for m in view.chrome.meters}
    assert meters == {"meter.credit": "1,960 credits", "meter.bet": "40 credits", "meter.win": "0 credits"}
    playback.seek("war")
    view = table_view(gui, status, slip, record=record, playback=playback)
    meters = {m.name: m.detail for m in view.chrome.meters}   # TIE (WIN 45) and FOUR CARD (LOSE) shown
    assert meters["meter.win"] == "45 credits" and meters["meter.credit"] == "2,005 credits"
    playback.skip()
    view = table_view(gui, status, slip, record=record, playback=playback)
    meters = {m.name: m.detail for m in view.chrome.meters}
    assert meters["meter.credit"] == "2,054 credits" and meters["meter.win"] == "94 credits"
    assert not view.chrome.skippable and view.chrome.message == "You win $0.94"


def test_the_fig_10_pool_contest_between_spots_3_and_5():
    cfg = Config.model_validate({"games": {"seats": 5, "options": {"baccarat-war": {"pool": {"enabled": True}}}}})
    gui = ui(cfg)
    # Spot 3: 4 3, spot 5: 7 Q (both 7), the dealer 2 A (3); war cards 2/2, 10/Q, 8/8, 9/8.
    wagers = {3: {"bac": 10, "war": 10, "war_pool": 10}, 5: {"bac": 10, "war": 10, "war_pool": 10}}
    record = play_round(gui.ctx, "4c 7d 2h 3s Qc As 2d 2s Td Qh 8c 8d 9h 8s", wagers)
    assert record["war_pool"]["winner"] == 3 and record["war_pool"]["steps"] == 4
    beats = gui.timeline(record)
    steps = [b for b in beats if b.kind == "pool_step"]
    assert [b.caption for b in steps] == ["Pool card 1: still tied", "Pool card 2: still tied",
                                          "Pool card 3: still tied", "Pool card 4: Spot 5 out"]
    assert [b.reveal.fresh for b in beats if b.kind == "deal" and b.reveal.fresh[1] == "war"] == \
        [(3, "war", i // 2) if i % 2 == 0 else (5, "war", i // 2) for i in range(8)]
    felt = gui.felt(wagers={}, record=record, beat=beats[-1], progress=1.0, betting=False)
    states = {m.spot: m.state for m in felt.pot.marks}
    assert states[3] == "winner" and states[5] == "out" and felt.pot.dealer_state == "out"
    assert [m.open for m in felt.pot.marks] == [True] * 5 + [False] * 2      # spots 6, 7: not this terminal's
    assert shown_cards(felt, 3) == (["4c", "3s"], ["2d", "Td", "8c", "9h"])
    assert results(felt, 3)["war_pool"] == ("win", "19") and results(felt, 5)["war_pool"] == ("lose", "")
    assert [s.seat for s in felt.spots] == [1, 2, 3, 4, 5]


def test_a_war_that_does_not_end_returns_the_wagers():
    cfg = Config.model_validate({"games": {"options": {"baccarat-war": {"max_war_steps": 1,
                                                                        "pool": {"enabled": False}}}}})
    gui = ui(cfg)
    record = play_round(gui.ctx, "Qs 2d 3h Ah Td Ts", {1: {"bac": 10, "war": 10}})
    beats = gui.timeline(record)
    assert "war_misdeal" in [b.kind for b in beats]
    felt = gui.felt(wagers={}, record=record, beat=None, progress=1.0, betting=False)
    assert felt.pot is None
    assert results(felt, 1) == {"bac": ("void", "10"), "war": ("void", "10")}
    assert beats[-1].caption == "This round: all wagers returned"


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_seven_spots_fit_the_table(size):
    cfg = Config.model_validate({"games": {"seats": 7, "options": {"baccarat-war": {"pool": {"enabled": True}}}}})
    gui = ui(cfg)
    wagers = {s: {"bac": 5, "war": 5, "tie": 1, "four_card": 1, "war_pool": 5} for s in range(1, 8)}
    kernel = RoundKernel(gui.ctx.game, gui.ctx.options)
    kernel.play(wagers, RngShoe(RngService.seeded(3), gui.ctx.game.shoe(gui.ctx.options)))
    record = kernel.record()
    surface = pygame.Surface(size)
    view = table_view(gui, status_doc("baccarat-war", 5000), BetSlip(gui.ctx.limits, gui.ctx.chips), record=record)
    frame = gui.screen().render(surface, view)
    spots = [frame.regions[f"spot.{s}"] for s in range(1, 8)]
    assert all(a.right <= b.x for a, b in zip(spots, spots[1:], strict=False))
    assert all(r.x >= 0 and r.right <= 1920 for r in spots)
    for s in range(1, 8):
        for wager in ("bac", "war", "tie", "four_card", "war_pool"):
            area = frame.regions[f"spot.{s}.{wager}"]
            assert frame.regions[f"spot.{s}"].contains(area.x, area.y)
    assert min(t.size for t in frame.texts) >= 18


def test_a_games_decision_buttons_take_the_place_of_deal():
    """The hook the decision games use: the kernel's pending requests become buttons."""
    from firmware.ui.actions import UiAction
    from firmware.ui.games.war import BaccaratWarUi
    from firmware.ui.view import ButtonView

    class Deciding(BaccaratWarUi):
        def decision_buttons(self, request):
            return [ButtonView(f"button.{a}", a, UiAction("decide", (request["seat"], a))) for a in request["actions"]]

    gui = Deciding(GameContext.from_config(demo_config(), "baccarat-war"))
    status = status_doc("baccarat-war", 100, round={"round_id": "r", "phase": "decisions", "cards_dealt": 4,
                                                    "pending": [{"seat": 1, "kind": "play_or_fold",
                                                                 "actions": ["play", "fold"]}]})
    view = table_view(gui, status, BetSlip(gui.ctx.limits, gui.ctx.chips))
    assert [b.action for b in view.chrome.buttons] == [UiAction("decide", (1, "play")), UiAction("decide", (1, "fold"))]
    frame = gui.screen().render(pygame.Surface((1280, 720)), view)
    assert frame.hit("button.fold").action.arg == (1, "fold")
