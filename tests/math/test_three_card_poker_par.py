"""The exact Three Card Poker PAR sheet (firmware/math/three_card_poker.py) against the rules' published
figures, brute force through the game's own settlement, and rounds played by the round kernel."""

from __future__ import annotations

import json
import random
from fractions import Fraction
from itertools import combinations
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.card import parse_cards
from firmware.cards.poker3 import best3_of_batch, category3, eval3, eval3_batch
from firmware.cards.source import StackedSource
from firmware.games.registry import get_game, make_options
from firmware.games.three_card_poker import PLAY, ThreeCardPoker, parse_qualifier
from firmware.kernel.round import RoundKernel
from firmware.math.three_card_poker import (
    GROUPS,
    HANDS3,
    ante_play_par,
    ante_play_table,
    colex,
    hand_counts,
    pair_plus_par,
    par_sheet,
    six_card_par,
)

GAME = "three-card-poker"


def opts(**table):
    return make_options(GAME, table)


@pytest.fixture(scope="module")
def default_sheet():
    return par_sheet(opts())


@pytest.fixture(scope="module")
def default_table():
    return ante_play_table(opts())


@pytest.fixture(scope="module")
def four_card_table():
    return ante_play_table(opts(dealer_cards=4))


# --- published figures --------------------------------------------------------------------------
def test_default_ante_play_published_figures(default_sheet):
    """Rules "Published figures": ANTE/PLAY 5/4/1, Q-6-4: house edge 3.37% of the ante, element of
    risk 2.01%."""
    ante = default_sheet.wagers["ante"]
    assert ante.method == "exact" and isinstance(ante.house_edge, Fraction)
    assert round(float(ante.house_edge) * 100, 2) == 3.37
    assert round(float(ante.element_of_risk) * 100, 2) == 2.01
    assert default_sheet.game == GAME and default_sheet.options == opts().to_json()
    assert any("Q-6-4" in n for n in ante.notes)


def test_derived_strategy_is_q64(default_sheet, default_table):
    strategy = default_sheet.extras["strategy"]
    assert strategy["play_at_or_above"] == "Q-6-4"
    assert strategy["strongest_hand_folded"] == "Q-6-3"
    assert strategy["threshold"] is True
    assert strategy["hands_played"] + strategy["hands_folded"] == HANDS3
    assert strategy["hands_played"] == 14_900              # 67.4% of the hands
    t = default_table
    for hand, played in (("Qs 6d 4c", True), ("Qh 6h 4d", True), ("Qs 6d 3c", False),
                         ("Qc 6c 3h", False), ("2c 2d 3h", True), ("Js Td 8c", False)):
        assert bool(t.play[t.index(parse_cards(hand))]) is played, hand
    # Every Q-6-4 plays and every Q-6-3 folds, whatever the suits.
    q64 = eval3(parse_cards("Qs 6d 4c"))
    q63 = eval3(parse_cards("Qs 6d 3c"))
    assert t.play[t.strengths == q64].all() and not t.play[t.strengths == q63].any()


@pytest.mark.parametrize(
    ("table", "edge_exact", "edge_pct"),
    [
        ("40,30,6,4,1", Fraction(512, 22_100), 2.32),
        ("40,30,6,3,1", Fraction(1_608, 22_100), 7.28),
        ("35,25,6,4,1", Fraction(1_012, 22_100), 4.58),
        ("40,25,6,4,1", Fraction(772, 22_100), 3.49),
    ],
)
def test_pair_plus_published_figures(table, edge_exact, edge_pct):
    wager = pair_plus_par(opts(pair_plus_pays=table))
    assert wager.house_edge == edge_exact
    assert round(float(wager.house_edge) * 100, 2) == edge_pct
    assert wager.element_of_risk is None


