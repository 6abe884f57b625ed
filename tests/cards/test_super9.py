"""Double Super 9 two-card ranking (rules/double-super-9.md)."""

from __future__ import annotations

from itertools import combinations_with_replacement

import pytest

from firmware.cards.card import parse_card, parse_cards
from firmware.cards.errors import CardError
from firmware.cards.shoe import double_super_9_shoe
from firmware.cards.super9 import (
    PAIR_BASE,
    describe_super9,
    super9_points,
    super9_rank,
    super9_value,
)


def rank(text: str) -> int:
    a, b = parse_cards(text)
    return super9_rank(a, b)


def test_rules_examples() -> None:
    assert rank("6s 3h") > rank("5d 4c")          # equal points (9): the higher single card wins
    assert rank("As Ah") > rank("6s 3h")          # every pair beats every non-pair, even super 9
    assert rank("6s 6h") > rank("5s 5h") > rank("4s 4h") > rank("3s 3h") > rank("2s 2h") > rank("As Ah")
    assert rank("5s 4h") > rank("6s 2h")          # 9 points over 8 points
    assert rank("6s 5h") < rank("As 2h")          # 11 counts 1 point, below 3 points


def test_copies() -> None:
    assert rank("6s 3h") == rank("6d 3c") == rank("3s 6s")
    assert rank("5s 5h") == rank("5d 5c")
    assert rank("4s As") == rank("4h Ad")         # 5 points, four high
    assert rank("4s As") > rank("3s 2s")          # 5 points, four high beats three high


def test_points_and_values() -> None:
    assert [super9_value(parse_card(t)) for t in ("As", "2h", "3d", "4c", "5s", "6h")] == [1, 2, 3, 4, 5, 6]
    assert super9_points(parse_card("6s"), parse_card("5h")) == 1
    assert super9_points(parse_card("4s"), parse_card("6h")) == 0
    assert super9_points(parse_card("As"), parse_card("Ah")) == 2


def test_full_order_of_the_shoe() -> None:
    """Every distinct hand of the shoe: pairs first (6-6 down to A-A), then by points, then by the
    higher card; exactly the documented order, with copies only for identical value pairs."""
    values = sorted({super9_value(c) for c in double_super_9_shoe()})
    assert values == [1, 2, 3, 4, 5, 6]
    hands = list(combinations_with_replacement(values, 2))

    def key(h: tuple[int, int]) -> tuple[int, int, int]:
        a, b = h
        return (1, a, 0) if a == b else (0, (a + b) % 10, max(a, b))

    cards = {v: parse_card(("A" if v == 1 else str(v)) + "s") for v in values}
    ranks = {h: super9_rank(cards[h[0]], cards[h[1]]) for h in hands}
    for h1 in hands:
        for h2 in hands:
            assert (ranks[h1] > ranks[h2]) == (key(h1) > key(h2))
            assert (ranks[h1] == ranks[h2]) == (key(h1) == key(h2))
    assert all((ranks[h] > PAIR_BASE) == (h[0] == h[1]) for h in hands)


@pytest.mark.parametrize(
    ("cards", "name"),
    [("6s 6h", "Pair of Sixes"), ("As Ah", "Pair of Aces"), ("6s 3h", "Super 9, Six high"),
     ("5s 2h", "7 points, Five high"), ("6s 4h", "0 points, Six high"), ("6s 5h", "1 point, Six high")],
)
def test_describe(cards: str, name: str) -> None:
    assert describe_super9(rank(cards)) == name
    assert describe_super9(parse_cards(cards)) == name


@pytest.mark.parametrize("text", ["7s 2h", "Ks As", "Ts 3d"])
def test_cards_outside_the_shoe(text: str) -> None:
    a, b = parse_cards(text)
    with pytest.raises(CardError, match="only A-6"):
        super9_rank(a, b)


def test_bad_input() -> None:
    with pytest.raises(CardError):
        super9_value(52)
    with pytest.raises(CardError):
        super9_value(-1)
    with pytest.raises(ValueError):
        describe_super9(99)
    with pytest.raises(CardError):
        describe_super9(parse_cards("As 2s 3s"))
