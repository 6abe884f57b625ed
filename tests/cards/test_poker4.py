"""Four-card poker (Baccarat War FOUR_CARD): categories, exact counts over shoe compositions and
the rarity order of the rules file."""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np
import pytest

from firmware.cards.card import parse_cards
from firmware.cards.errors import CardError
from firmware.cards.poker4 import (
    FourCardCategory,
    category4,
    category4_batch,
    four_card_counts,
    four_card_rarity_order,
)
from firmware.cards.shoe import composition, ranks_shoe, standard_shoe

F4 = FourCardCategory

#: The rules file's 8-deck order, best first (rules/baccarat-war.md, FOUR_CARD).
RULES_ORDER = [F4.SUITED_FOUR_OF_A_KIND, F4.STRAIGHT_FLUSH, F4.FOUR_OF_A_KIND, F4.STRAIGHT,
               F4.FLUSH, F4.TWO_PAIR, F4.THREE_OF_A_KIND, F4.PAIR, F4.HIGH_CARD]


@pytest.mark.parametrize(
    ("cards", "cat"),
    [
        ("As As As As", F4.SUITED_FOUR_OF_A_KIND),
        ("9s Ts Js Qs", F4.STRAIGHT_FLUSH),
        ("As 2s 3s 4s", F4.STRAIGHT_FLUSH),
        ("Jh Qh Kh Ah", F4.STRAIGHT_FLUSH),
        ("7s 7h 7d 7c", F4.FOUR_OF_A_KIND),
        ("7s 7s 7d 7d", F4.FOUR_OF_A_KIND),
        ("As 2h 3d 4c", F4.STRAIGHT),
        ("Jd Qh Kd Ac", F4.STRAIGHT),
        ("5c 6d 7h 8s", F4.STRAIGHT),
        ("2h 7h 9h Kh", F4.FLUSH),
        ("As As Ks Qs", F4.FLUSH),          # a paired flush (several decks) is a flush
        ("9d 9d 9d 2d", F4.FLUSH),
        ("Ks Kh 5d 5c", F4.TWO_PAIR),
        ("Ks Ks 5d 5d", F4.TWO_PAIR),
        ("Ks Kh Kd 5c", F4.THREE_OF_A_KIND),
        ("2s 9h 9d 9c", F4.THREE_OF_A_KIND),
        ("Ks Kh 5d 7c", F4.PAIR),
        ("As Ah 2d 3c", F4.PAIR),
        ("2s 7h 9d Kc", F4.HIGH_CARD),
    ],
)
def test_categories(cards: str, cat: FourCardCategory) -> None:
    hand = parse_cards(cards)
    assert category4(hand) is cat
    assert category4_batch(np.array([hand])).tolist() == [cat]


@pytest.mark.parametrize("cards", ["Qs Kh Ad 2c", "Kd Ah 2s 3c", "Qh Kh Ah 2h"])
def test_no_wrap_around(cards: str) -> None:
    assert category4(parse_cards(cards)) in (F4.HIGH_CARD, F4.FLUSH)
    assert category4(parse_cards(cards)) not in (F4.STRAIGHT, F4.STRAIGHT_FLUSH)


RULES = Path(__file__).resolve().parents[2] / "docs" / "games" / "rules" / "baccarat-war.md"


def _rules_order() -> list[FourCardCategory]:
    text = " ".join(RULES.read_text().split())
    found = re.search(r"with 8 decks, best first: (.*?) \(A-2-3-4", text)
    assert found, "the FOUR_CARD order is missing from docs/games/rules/baccarat-war.md"
    return [F4[name.strip().upper().replace(" ", "_")] for name in found.group(1).split(",")]


def test_eight_deck_order_is_the_rules_order() -> None:
    assert _rules_order() == RULES_ORDER
    assert four_card_rarity_order(standard_shoe(8)) == RULES_ORDER


def test_eight_deck_counts() -> None:
    counts = four_card_counts(standard_shoe(8))
    assert sum(counts.values()) == comb(416, 4)
    assert all(isinstance(n, int) for n in counts.values())
    # Closed forms for the rare categories.
    assert counts[F4.SUITED_FOUR_OF_A_KIND] == 52 * comb(8, 4)
    assert counts[F4.STRAIGHT_FLUSH] == 11 * 4 * 8**4
    assert counts[F4.FOUR_OF_A_KIND] == 13 * (comb(32, 4) - 4 * comb(8, 4))
    assert counts[F4.STRAIGHT] == 11 * 32**4 - counts[F4.STRAIGHT_FLUSH]
    assert counts[F4.FLUSH] == 4 * comb(104, 4) - counts[F4.STRAIGHT_FLUSH] - counts[F4.SUITED_FOUR_OF_A_KIND]
    # A composition works as well as the card list, and the order is by count.
    assert four_card_counts(composition(standard_shoe(8))) == counts
    order = four_card_rarity_order(standard_shoe(8))
    assert [counts[c] for c in order] == sorted(counts.values())


def test_one_deck() -> None:
    counts = four_card_counts(standard_shoe(1))
    assert counts == {F4.SUITED_FOUR_OF_A_KIND: 0, F4.STRAIGHT_FLUSH: 44, F4.FOUR_OF_A_KIND: 13,
                      F4.STRAIGHT: 2_772, F4.FLUSH: 2_816, F4.TWO_PAIR: 2_808,
                      F4.THREE_OF_A_KIND: 2_496, F4.PAIR: 82_368, F4.HIGH_CARD: 177_408}
    assert sum(counts.values()) == comb(52, 4)
    assert four_card_rarity_order(standard_shoe(1))[0] is F4.SUITED_FOUR_OF_A_KIND  # impossible
    # Against the plain enumeration of every hand.
    assert Counter(category4(h) for h in combinations(range(52), 4)) == {
        k: v for k, v in counts.items() if v
    }


def test_multiset_weights_against_brute_force() -> None:
    """A small two-deck shoe: counting multisets with binomial weights equals walking every hand
    of physical cards."""
    shoe = ranks_shoe((14, 2, 3, 4, 5, 13), decks=2)            # 48 cards, repeats
    brute = Counter(category4(h) for h in combinations(shoe, 4))
    counts = four_card_counts(shoe)
    assert {k: v for k, v in counts.items() if v} == brute
    assert sum(counts.values()) == comb(len(shoe), 4)


def test_batch_matches_scalar() -> None:
    rng = np.random.default_rng(4)
    hands = rng.integers(0, 52, size=(20_000, 4))
    hands[:5_000, 1:] = hands[:5_000, :1]                         # many repeats
    hands[5_000:10_000] = hands[5_000:10_000] // 4 * 4 + 1       # one suit
    assert category4_batch(hands).tolist() == [category4(h.tolist()) for h in hands]


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        category4(parse_cards("As Ks Qs"))
    with pytest.raises(CardError):
        four_card_counts([0, 1, 2])
    with pytest.raises(CardError):
        four_card_counts([0, 1, 2, 52])
    with pytest.raises(CardError):
        four_card_counts({0: 5, 1: 1001})
    with pytest.raises(CardError):
        four_card_counts({0: 5, 1: -1})
    with pytest.raises(ValueError):
        category4_batch(np.zeros((2, 5), dtype=int))
