"""Three Card Poker shown from its record beat by beat; the PLAY / FOLD decision while the round
waits; the pay table from the options and the PAR sheet."""

from __future__ import annotations

from itertools import combinations

import pygame
import pytest

from firmware.cards.card import parse_cards
from firmware.cards.poker3 import describe3, eval3
from firmware.cards.source import RngShoe
from firmware.config import Config
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip
from firmware.ui.builders import table_view
from firmware.ui.context import GameContext
from firmware.ui.demo import demo_config, demo_round, play_round, status_doc
from firmware.ui.games import game_ui
from firmware.ui.games.poker import hand_name3
from firmware.ui.par import sheet_for_config

GAME = "three-card-poker"


def ui(cfg=None):
    return game_ui(GameContext.from_config(cfg or demo_config(GAME), GAME))


def config(**options):
    return Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 1,
                                            "options": {GAME: options}}})


def cards(hand):
    return [c.card for c in hand.cards]


def results(felt, seat=1):
    spot = next(s for s in felt.spots if s.seat == seat)
    return {a.wager: f"{a.result.label} {a.result.amount}".strip() for a in spot.areas if a.result}


def area(felt, wager, seat=1):
    return next(a for s in felt.spots if s.seat == seat for a in s.areas if a.wager == wager)


def at(gui, record, beats, kind):
    """The felt at the last beat of ``kind``."""
    i = max(i for i, b in enumerate(beats) if b.kind == kind)
    return gui.felt(wagers={}, record=record, beat=beats[i], progress=1.0, betting=False), beats[i]


def test_the_demonstration_round_beat_by_beat():
    """J-10-9 (a straight) plays against the dealer's Q 8 2, which qualifies (queen-high)."""
    gui = ui()
    d = demo_round(GAME)
    record = play_round(gui.ctx, d.cards, d.wagers, decisions=d.decisions)
    beats = gui.timeline(record)
    assert [b.kind for b in beats] == ["dealt", "decision", "reveal", "side_bets", "compare", "settle"]

    felt, beat = at(gui, record, beats, "dealt")        # the player saw these while deciding
    assert cards(felt.spots[0].hand) == ["9h", "Td", "Jc"] and felt.spots[0].hand.score == "Straight, Jack high"
    assert cards(felt.dealer) == [None, None, None] and felt.dealer.score == ""
    assert results(felt) == {} and area(felt, "play").amount == 0

    felt, beat = at(gui, record, beats, "decision")
    assert beat.caption == "Spot 1 plays: PLAY $0.10" and area(felt, "play").amount == 10
    assert results(felt) == {}

    felt, beat = at(gui, record, beats, "reveal")       # the dealer's cards turn
    assert cards(felt.dealer) == ["Qs", "8d", "2c"]
    assert felt.dealer.score == "High Card, Queen" == record["dealer"]["hand"]
    assert felt.dealer.status == "QUALIFIES"
    assert beat.caption == "The dealer has High Card, Queen: the dealer qualifies"
    assert results(felt) == {}

    felt, beat = at(gui, record, beats, "side_bets")    # PAIR PLUS 6 to 1; 6-CARD: 8-Q straight 10 to 1
    assert results(felt) == {"pair_plus": "WIN 35", "six_card": "WIN 55"}

    felt, beat = at(gui, record, beats, "compare")      # ANTE 10 + 10 + the bonus 10 (1 to 1), PLAY 10 + 10
    assert results(felt) == {"ante": "WIN 30", "play": "WIN 20", "ante_bonus": "1 TO 1",
                             "pair_plus": "WIN 35", "six_card": "WIN 55"}
    assert beat.caption == "Spot 1 beats the dealer: ANTE and PLAY win"
    assert beats[-1].caption == "You win $1.40"
    # Every hand name shown is the kernel's (the record's English), from the game's own evaluator.
    assert felt.spots[0].hand.score == record["seats"][0]["hand"]


