"""5-card poker: every 5-card hand against treys, eval7 against 21 x eval5 and against treys and
pokerkit, multi-deck hands against a reference classifier written here from the module's rules."""

from __future__ import annotations

import random
from collections import Counter
from itertools import chain, combinations, pairwise

import numpy as np
import pytest

from firmware.cards.card import RANK_CHARS, SUIT_CHARS, parse_cards
from firmware.cards.poker5 import (
    HandCategory,
    best5,
    best5_batch,
    category,
    category_batch,
    describe,
    eval5,
    eval5_batch,
    eval7,
    eval7_batch,
    tiebreak_ranks,
)

HC = HandCategory
N_HANDS = 2_598_960

#: Standard category counts over all 5-card hands of one deck.
CATEGORY_COUNTS = {
    HC.STRAIGHT_FLUSH: 40, HC.FOUR_OF_A_KIND: 624, HC.FULL_HOUSE: 3_744, HC.FLUSH: 5_108,
    HC.STRAIGHT: 10_200, HC.THREE_OF_A_KIND: 54_912, HC.TWO_PAIR: 123_552, HC.PAIR: 1_098_240,
    HC.HIGH_CARD: 1_302_540,
}
#: Distinct classes per category over one deck (7,462 in all).
CATEGORY_CLASSES = {
    HC.STRAIGHT_FLUSH: 10, HC.FOUR_OF_A_KIND: 156, HC.FULL_HOUSE: 156, HC.FLUSH: 1_277,
    HC.STRAIGHT: 10, HC.THREE_OF_A_KIND: 858, HC.TWO_PAIR: 858, HC.PAIR: 2_860,
    HC.HIGH_CARD: 1_277,
}