def test_pair_plus_category_counts(default_sheet):
    counts = {o.name: o.count for o in default_sheet.wagers["pair_plus"].outcomes}
    assert counts == {"straight flush": 48, "three of a kind": 52, "straight": 720, "flush": 1_096,
                      "pair": 3_744, "lose": 16_440}
    assert list(hand_counts().values()) == [48, 52, 720, 1_096, 3_744, 16_440]
    assert default_sheet.extras["hand_counts"]["high card"] == 16_440


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=5, max_size=5))
def test_pair_plus_any_pay_table(pays):
    """The house edge of any table is the category counts times the pays (a 0 pay loses)."""
    wager = pair_plus_par(opts(pair_plus_pays=pays))
    counts = [48, 52, 720, 1_096, 3_744]
    net = sum(n * (p if p else -1) for n, p in zip(counts, pays, strict=True)) - 16_440
    assert wager.expected_net == Fraction(net, HANDS3)
    assert sum(o.probability for o in wager.outcomes) == 1
    assert sum(o.count for o in wager.outcomes) == HANDS3


# --- exactness of the tables --------------------------------------------------------------------
@pytest.mark.parametrize(
    "table",
    [{}, {"dealer_cards": 4}, {"not_qualified": "both_push"}, {"dealer_qualifies": "none"},
     {"dealer_qualifies": "pair"}, {"dealer_qualifies": "Q-6-4"}, {"ante_bonus_pays": "5,3,1"},
     {"ante_bonus_pays": "0,0,0"}],
    ids=lambda t: ",".join(f"{k}={v}" for k, v in t.items()) or "default",
)
def test_probabilities_sum_to_one_and_the_strategy_is_optimal(table, default_table, four_card_table):
    options = opts(**table)
    t = (default_table if not table else four_card_table if table == {"dealer_cards": 4}
         else ante_play_table(options))
    wager = ante_play_par(t)
    assert sum(o.probability for o in wager.outcomes) == 1
    assert sum(o.count for o in wager.outcomes) == HANDS3 * comb(49, options.dealer_cards)
    assert (t.counts.sum(axis=1) == t.dealer_hands).all() and (t.counts >= 0).all()
    # The derived strategy takes the better of play and fold for every hand, so the wager's
    # expected net is the mean of those maxima.
    best = np.maximum(t.ev_play, t.fold_net * t.dealer_hands)
    assert wager.expected_net == Fraction(int(best.sum()), HANDS3 * t.dealer_hands)
    assert all(o.stake == (1 if o.name == "fold" else 2) for o in wager.outcomes)


def test_all_sheets_sum_to_one_and_serialise(default_sheet):
    for wager in default_sheet.wagers.values():
        assert sum(o.probability for o in wager.outcomes) == 1
        assert all(isinstance(o.probability, Fraction) for o in wager.outcomes)
    doc = json.loads(json.dumps(default_sheet.to_json()))
    assert doc["method"] == "exact" and doc["wagers"]["ante"]["element_of_risk"] > 0
    assert doc["strategy"]["play_at_or_above"] == "Q-6-4"


def _brute_counts(options, cards: list[int]) -> list[int]:
    """Dealer hands from the other 49 cards by group, by direct evaluation of every one."""
    rest = [c for c in range(52) if c not in cards]
    dealer = np.array(list(combinations(rest, options.dealer_cards)))
    ds = eval3_batch(dealer) if options.dealer_cards == 3 else best3_of_batch(dealer)
    s, q = eval3(cards), parse_qualifier(options.dealer_qualifies)[1]
    qual = ds >= q
    return [int((~qual).sum()), int((qual & (ds < s)).sum()), int((qual & (ds == s)).sum()),
            int((qual & (ds > s)).sum())]