def test_without_a_decision_the_cards_are_dealt_one_by_one_in_the_dealing_order():
    gui = ui(config(mandatory="none"))                   # PAIR PLUS alone: no ante, no decision
    record = play_round(gui.ctx, "7h Ks 7d 9c 2s 4d", {1: {"pair_plus": 5}})
    beats = gui.timeline(record)
    assert [b.kind for b in beats] == ["deal"] * 6 + ["reveal", "side_bets", "settle"]
    order = [b.reveal.fresh for b in beats[:6]]
    assert order == [(1, 0), ("dealer", 0), (1, 1), ("dealer", 1), (1, 2), ("dealer", 2)]
    felt = gui.felt(wagers={}, record=record, beat=beats[2], progress=0.5, betting=False)
    assert cards(felt.spots[0].hand) == ["7h", "7d"] and felt.spots[0].hand.cards[1].arriving == 0.5
    assert cards(felt.dealer) == [None]                  # face down until the showdown
    felt, _ = at(gui, record, beats, "settle")
    assert results(felt) == {"pair_plus": "WIN 10"} and felt.spots[0].hand.score == "Pair of Sevens"


def test_a_fold_loses_the_ante_and_pair_plus_is_still_paid():
    gui = ui()
    record = play_round(gui.ctx, "7h Ks 7d Kd 2s 4d", {1: {"ante": 10, "pair_plus": 5}}, decisions=[(1, "fold")])
    beats = gui.timeline(record)
    felt, beat = at(gui, record, beats, "decision")
    assert beat.caption == "Spot 1 folds: the ANTE is lost"
    assert results(felt) == {"ante": "FOLD"} and felt.spots[0].hand.status == "FOLDED"
    assert all(c.dim for c in felt.spots[0].hand.cards) and area(felt, "play").amount == 0
    assert "compare" not in [b.kind for b in beats]
    felt, _ = at(gui, record, beats, "settle")
    assert results(felt) == {"ante": "FOLD", "pair_plus": "WIN 10"} and felt.dealer.score == "Pair of Kings"
    assert beats[-1].caption == "You win $0.10"                # PAIR PLUS paid 10 of the 15 staked


@pytest.mark.parametrize("not_qualified, ante, caption", [
    ("ante_wins", "WIN 20", "Spot 1: the dealer does not qualify, ANTE wins and PLAY pushes"),
    ("both_push", "PUSH 10", "Spot 1: the dealer does not qualify, ANTE and PLAY push"),
])
def test_a_dealer_that_does_not_qualify(not_qualified, ante, caption):
    gui = ui(config(not_qualified=not_qualified))
    record = play_round(gui.ctx, "Qs Jc Qh 8s 7d 3d", {1: {"ante": 10}}, decisions=[(1, "play")])
    beats = gui.timeline(record)
    felt, beat = at(gui, record, beats, "reveal")
    assert felt.dealer.status == "DOES NOT QUALIFY" and felt.dealer.score == "High Card, Jack"
    assert beat.caption == "The dealer has High Card, Jack: the dealer does not qualify"
    felt, beat = at(gui, record, beats, "compare")
    assert results(felt) == {"ante": ante, "play": "PUSH 10"} and beat.caption == caption


def pending_status(hint=None, left=12.4):
    request = {"seat": 1, "kind": "play_or_fold", "actions": ["play", "fold"], "hint": hint,
               "view": {"cards": ["Qs", "Qh", "7d"]}}
    return status_doc(GAME, 1985, state="PLAYING", round={"round_id": "r1", "phase": "decisions",
                                                         "pending": [request], "decide_within_s": left})


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_decision_shows_the_players_cards_the_dealers_face_down_and_play_fold(size):
    gui = ui()
    slip = BetSlip(gui.ctx.limits, gui.ctx.chips)
    slip.last = {1: {"ante": 10, "pair_plus": 5}}
    view = table_view(gui, pending_status(), slip)
    felt = view.felt
    assert cards(felt.spots[0].hand) == ["Qs", "Qh", "7d"] and felt.spots[0].hand.score == "Pair of Queens"
    assert felt.spots[0].hand.status == "PLAY OR FOLD?" and felt.spots[0].hand.highlight
    assert cards(felt.dealer) == [None, None, None]
    assert area(felt, "ante").amount == 10 and area(felt, "play").amount == 0
    assert not any(a.enabled for s in felt.spots for a in s.areas)      # no chips while deciding
    assert [(b.name, b.label, b.action) for b in view.chrome.buttons] == [
        ("button.play", "PLAY", UiAction("decide", (1, "play"))), ("button.fold", "FOLD", UiAction("decide", (1, "fold")))]
    assert view.chrome.message == "Your decision, please: 13 s left"
    frame = gui.screen().render(pygame.Surface(size), view)
    texts = " | ".join(frame.texts_in("spot.1.hand"))
    assert "Q" in texts and "7" in texts and "Pair of Queens" in texts
    assert frame.hit("button.play").action == UiAction("decide", (1, "play"))
    assert frame.hit("button.fold").action == UiAction("decide", (1, "fold"))
    assert "button.deal" not in frame.regions and "spot.1.ante" not in {h.name for h in frame.hits}
    assert "15 credits" in " ".join(frame.texts_in("meter.bet"))
    assert min(t.size for t in frame.texts) >= 18