def _text(i: int) -> str:
    return RANK_CHARS[i // 4] + SUIT_CHARS[i % 4]


def _all_five_card_hands() -> np.ndarray:
    flat = np.fromiter(chain.from_iterable(combinations(range(52), 5)), dtype=np.int8,
                       count=5 * N_HANDS)
    return flat.reshape(N_HANDS, 5)


# --- reference classifier (independent of the module's tables) --------------------------------
def reference5(cards: list[int]) -> tuple[HandCategory, tuple[int, ...]]:
    """Category and deciding ranks of five cards, from the module docstring's rules, the slow way."""
    ranks = sorted((c // 4 + 2 for c in cards), reverse=True)
    suited = len({c % 4 for c in cards}) == 1
    counts = Counter(ranks)
    by_count = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    distinct = sorted(counts, reverse=True)
    straight = 0
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            straight = distinct[0]
        elif distinct == [14, 5, 4, 3, 2]:
            straight = 5
    if shape == [5]:
        return HC.FIVE_OF_A_KIND, (ranks[0],)
    if straight and suited:
        return HC.STRAIGHT_FLUSH, (straight,)
    if shape[0] == 4:
        return HC.FOUR_OF_A_KIND, tuple(by_count)
    if shape == [3, 2]:
        return HC.FULL_HOUSE, tuple(by_count)
    if suited:
        return HC.FLUSH, tuple(ranks)
    if straight:
        return HC.STRAIGHT, (straight,)
    if shape == [3, 1, 1]:
        return HC.THREE_OF_A_KIND, tuple(by_count)
    if shape == [2, 2, 1]:
        return HC.TWO_PAIR, tuple(by_count)
    if shape == [2, 1, 1, 1]:
        return HC.PAIR, tuple(by_count)
    return HC.HIGH_CARD, tuple(ranks)


# --- the full enumeration against treys -------------------------------------------------------
@pytest.mark.slow
def test_every_five_card_hand_agrees_with_treys() -> None:
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    five = evaluator._five  # the 5-card evaluation itself, no list building per hand
    tcards = [treys.Card.new(_text(i)) for i in range(52)]
    theirs = np.fromiter((five(h) for h in combinations(tcards, 5)), dtype=np.int64, count=N_HANDS)

    hands = _all_five_card_hands()
    ours = eval5_batch(hands).astype(np.int64)

    # Same partition into classes, and the order reversed (treys: 1 = royal flush, lower is better).
    assert ours.min() > 0 and ours.max() < 1 << 24
    pairs = np.unique(theirs << 24 | ours)
    their_classes, our_classes = pairs >> 24, pairs & ((1 << 24) - 1)
    assert len(pairs) == 7_462
    assert len(np.unique(their_classes)) == 7_462 and len(np.unique(our_classes)) == 7_462
    assert their_classes.tolist() == list(range(1, 7_463))
    assert (np.diff(our_classes) < 0).all()  # strictly decreasing: a bijection reversing the order

    # Categories: treys' rank classes 0 (royal flush), 1 (straight flush) .. 9 (high card).
    cats = category_batch(ours)
    assert {HC(c): n for c, n in zip(*np.unique(cats, return_counts=True), strict=True)} == CATEGORY_COUNTS
    their_cats = np.maximum([evaluator.get_rank_class(int(t)) for t in their_classes], 1)
    assert (category_batch(our_classes) == 10 - their_cats).all()
    assert Counter(category(int(s)) for s in our_classes) == CATEGORY_CLASSES

    # The scalar evaluator gives the very same numbers on every hand.
    scalar = np.fromiter((eval5(h) for h in combinations(range(52), 5)), dtype=np.int64,
                         count=N_HANDS)
    assert np.array_equal(scalar, ours)


def test_classes_on_a_sample_agree_with_treys() -> None:
    """A fast subset of the full test: 20,000 random hands, pairwise order against treys."""
    treys = pytest.importorskip("treys")
    evaluator = treys.Evaluator()
    tcards = [treys.Card.new(_text(i)) for i in range(52)]
    rng = random.Random(5)
    hands = [rng.sample(range(52), 5) for _ in range(20_000)]
    ours = [eval5(h) for h in hands]
    theirs = [evaluator.evaluate([tcards[c] for c in h[:2]], [tcards[c] for c in h[2:]]) for h in hands]
    mapping: dict[int, int] = {}
    for t, s in zip(theirs, ours, strict=True):
        assert mapping.setdefault(t, s) == s
    ordered = [mapping[t] for t in sorted(mapping)]
    assert all(a > b for a, b in pairwise(ordered))


# --- best five of seven ---------------------------------------------------------------------------
def test_eval7_is_the_best_of_21_on_random_hands() -> None:
    rng = random.Random(7)
    hands = [rng.sample(range(52), 7) for _ in range(50_000)]
    for h in hands:
        assert eval7(h) == max(eval5(c) for c in combinations(h, 5)), h
    assert eval7_batch(np.array(hands)).tolist() == [eval7(h) for h in hands]


def test_eval7_flush_heavy_hands() -> None:
    """Hands with five, six or seven cards of one suit (rare in random deals) against 21 x eval5."""
    rng = random.Random(71)
    hands = []
    for _ in range(5_000):
        suit = rng.randrange(4)
        n = rng.choice((5, 6, 7))
        same = rng.sample([r * 4 + suit for r in range(13)], n)
        rest = rng.sample([c for c in range(52) if c % 4 != suit], 7 - n)
        hands.append(same + rest)
    for h in hands:
        assert eval7(h) == max(eval5(c) for c in combinations(h, 5)), h
    assert eval7_batch(np.array(hands)).tolist() == [eval7(h) for h in hands]


def test_eval7_agrees_with_treys_and_pokerkit() -> None:
    treys = pytest.importorskip("treys")
    pokerkit = pytest.importorskip("pokerkit")
    evaluator = treys.Evaluator()
    tcards = [treys.Card.new(_text(i)) for i in range(52)]
    rng = random.Random(77)
    hands = [rng.sample(range(52), 7) for _ in range(5_000)]
    ours = [eval7(h) for h in hands]
    theirs = [evaluator.evaluate([tcards[c] for c in h[:2]], [tcards[c] for c in h[2:]]) for h in hands]
    for i in range(0, len(hands) - 1):  # consecutive pairs: same verdict (win, tie, lose)
        a, b = ours[i], ours[i + 1]
        ta, tb = theirs[i], theirs[i + 1]
        assert (a > b) - (a < b) == (tb > ta) - (tb < ta)
    # pokerkit's Hold'em hand from hole cards and board, on a smaller sample.
    hand_type = pokerkit.StandardHighHand
    texts = ["".join(_text(c) for c in h) for h in hands[:600]]
    pk = [hand_type.from_game(t[:4], t[4:]) for t in texts]
    for i in range(len(pk) - 1):
        a, b = ours[i], ours[i + 1]
        assert (a > b) - (a < b) == (pk[i] > pk[i + 1]) - (pk[i] < pk[i + 1])


def test_best5_of_six_and_batches() -> None:
    rng = random.Random(6)
    hands6 = [rng.sample(range(52), 6) for _ in range(5_000)]
    for h in hands6:
        assert best5(h) == max(eval5(c) for c in combinations(h, 5))
    assert best5_batch(np.array(hands6)).tolist() == [best5(h) for h in hands6]
    hands7 = [rng.sample(range(52), 7) for _ in range(1_000)]
    assert [best5(h) for h in hands7] == [eval7(h) for h in hands7]
    hands5 = [rng.sample(range(52), 5) for _ in range(1_000)]
    assert [best5(h) for h in hands5] == [eval5(h) for h in hands5] == eval5_batch(hands5).tolist()


# --- several decks ----------------------------------------------------------------------------------
def _shoe_draw(rng: random.Random, n: int, decks: int = 8) -> list[int]:
    return [c % 52 for c in rng.sample(range(52 * decks), n)]


def _rank_suited_hands(rng: random.Random, count: int) -> list[list[int]]:
    """Multi-deck 5-card hands biased to hold repeats and single suits."""
    hands = []
    for _ in range(count):
        suit = rng.randrange(4)
        ranks = [rng.choice(range(13)) for _ in range(5)]
        if rng.random() < 0.5:
            ranks = [rng.choice(ranks[:2]) for _ in range(5)]
        suits = [suit] * 5 if rng.random() < 0.6 else [rng.randrange(4) for _ in range(5)]
        hands.append([r * 4 + s for r, s in zip(ranks, suits, strict=True)])
    return hands


def test_multi_deck_five_card_hands_follow_the_documented_rules() -> None:
    rng = random.Random(8)
    hands = [_shoe_draw(rng, 5) for _ in range(20_000)] + _rank_suited_hands(rng, 20_000)
    for h in hands:
        s = eval5(h)
        assert (category(s), tiebreak_ranks(s)) == reference5(h), h
    assert eval5_batch(np.array(hands)).tolist() == [eval5(h) for h in hands]


def test_multi_deck_seven_card_hands_are_the_best_of_21() -> None:
    rng = random.Random(9)
    hands = [_shoe_draw(rng, 7, decks=8) for _ in range(10_000)]
    for _ in range(10_000):  # one suit heavy, with repeats: the flush and quads interplay
        suit = rng.randrange(4)
        ranks = [rng.randrange(13) for _ in range(3)]
        hands.append([rng.choice(ranks) * 4 + (suit if rng.random() < 0.8 else rng.randrange(4))
                      for _ in range(7)])
    for h in hands:
        assert eval7(h) == max(eval5(c) for c in combinations(h, 5)), h
    assert eval7_batch(np.array(hands)).tolist() == [eval7(h) for h in hands]


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        ("As Ah Ad Ac As", "As Ks Qs Js Ts"),       # five of a kind over a royal flush
        ("As As Ks Qs Js", "As Ks Qs Js 9s"),       # a paired flush compares its ranks, repeats in
        ("Ks Kh Kd 2c 2s", "As As Ks Qs Js"),       # ... and is below a full house
        ("2s 2s 5s 7s 9s", "As Ad Ah Kc Qd"),       # ... and above trips
        ("As Ah Ad Ks Ks", "As Qs Js 9s 8s"),       # a suited full house is a full house
    ],
)
def test_multi_deck_order(better: str, worse: str) -> None:
    assert eval5(parse_cards(better)) > eval5(parse_cards(worse))


def test_seven_cards_full_house_beats_flush_from_several_decks() -> None:
    cards = parse_cards("As As As Ks Ks 2s 3d")
    assert describe(eval7(cards)) == "Full House, Aces over Kings"
    assert describe(eval7(parse_cards("Ah Ah Ah Ah Ah 2s 3d"))) == "Five of a Kind, Aces"


# --- names, order, errors ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("cards", "name", "cat"),
    [
        ("As Ks Qs Js Ts", "Royal Flush", HC.STRAIGHT_FLUSH),
        ("5h 4h 3h 2h Ah", "Straight Flush, Five high", HC.STRAIGHT_FLUSH),
        ("9c 9d 9h 9s 2c", "Four of a Kind, Nines", HC.FOUR_OF_A_KIND),
        ("Ks Kd Kh 5c 5s", "Full House, Kings over Fives", HC.FULL_HOUSE),
        ("Ah Jh 8h 4h 2h", "Flush, Ace high", HC.FLUSH),
        ("Td 9s 8h 7c 6d", "Straight, Ten high", HC.STRAIGHT),
        ("As 2d 3h 4c 5s", "Straight, Five high", HC.STRAIGHT),
        ("7c 7d 7h Ac 3d", "Three of a Kind, Sevens", HC.THREE_OF_A_KIND),
        ("Ks Kd 5h 5c 9s", "Two Pair, Kings and Fives", HC.TWO_PAIR),
        ("6s 6d 5h 4c 9s", "Pair of Sixes", HC.PAIR),
        ("Ac Qd 7h 5s 3c", "High Card, Ace", HC.HIGH_CARD),
    ],
)
def test_describe_and_category(cards: str, name: str, cat: HandCategory) -> None:
    s = eval5(parse_cards(cards))
    assert describe(s) == name
    assert category(s) is cat
    assert eval5(*parse_cards(cards)) == s


