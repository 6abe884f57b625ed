"""Three Card Poker against the seed patent (US 6,698,759) and the rules file's published figures,
enumerated through the game's own ranking, pay functions and settlement."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest

from firmware.cards.card import Card, parse_cards
from firmware.cards.poker3 import ThreeCardCategory, category3
from firmware.games.registry import get_game, make_options
from firmware.games.three_card_poker import (
    Q64,
    ThreeCardPoker,
    hand_strength,
    optimal_action,
    pair_plus_result,
    parse_qualifier,
)

TC = ThreeCardCategory
ALL_HANDS = list(combinations(range(52), 3))
GAME = "three-card-poker"


@pytest.fixture(scope="module")
def strengths() -> list[int]:
    return [hand_strength(h) for h in ALL_HANDS]


def _ranks(cards) -> list[int]:
    return sorted((Card(c).rank for c in cards), reverse=True)


def test_patent_hand_order_col_7(strengths):
    """Seed col. 7, "one preferred three card version": BRAG (AKQ highest ... 32A lowest) > TRIPS
    (AAA ... 222) > RUN (AKQ ... 32A) > FLUSH (AKJ highest ... 532 lowest) > PAIR (AAK ... 223) >
    HIGH CARD (AKJ ... 532); "Ace is high, but can be low in 3-2-A Sequence"."""
    patent = [  # (category, best hand's ranks, worst hand's ranks), highest class first
        (TC.STRAIGHT_FLUSH, [14, 13, 12], [14, 3, 2]),
        (TC.THREE_OF_A_KIND, [14, 14, 14], [2, 2, 2]),
        (TC.STRAIGHT, [14, 13, 12], [14, 3, 2]),
        (TC.FLUSH, [14, 13, 11], [5, 3, 2]),
        (TC.PAIR, [14, 14, 13], [3, 2, 2]),
        (TC.HIGH_CARD, [14, 13, 11], [5, 3, 2]),
    ]
    by_cat: dict[TC, list[tuple[int, tuple[int, ...]]]] = {}
    for hand, s in zip(ALL_HANDS, strengths, strict=True):
        by_cat.setdefault(category3(s), []).append((s, hand))
    previous_low = None
    for cat, best, worst in patent:
        hi, lo = max(by_cat[cat]), min(by_cat[cat])
        assert _ranks(hi[1]) == best and _ranks(lo[1]) == worst, cat
        if previous_low is not None:
            assert hi[0] < previous_low            # every hand of a class beats every hand below
        previous_low = lo[0]
    # The named neighbours of col. 7, in order: KQJ brag, QJ10 brag; KKK; KQJ run; AK10 flush;
    # AAQ pair; AK10 high card.
    chain = ["As Ks Qs", "Kh Qh Jh", "Qd Jd Td", "3c 2c Ac", "Ah Ad Ac", "Kc Kd Kh", "2c 2d 2h",
             "As Kd Qc", "Ks Qd Jc", "3h 2d As", "Ah Kh Jh", "Ad Kd Td", "5c 3c 2c", "As Ad Kc",
             "Ah Ac Qd", "3d 2h 2s", "As Kd Jc", "Ad Kh Tc", "5s 3d 2h"]
    values = [hand_strength(parse_cards(h)) for h in chain]
    assert values == sorted(values, reverse=True) and len(set(values)) == len(values)
    assert category3(hand_strength(parse_cards("Ks Ad 2c"))) is TC.HIGH_CARD   # no K-A-2 run


def test_22100_hand_category_counts(strengths):
    """Rules "Hand ranking": 48 straight flush, 52 trips, 720 straights, 1,096 flushes, 3,744 pairs,
    16,440 high card."""
    counts = Counter(category3(s) for s in strengths)
    assert len(strengths) == 22_100
    assert counts == {TC.STRAIGHT_FLUSH: 48, TC.THREE_OF_A_KIND: 52, TC.STRAIGHT: 720,
                      TC.FLUSH: 1_096, TC.PAIR: 3_744, TC.HIGH_CARD: 16_440}


def test_default_pay_scale_is_the_patents():
    """Seed col. 3 table and col. 7 scale: straight flush 40:1, three of a kind 30:1, straight 6:1,
    flush 4:1, pair 1:1; the ranges of col. 7 (25-100, 10-50, 4-12, 3-12, 1-3) hold."""
    pays = make_options(GAME, {}).pair_plus_pays
    table = [pays.straight_flush, pays.three_of_a_kind, pays.straight, pays.flush, pays.pair]
    assert table == [40, 30, 6, 4, 1]
    ranges = [(25, 100), (10, 50), (4, 12), (3, 12), (1, 3)]
    assert all(lo <= p <= hi for p, (lo, hi) in zip(table, ranges, strict=True))


@pytest.mark.parametrize(
    ("table", "edge_exact", "edge_pct"),
    [
        ("40,30,6,4,1", Fraction(512, 22_100), 2.32),
        ("40,30,6,3,1", Fraction(1_608, 22_100), 7.28),
        ("35,25,6,4,1", Fraction(1_012, 22_100), 4.58),
        ("40,25,6,4,1", Fraction(772, 22_100), 3.49),
    ],
)
def test_pair_plus_house_edge_exact(strengths, table, edge_exact, edge_pct):
    """Every one of the 22,100 hands through the game's own PAIR PLUS pay function (rules
    "Published figures")."""
    options = make_options(GAME, {"pair_plus_pays": table})
    net = sum(pair_plus_result(options, s, 1).net for s in strengths)
    edge = Fraction(-net, len(strengths))
    assert edge == edge_exact
    assert round(float(edge) * 100, 2) == edge_pct


def _dealer_counts(strengths: list[int], qualify: int) -> np.ndarray:
    """For every player hand, how many of the 18,424 dealer hands from the other 49 cards are
    [not qualified, qualified and lower, qualified and equal, qualified and higher].

    Inclusion-exclusion over the player's cards: hands of the whole deck, minus those holding each
    of its cards, plus those holding each two of them, minus the hand itself."""
    s_all = np.array(strengths, dtype=np.int64)
    hands = np.array(ALL_HANDS, dtype=np.int64)
    big = 1 << 16
    by_card: list[list[int]] = [[] for _ in range(52)]
    pair_id = {p: i for i, p in enumerate(combinations(range(52), 2))}
    by_pair: list[list[int]] = [[] for _ in pair_id]
    for (a, b, c), s in zip(ALL_HANDS, strengths, strict=True):
        for x in (a, b, c):
            by_card[x].append(s)
        for p in ((a, b), (a, c), (b, c)):
            by_pair[pair_id[p]].append(s)
    card_rows = np.sort(np.array(by_card, dtype=np.int64), axis=1)             # 52 x 1275
    pair_rows = np.sort(np.array(by_pair, dtype=np.int64), axis=1)             # 1326 x 50
    card_flat = (card_rows + big * np.arange(52)[:, None]).ravel()
    pair_flat = (pair_rows + big * np.arange(len(pair_id))[:, None]).ravel()
    sorted_all = np.sort(s_all)
    pairs = np.array([[pair_id[(a, b)], pair_id[(a, c)], pair_id[(b, c)]] for a, b, c in ALL_HANDS])

    def below(t: np.ndarray) -> np.ndarray:
        n = np.searchsorted(sorted_all, t)
        for k in range(3):
            x = hands[:, k]
            n -= np.searchsorted(card_flat, t + big * x) - 1275 * x
            p = pairs[:, k]
            n += np.searchsorted(pair_flat, t + big * p) - 50 * p
        return n - (s_all < t)

    q = np.full_like(s_all, qualify)
    nq = below(q)
    lt = below(s_all)
    le = below(s_all + 1)
    lower = np.maximum(lt - nq, 0)
    equal = np.where(s_all >= q, le - lt, 0)
    higher = 18_424 - below(np.maximum(s_all + 1, q))
    out = np.stack([nq, lower, equal, higher], axis=1)
    assert (out.sum(axis=1) == 18_424).all()
    return out


def test_ante_play_house_edge_and_element_of_risk_exact(strengths):
    """Rules "Published figures": ANTE/PLAY with ante bonus 5/4/1 and the Q-6-4 strategy: house
    edge 3.37% of the ante, element of risk 2.01%. Every (player hand, dealer hand) pair of one
    deck, weighted by card removal, settled by the game's own decision strategy and settlement."""
    game: ThreeCardPoker = get_game(GAME)
    options = make_options(GAME, {})
    qualify = parse_qualifier(options.dealer_qualifies)[1]
    counts = _dealer_counts(strengths, qualify)

    def settle(s: int, group: int) -> tuple[int, int]:
        """(net, total staked) of a 1-credit ante on a hand of strength ``s`` in a dealer group."""
        state = game.new_round(options, {1: {"ante": 1}})
        state.seats[0].strength = s
        request = game.pending_decisions(state)[0]
        game.decide(state, 1, game.automatic_decision(state, request))
        state.qualified = group != 0
        state.dealer_strength = {0: 0, 1: s - 1, 2: s, 3: s + 1}[group]
        result = game.settle(state)
        return result.players_net, sum(result.stakes[1].values())

    memo: dict[tuple[int, int], tuple[int, int]] = {}
    net = staked = 0
    for s, row in zip(strengths, counts.tolist(), strict=True):
        for group, n in enumerate(row):
            if n:
                if (s, group) not in memo:
                    memo[(s, group)] = settle(s, group)
                r_net, r_staked = memo[(s, group)]
                net += n * r_net
                staked += n * r_staked
    deals = 22_100 * 18_424
    edge = Fraction(-net, deals)
    risk = Fraction(-net, staked)
    assert round(float(edge) * 100, 2) == 3.37
    assert round(float(risk) * 100, 2) == 2.01
    # The strategy plays exactly the hands from Q-6-4 up: 67.4% of them.
    played = sum(optimal_action(s) == "play" for s in strengths)
    assert played == sum(s >= Q64 for s in strengths) and round(played / 22_100, 3) == 0.674
