"""Card sources: stacked lists, the lazy Fisher-Yates RNG shoe, the physical-shoe adapter."""

from __future__ import annotations

from collections import Counter

import pytest
from scipy.stats import chisquare

from firmware.cards import (
    Card,
    CardError,
    PhysicalShoeSource,
    RngShoe,
    ShoeExhausted,
    StackedSource,
    parse_cards,
    standard_shoe,
)
from firmware.cards.shoe import double_super_9_shoe
from firmware.rng.service import RngService


def test_stacked_source_deals_in_order_and_fails_cleanly_when_it_runs_out():
    src = StackedSource(parse_cards("As Kd"))
    assert [src.next_card(), src.next_card()] == parse_cards("As Kd")
    with pytest.raises(ShoeExhausted, match="2 given"):
        src.next_card()
    assert src.dealt == parse_cards("As Kd")


def test_shoes():
    assert len(standard_shoe(8)) == 416 and Counter(standard_shoe(8))[Card.parse("As")] == 8
    ds9 = double_super_9_shoe()
    assert len(ds9) == 288 and {c.rank for c in ds9} == {14, 2, 3, 4, 5, 6}
    with pytest.raises(CardError):
        standard_shoe(0)


def test_rng_shoe_deals_every_card_once_per_round_and_reshuffles():
    shoe = RngShoe(RngService.seeded(7), standard_shoe(1))
    first = [shoe.next_card() for _ in range(52)]
    assert sorted(first) == sorted(standard_shoe(1))
    with pytest.raises(ShoeExhausted):
        shoe.next_card()
    shoe.new_round()
    second = [shoe.next_card() for _ in range(52)]
    assert sorted(second) == sorted(first) and second != first


def test_lazy_shuffle_first_cards_are_uniform():
    """The first two cards of a lazily dealt 8-deck shoe: each card 1/52 by identity, and the second
    card is independent of the first (identical cards of several decks are indistinguishable)."""
    rng = RngService.seeded("lazy")
    shoe = RngShoe(rng, standard_shoe(8))
    first, pairs = Counter(), Counter()
    n = 20_000
    for _ in range(n):
        shoe.new_round()
        a, b = shoe.next_card(), shoe.next_card()
        first[a] += 1
        pairs[(a.suit, b.suit)] += 1
    assert chisquare([first[c] for c in range(52)]).pvalue > 1e-4
    # P(same suit) = 103/415 for the second card of an 8-deck shoe, not 1/4.
    same = sum(v for (x, y), v in pairs.items() if x == y)
    expected = n * 103 / 415
    assert abs(same - expected) < 5 * (expected * (1 - 103 / 415)) ** 0.5


def test_physical_shoe_adapter_is_a_card_source():
    class FakeShoe:
        def __init__(self):
            self.cards = iter(parse_cards("9h 2c"))

        def read_card(self, timeout=None):
            try:
                return next(self.cards)
            except StopIteration:
                raise ShoeExhausted("shoe empty") from None

    src = PhysicalShoeSource(FakeShoe())
    assert src.next_card() == Card.parse("9h") and src.exhaustion_is_misdeal
    src.next_card()
    with pytest.raises(ShoeExhausted):
        src.next_card()