@pytest.mark.parametrize("qualifier", ["Q", "none", "pair", "Q-6-4", "K"])
@pytest.mark.parametrize("dealer_cards", [3, 4])
def test_inclusion_exclusion_counts_match_direct_enumeration(qualifier, dealer_cards, default_table,
                                                             four_card_table):
    options = opts(dealer_qualifies=qualifier, dealer_cards=dealer_cards)
    t = ((default_table if dealer_cards == 3 else four_card_table) if qualifier == "Q"
         else ante_play_table(options))
    rng = random.Random(f"{qualifier}{dealer_cards}")
    picks = [parse_cards("Qs 6d 4c"), parse_cards("As Ks Qs"), parse_cards("2c 2d 2h")]
    picks += [rng.sample(range(52), 3) for _ in range(2)]
    for cards in picks:
        assert t.counts[t.index(cards)].tolist() == _brute_counts(options, cards), cards


def _settle_play(game: ThreeCardPoker, options, player: list[int], dealer: tuple[int, ...]) -> int:
    """ANTE + PLAY net of a 1-credit ante that plays, through the game's deal, showdown, settle."""
    state = game.new_round(options, {1: {"ante": 1}})
    order = [player[0], dealer[0], player[1], dealer[1], player[2], dealer[2], *dealer[3:]]
    game.deal(state, StackedSource(order))
    game.decide(state, 1, PLAY)
    game.showdown(state, None)
    results = game.settle(state).results[1]
    return results["ante"].net + results["play"].net


@pytest.mark.parametrize(
    ("hand", "table"),
    [("Qs 6d 4c", {}), ("Qh 6h 3d", {}), ("9c Td Jh", {}), ("Kd Kh 5s", {}),
     ("Qs 6d 4c", {"not_qualified": "both_push"}), ("7s 5s 2s", {"dealer_qualifies": "pair"})],
)
def test_ev_play_by_brute_force_through_settle(hand, table, default_table):
    """EV(play) of a few hands, looping over all 18,424 dealer hands through the real game."""
    options = opts(**table)
    t = default_table if not table else ante_play_table(options)
    game: ThreeCardPoker = get_game(GAME)
    player = parse_cards(hand)
    rest = [c for c in range(52) if c not in player]
    total = sum(_settle_play(game, options, player, d) for d in combinations(rest, 3))
    i = t.index(player)
    assert t.ev(i)[0] == Fraction(total, 18_424)
    assert t.ev(i)[1] == -1


def test_ev_play_with_four_dealer_cards_by_brute_force(four_card_table):
    """One hand against all 211,876 four-card dealer hands (best three by the batch evaluator, the
    net through settle() per dealer strength)."""
    options = opts(dealer_cards=4)
    game: ThreeCardPoker = get_game(GAME)
    player = parse_cards("Ks Qd 4c")
    rest = [c for c in range(52) if c not in player]
    dealer = np.array(list(combinations(rest, 4)))
    strengths, n = np.unique(best3_of_batch(dealer), return_counts=True)
    total = 0
    for s, count in zip(strengths.tolist(), n.tolist(), strict=True):
        state = game.new_round(options, {1: {"ante": 1}})
        state.seats[0].strength = eval3(player)
        game.decide(state, 1, PLAY)
        state.dealer_strength = s
        state.qualified = s >= parse_qualifier(options.dealer_qualifies)[1]
        r = game.settle(state).results[1]
        total += count * (r["ante"].net + r["play"].net)
    t = four_card_table
    assert t.ev(t.index(player))[0] == Fraction(total, comb(49, 4))


# --- rule variations ----------------------------------------------------------------------------
def test_four_dealer_cards_and_both_push_lower_the_players_return(default_sheet, four_card_table):
    base = default_sheet.wagers["ante"].rtp
    four = ante_play_par(four_card_table).rtp
    both_push = par_sheet(opts(not_qualified="both_push")).wagers["ante"].rtp
    assert four < base and both_push < base
    # The stronger dealer makes the player fold more.
    assert int(four_card_table.play.sum()) < 14_900