def test_standard_order_examples() -> None:
    order = ["As Ks Qs Js Ts", "6s 5s 4s 3s 2s", "5d 4d 3d 2d Ad", "Ac Ad Ah As Kc", "2c 2d 2h 2s 3c",
             "Ac Ad Ah Kc Kd", "As Qs 9s 7s 5s", "Ah Kd Qc Js Th", "6h 5d 4c 3s 2h", "5h 4d 3c 2s Ah",
             "Qc Qd Qh 4s 2h", "Ah Ad Kc Kd 2s", "Ah Ad Qc Qd Ks",
             "Ah Ad Kc Qd Js", "Ah Kd Qc Js 9h", "7h 5d 4c 3s 2h"]
    strengths = [eval5(parse_cards(t)) for t in order]
    assert strengths == sorted(strengths, reverse=True)
    assert len(set(strengths)) == len(strengths)
    # Suits never matter off a flush; an exact tie is equal.
    assert eval5(parse_cards("Ah Kd Qc Js 9h")) == eval5(parse_cards("Ad Kc Qs Jh 9d"))


def test_wrong_inputs() -> None:
    with pytest.raises(ValueError):
        eval5([1, 2, 3, 4])
    with pytest.raises(ValueError):
        eval5(7)
    with pytest.raises(ValueError):
        eval7([1, 2, 3, 4, 5, 6])
    with pytest.raises(ValueError):
        best5([1, 2, 3, 4])
    with pytest.raises(ValueError):
        eval5_batch(np.zeros((3, 7), dtype=int))
    with pytest.raises(ValueError):
        eval7_batch(np.full((3, 7), 52))
    with pytest.raises(ValueError):
        eval5_batch(np.zeros((3, 5), dtype=float))
    with pytest.raises(ValueError):
        category(0)


def test_empty_batches() -> None:
    assert eval5_batch(np.zeros((0, 5), dtype=np.int8)).shape == (0,)
    assert eval7_batch(np.zeros((0, 7), dtype=np.int8)).shape == (0,)