def test_a_hint_where_the_jurisdiction_allows_it():
    gui = ui(config(hints=True))
    slip = BetSlip(gui.ctx.limits, gui.ctx.chips)
    slip.last = {1: {"ante": 10}}
    assert table_view(gui, pending_status("play"), slip).felt.spots[0].hand.status == "SUGGESTED: PLAY"


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_several_spots_each_hold_their_own_play_and_fold(size):
    cfg = Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 7}})
    gui = ui(cfg)
    assert gui.decision_buttons({"seat": 2, "actions": ["play", "fold"]}) == []      # not in the bottom row
    requests = [{"seat": s, "kind": "play_or_fold", "actions": ["play", "fold"], "hint": None,
                 "view": {"cards": ["Qs", "Qh", "7d"]}} for s in (2, 5)]
    decided = [{"seat": 1, "action": "play", "view": {"cards": ["Ks", "Kh", "2d"]}},
               {"seat": 3, "action": "fold", "view": {"cards": ["2s", "5h", "9c"]}}]
    status = status_doc(GAME, 1985, state="PLAYING", round={"round_id": "r1", "pending": requests,
                                                          "decided": decided, "decide_within_s": 9})
    slip = BetSlip(gui.ctx.limits, gui.ctx.chips)
    slip.last = {s: {"ante": 5} for s in range(1, 8)}
    view = table_view(gui, status, slip)
    spots = {spot.seat: spot.hand for spot in view.felt.spots}
    # The spots that answered keep their cards on the table with their answer, a fold dimmed.
    assert [c.card for c in spots[1].cards] == ["Ks", "Kh", "2d"] and spots[1].status == "PLAYS"
    assert spots[1].score == "Pair of Kings"
    assert spots[3].status == "FOLDED" and all(c.dim for c in spots[3].cards)
    assert spots[4].cards == ()                                            # no ante: no cards
    frame = gui.screen().render(pygame.Surface(size), view)
    for seat in (2, 5):
        for action in ("play", "fold"):
            name = f"button.{action}.{seat}"
            assert frame.hit(name).action == UiAction("decide", (seat, action))
            r = frame.regions[name]
            assert frame.regions[f"spot.{seat}"].contains(r.x, r.y) and frame.regions[f"spot.{seat}"].contains(
                r.right - 1, r.bottom - 1)
            assert not any(r.contains(*frame.regions[f"spot.{seat}.{w}"].center) for w in ("ante", "play"))
    assert "button.play.1" not in frame.regions                           # spot 1 has decided
    assert "button.deal" not in {h.name for h in frame.hits}              # no dealing while deciding
    assert min(t.size for t in frame.texts) >= 18


def test_the_slip_needs_the_mandatory_ante():
    gui = ui()
    assert gui.check_slip({}) == "Place a bet first"
    assert gui.check_slip({1: {"pair_plus": 5}}) == "Spot 1 needs an ANTE bet"
    assert gui.check_slip({1: {"ante": 5, "pair_plus": 5}}) is None
    assert gui.bet_areas() == [(1, "ante"), (1, "pair_plus"), (1, "six_card")]
    assert ui(config()).bet_areas() == [(1, "ante"), (1, "pair_plus")]       # six_card off by default


def test_the_pay_table_comes_from_the_options_and_the_par_sheet():
    cfg = config(six_card=True, pair_plus_pays={"flush": 3}, ante_bonus_pays={"three_of_a_kind": 3})
    gui = ui(cfg)
    doc = gui.paytable(sheet_for_config(cfg, GAME, gui.ctx.options))
    rows = {s.heading: s.rows for s in doc.pages[0]}
    assert ("ANTE and PLAY", "1 to 1 against a qualifying dealer", "96.39%") in rows["WAGERS"]
    assert ("PAIR PLUS", "see the table", "92.72%") in rows["WAGERS"]          # 40/30/6/3/1: 7.28% edge
    assert rows["PAIR PLUS"][1:] == (("Straight flush", "40 to 1"), ("Three of a kind", "30 to 1"),
                                     ("Straight", "6 to 1"), ("Flush", "3 to 1"), ("Pair", "1 to 1"))
    ante_bonus = rows["ANTE BONUS (paid on the ANTE when you play)"]
    assert ante_bonus[1:] == (("Straight flush", "5 to 1"), ("Three of a kind", "3 to 1"), ("Straight", "1 to 1"))
    six = rows["6-CARD BONUS (your 3 cards and the dealer's 3)"]
    assert six[1] == ("Royal flush", "1,000 to 1") and six[-1] == ("Three of a kind", "7 to 1")
    notes = next(s for s in doc.pages[0] if s.heading == "NOTES").paragraphs
    assert notes[0] == "Dealer qualifies with Queen high or better"
    assert "exact" in doc.footer
    assert "not computed" in ui(cfg).paytable(None).pages[0][0].rows[1]


