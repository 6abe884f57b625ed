"""The exact Split 21 Stud PAR sheet (firmware/math/split21_stud.py; docs/math/split21-stud.md):
the house way as a function of values, the poker classes against the standard counts and a direct
pair count, the jackpot's shares as the game settles them, and the real kernel."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction
from itertools import combinations, product
from math import comb

import pytest

from firmware.cards.card import BLACKJACK_VALUE, Card
from firmware.cards.poker5 import HandCategory, category
from firmware.games.registry import make_options
from firmware.games.split21_stud_house_way import house_way
from firmware.math import split21_stud
from firmware.math.par import ParError, par_sheet
from tests.math.agreement import assert_simulation_agrees


def test_house_way_ranks_depend_only_on_the_values():
    """2,000 real hands: the house way's ranks are those of the hand's value multiset."""
    table = {counts: (h, lo) for counts, h, lo in split21_stud.hand_ranks()}
    rng = random.Random(21)
    for _ in range(2000):
        cards = [Card(c) for c in rng.sample(range(52), 5)]
        values = Counter(BLACKJACK_VALUE[c] for c in cards)
        counts = tuple(values[v] for v in split21_stud.VALUES)
        split = house_way(cards)
        assert table[counts] == (split.high_rank, split.low_rank)


def test_poker_classes_hold_the_standard_category_counts():
    by_category: Counter[HandCategory] = Counter()
    for strength, hands, _pairs in split21_stud._poker_classes().values():
        by_category[category(strength)] += hands
    assert by_category == {
        HandCategory.STRAIGHT_FLUSH: 40, HandCategory.FOUR_OF_A_KIND: 624,
        HandCategory.FULL_HOUSE: 3744, HandCategory.FLUSH: 5108, HandCategory.STRAIGHT: 10200,
        HandCategory.THREE_OF_A_KIND: 54912, HandCategory.TWO_PAIR: 123552,
        HandCategory.PAIR: 1098240, HandCategory.HIGH_CARD: 1302540,
    }


@pytest.mark.parametrize("ranks", [(2, 5, 7, 9, 13), (10, 11, 12, 13, 14), (3, 3, 8, 11, 14),
                                   (4, 4, 9, 9, 12), (6, 6, 6, 6, 2), (7, 7, 7, 5, 5)])
def test_tied_pairs_of_a_class_equal_a_direct_count(ranks):
    """Every hand of the rank multiset, grouped by eval5 strength; disjoint ordered pairs counted."""
    from firmware.cards.poker5 import eval5

    per_rank = [combinations([4 * (r - 2) + s for s in range(4)], k) for r, k in Counter(ranks).items()]
    hands = [sum(parts, ()) for parts in product(*per_rank)]
    by_strength: dict[int, list[int]] = {}
    for h in hands:
        by_strength.setdefault(eval5(h), []).append(sum(1 << c for c in h))
    classes = split21_stud._poker_classes()
    key = tuple(sorted(ranks))
    for strength, masks in by_strength.items():
        direct = sum(1 for a in masks for b in masks if not a & b)
        entry = next(v for k, v in classes.items() if k[0] == key and v[0] == strength)
        assert entry[1:] == (len(masks), direct)


def test_sheet_is_exact_adds_up_and_is_symmetric_where_the_game_is():
    sheet = par_sheet("split21-stud", make_options("split21-stud", {}), method="exact")
    assert sheet.to_json()["method"] == "exact"
    for w in sheet.wagers.values():
        assert sum(o.probability for o in w.outcomes) == 1, w.name
        assert all(isinstance(o.probability, Fraction) for o in w.outcomes)
    assert sheet.wagers["ante"].rtp == 1
    assert sheet.wagers["high"].rtp == 1          # a two-card hand never busts: HIGH never busts
    assert sheet.wagers["low"].rtp < 1            # a busted LOW loses to a busted dealer LOW
    push = next(o for o in sheet.wagers["ante"].outcomes if o.name == "push")
    assert push.count == split21_stud.poker_tie_count()
    assert sum(o.count for o in sheet.wagers["low"].outcomes) == comb(52, 5) * comb(47, 5)


def test_jackpot_pays_as_share_jackpot_settles():
    opts = make_options("split21-stud", {"jackpot": {"house_ante": 5, "commission": 10}})
    lines = {o.name: o for o in split21_stud.par_sheet(opts, unit=10).wagers["jackpot"].outcomes}
    # pot 15, payable floor(13.5) = 13; a tie shares 13 pro rata 10:5 -> floor(130 / 15) = 8
    assert lines["win"].net == Fraction(3, 10)
    assert lines["tie (pot shared)"].net == Fraction(-2, 10)
    assert lines["lose"].net == -1


def test_player_banking_is_left_to_monte_carlo():
    opts = make_options("split21-stud", {"banking": "player"})
    with pytest.raises(ParError):
        par_sheet("split21-stud", opts, method="exact", seats=2)


def test_egm_simulate_lands_inside_its_interval_around_the_exact_figures():
    """The real kernel, 20,000 seeded rounds, every wager's return within 99.9% of the exact one."""
    opts = make_options("split21-stud", {"jackpot": {"house_ante": 10}, "low_pays": "3:2"})
    exact = split21_stud.par_sheet(opts)
    assert_simulation_agrees("split21-stud", opts, exact, 20_000, "verify:s21")
