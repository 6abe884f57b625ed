"""Three-card poker: all 22,100 hands against pokerkit's Rhode Island hold'em lookup, the class
counts of the rules file, the 4-card dealer option and the batch forms."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, pairwise

import numpy as np
import pytest

from firmware.cards.card import RANK_CHARS, SUIT_CHARS, parse_cards
from firmware.cards.poker3 import (
    ThreeCardCategory,
    best3_of,
    best3_of_batch,
    category3,
    describe3,
    eval3,
    eval3_batch,
    strength3,
)

TC = ThreeCardCategory
ALL_HANDS = list(combinations(range(52), 3))


def test_counts_of_the_rules_file() -> None:
    counts = Counter(category3(eval3(h)) for h in ALL_HANDS)
    assert len(ALL_HANDS) == 22_100
    assert counts == {TC.STRAIGHT_FLUSH: 48, TC.THREE_OF_A_KIND: 52, TC.STRAIGHT: 720,
                      TC.FLUSH: 1_096, TC.PAIR: 3_744, TC.HIGH_CARD: 16_440}


def test_every_hand_agrees_with_pokerkit() -> None:
    """pokerkit's Rhode Island hold'em ranks three cards in the same order (straight above flush,
    trips above straight, A-2-3 the lowest straight): its entry index, higher is stronger, must be
    a strictly increasing bijection of our strength."""
    lookups = pytest.importorskip("pokerkit.lookups")
    utilities = pytest.importorskip("pokerkit.utilities")
    lookup = lookups.RhodeIslandHoldemLookup()
    pk_cards = [next(iter(utilities.Card.parse(RANK_CHARS[i // 4] + SUIT_CHARS[i % 4])))
                for i in range(52)]
    theirs = [lookup.get_entry([pk_cards[c] for c in h]).index for h in ALL_HANDS]
    ours = [eval3(h) for h in ALL_HANDS]
    pairs = sorted(set(zip(theirs, ours, strict=True)))
    assert len({t for t, _ in pairs}) == len({s for _, s in pairs}) == len(pairs)
    assert all(a[1] < b[1] for a, b in pairwise(pairs))
    assert len(pairs) == 741  # distinct three-card classes
    labels = {"Straight flush": TC.STRAIGHT_FLUSH, "Three of a kind": TC.THREE_OF_A_KIND,
              "Straight": TC.STRAIGHT, "Flush": TC.FLUSH, "One pair": TC.PAIR,
              "High card": TC.HIGH_CARD}
    for h in ALL_HANDS[::97]:
        entry = lookup.get_entry([pk_cards[c] for c in h])
        assert category3(eval3(h)) is labels[str(entry.label)]


def test_batch_matches_scalar() -> None:
    assert eval3_batch(np.array(ALL_HANDS, dtype=np.int8)).tolist() == [eval3(h) for h in ALL_HANDS]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("Qs Ks As", "3h 2h Ah"),     # straight flushes: A-K-Q highest, 3-2-A lowest
        ("3h 2h Ah", "Ac Ad Ah"),     # any straight flush beats trips
        ("2c 2d 2h", "As Kd Qc"),     # trips beat a straight
        ("3s 2d Ah", "Ks 9s 4s"),     # the lowest straight beats a flush
        ("5c 3c 2c", "As Ad Kc"),     # any flush beats a pair
        ("2s 2d 3c", "As Kd Jc"),     # any pair beats high card
        ("As Ad 3c", "Ks Kd Qc"),     # pair rank first
        ("Ks Kd Qc", "Ks Kd Jc"),     # then the kicker
        ("As Kd 2c", "As Qd Jc"),     # high card compares card by card, ace high
        ("As Kd 3c", "Ks Ad 2c"),     # K-A-2 is no straight: A-K-3 beats it as high card
    ],
)
def test_order(better: str, worse: str) -> None:
    assert eval3(parse_cards(better)) > eval3(parse_cards(worse))


def test_no_wrap_around_and_ties() -> None:
    assert category3(eval3(parse_cards("Ks Ad 2c"))) is TC.HIGH_CARD
    assert category3(eval3(parse_cards("Qd Kd Ad"))) is TC.STRAIGHT_FLUSH
    assert category3(eval3(parse_cards("2s 3d Ah"))) is TC.STRAIGHT
    assert eval3(parse_cards("As Kd 2c")) == eval3(parse_cards("Ah Ks 2d"))  # a tie
    assert eval3(parse_cards("9s 8s 7s")) == eval3(parse_cards("9h 8h 7h"))


def test_queen_high_threshold() -> None:
    qualify = strength3(TC.HIGH_CARD, 12)
    assert eval3(parse_cards("Qs 3d 2c")) > qualify > eval3(parse_cards("Js Td 8c"))
    q64 = strength3(TC.HIGH_CARD, 12, 6, 4)
    assert eval3(parse_cards("Qs 6d 4c")) == q64
    assert eval3(parse_cards("Qs 6d 3c")) < q64 < eval3(parse_cards("Qs 6d 5c"))
    with pytest.raises(ValueError):
        strength3(TC.PAIR, 15)


def test_best3_of_four() -> None:
    rng = np.random.default_rng(3)
    hands4 = [tuple(int(x) for x in rng.choice(52, 4, replace=False)) for _ in range(3_000)]
    for h in hands4:
        assert best3_of(h) == max(eval3(c) for c in combinations(h, 3))
    assert best3_of_batch(np.array(hands4)).tolist() == [best3_of(h) for h in hands4]
    assert best3_of(parse_cards("As Kd Qc")) == eval3(parse_cards("As Kd Qc"))
    with pytest.raises(ValueError):
        best3_of(parse_cards("As Kd"))


@pytest.mark.parametrize(
    ("cards", "name"),
    [("Qs Ks As", "Straight Flush, Ace high"), ("7c 7d 7h", "Three of a Kind, Sevens"),
     ("3s 2d Ah", "Straight, Three high"), ("Kh 9h 4h", "Flush, King high"),
     ("Qs Qd 3c", "Pair of Queens"), ("Qs 6d 4c", "High Card, Queen")],
)
def test_describe(cards: str, name: str) -> None:
    assert describe3(eval3(parse_cards(cards))) == name


def test_wrong_inputs() -> None:
    with pytest.raises(ValueError):
        eval3([1, 2])
    with pytest.raises(ValueError):
        eval3_batch(np.zeros((2, 4), dtype=int))
    with pytest.raises(ValueError):
        eval3_batch(np.full((2, 3), -1))


def test_strength3_without_deciding_ranks_is_the_bottom_of_its_category():
    from firmware.cards.poker3 import ThreeCardCategory, strength3

    assert strength3(ThreeCardCategory.PAIR) == strength3(ThreeCardCategory.PAIR, 0, 0, 0)
    assert strength3(ThreeCardCategory.PAIR) > strength3(ThreeCardCategory.HIGH_CARD, 14, 13, 12)