@pytest.mark.parametrize("rule, line", [("none", "The dealer always qualifies"),
                                        ("pair", "Dealer qualifies with a pair or better"),
                                        ("K", "Dealer qualifies with King high or better"),
                                        ("Q-6-4", "Dealer qualifies with Q-6-4 or better")])
def test_the_qualifying_rule_on_the_felt_follows_the_option(rule, line):
    assert ui(config(dealer_qualifies=rule)).rule() == line


def test_a_four_card_dealer_plays_its_best_three():
    gui = ui(config(dealer_cards=4))
    record = play_round(gui.ctx, "Qs Jc Qh 8s 7d 3d 8h", {1: {"ante": 10}}, decisions=[(1, "play")])
    felt, _ = at(gui, record, gui.timeline(record), "settle")
    assert cards(felt.dealer) == ["Jc", "8s", "3d", "8h"] and felt.dealer.score == "Pair of Eights"
    assert [c.dim for c in felt.dealer.cards] == [False, False, True, False]        # not in its best three


def test_every_three_card_hand_is_named_as_the_kernel_names_it():
    for hand in combinations(range(52), 3):
        strength = eval3(hand)
        assert hand_name3(strength) == describe3(strength)
    assert hand_name3(eval3(parse_cards("Ah 2h 3h"))) == "Straight Flush, Three high"


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_seven_spots_fit_the_table(size):
    cfg = Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 7,
                                           "options": {GAME: {"six_card": True}}}})
    gui = ui(cfg)
    wagers = {s: {"ante": 5, "pair_plus": 1, "six_card": 1} for s in range(1, 8)}
    kernel = RoundKernel(gui.ctx.game, gui.ctx.options)
    kernel.play(wagers, RngShoe(RngService.seeded(3), gui.ctx.game.shoe(gui.ctx.options)))
    record = kernel.record()
    frame = gui.screen().render(pygame.Surface(size), table_view(gui, status_doc(GAME, 5000),
                                                                 BetSlip(gui.ctx.limits, gui.ctx.chips), record=record))
    spots = [frame.regions[f"spot.{s}"] for s in range(1, 8)]
    assert all(a.right <= b.x for a, b in zip(spots, spots[1:], strict=False))
    for s in range(1, 8):
        for wager in ("ante", "play", "ante_bonus", "pair_plus", "six_card"):
            r = frame.regions[f"spot.{s}.{wager}"]
            assert frame.regions[f"spot.{s}"].contains(r.x, r.y) and frame.regions[f"spot.{s}"].contains(r.right - 1,
                                                                                                       r.bottom - 1)
    assert min(t.size for t in frame.texts) >= 18


def test_with_a_player_banker_the_banker_seat_has_no_areas_and_the_commission_shows():
    cfg = Config.model_validate({"games": {"enabled": [GAME], "default": GAME, "seats": 3, "options": {GAME: {
        "banking": "player", "banker_seat": 3, "commission": {"mode": "flat", "amount": 1}}}}})
    gui = ui(cfg)
    assert gui.seats() == [1, 2] and (3, "ante") not in gui.bet_areas()
    record = play_round(gui.ctx, "Qs Jc 2d Qh 8s 5d 7d 3d 9c", {1: {"ante": 10}, 2: {"ante": 5}},
                        decisions=[(1, "play"), (2, "fold")])
    beats = gui.timeline(record)
    felt, _ = at(gui, record, beats, "decision")
    assert felt.spots[0].hand.status == "" and felt.spots[1].hand.status == "FOLDED"
    felt, _ = at(gui, record, beats, "settle")
    assert [s.seat for s in felt.spots] == [1, 2]
    assert felt.spots[0].hand.status == "COMMISSION -1" and felt.spots[1].hand.status == "FOLDED COMMISSION -1"