@pytest.mark.parametrize(("bonus", "better"), [("5,3,1", False), ("0,0,0", False), ("10,5,2", True)])
def test_ante_bonus_table_moves_the_return(bonus, better, default_sheet):
    rtp = par_sheet(opts(ante_bonus_pays=bonus)).wagers["ante"].rtp
    assert (rtp > default_sheet.wagers["ante"].rtp) is better


def test_player_banking_same_figures_with_the_commission():
    house = par_sheet(opts())
    for commission, fee in (({"mode": "flat", "amount": "1"}, 1),
                            ({"mode": "percent", "amount": "5"}, 1),
                            ({"mode": "percent", "amount": "12.5"}, 3)):
        sheet = par_sheet(opts(banking="player", banker_seat=7, commission=commission), unit=20)
        for name in ("ante", "pair_plus"):
            assert sheet.wagers[name].outcomes == house.wagers[name].outcomes
            assert any("banking = player" in n for n in sheet.wagers[name].notes)
        extra = sheet.extras["commission"]
        assert extra["fee"] == fee and extra["unit"] == 20 and extra["fee_per_unit"] == Fraction(fee, 20)
        json.dumps(sheet.to_json())
    assert "commission" not in house.extras
    with pytest.raises(ValueError, match="unit"):
        par_sheet(opts(), unit=0)


def test_six_card_bonus_exact():
    wager = six_card_par(opts(six_card=True))
    total = comb(52, 3) * comb(49, 3)
    assert sum(o.probability for o in wager.outcomes) == 1
    assert sum(o.count for o in wager.outcomes) == total
    counts = {o.name: o.count for o in wager.outcomes}
    # Closed forms over 6-card sets, 20 ordered deals each.
    assert counts["royal flush"] == 4 * 47 * 20
    assert counts["straight flush"] == 4 * 9 * 46 * 20
    assert counts["four of a kind"] == 13 * comb(48, 2) * 20
    assert round(float(wager.house_edge) * 100, 2) == 8.56


def test_colex():
    assert [tuple(r) for r in colex(3, 6).tolist()] == sorted(combinations(range(6), 3),
                                                               key=lambda r: r[::-1])
    assert len(colex(4, 52)) == comb(52, 4)


# --- against rounds played by the round kernel --------------------------------------------------
@pytest.mark.parametrize("table", [{}, {"dealer_cards": 4}, {"not_qualified": "both_push"}])
def test_kernel_rounds_match_the_tables_classification(table, default_table, four_card_table):
    """Stacked decks through RoundKernel: the derived decision, and the ANTE + PLAY result and stake
    of each round equal the line the table files that deal under."""
    options = opts(**table)
    t = (default_table if not table else four_card_table if "dealer_cards" in table
         else ante_play_table(options))
    wager = ante_play_par(t)
    lines = {o.name: o for o in wager.outcomes}
    pp = {o.name: o.net for o in pair_plus_par(options).outcomes}
    game = get_game(GAME)
    kernel = RoundKernel(game, options)
    rng = random.Random(str(table))
    seen: set[str] = set()
    for _ in range(300):
        deck = rng.sample(range(52), 52)
        player, dealer = deck[0:5:2], deck[1:6:2] + deck[6:6 + options.dealer_cards - 3]
        name, net, stake = t.outcome(player, dealer)
        kernel.begin({1: {"ante": 10, "pair_plus": 10}}, StackedSource(deck))
        kernel.decide(1, "play" if stake == 2 else "fold")
        record = kernel.record()
        seat = record["seats"][0]
        got = sum(seat["results"][w]["net"] for w in ("ante", "play") if w in seat["results"])
        assert got == 10 * net, (name, seat)
        assert seat["stakes"]["ante"] + seat["stakes"].get("play", 0) == 10 * stake
        assert lines[name].net == net
        category = category3(eval3(player)).name.lower().replace("_", " ")
        assert seat["results"]["pair_plus"]["net"] == 10 * pp.get(category, pp["lose"]), seat
        seen.add(name)
    assert {"fold", GROUPS[1], GROUPS[3], GROUPS[0]} <= seen
