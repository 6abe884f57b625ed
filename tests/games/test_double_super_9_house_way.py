"""Double Super 9 house way (rules/double-super-9.md step 4; seed rule 39 [0051]) against a brute-force
oracle written here from the rules' text: of the three possible splits choose the legal one that
maximises the BACK hand, then the FRONT; ties by lowest card indices (the BACK's positions in dealt
order, lexicographically smallest)."""

from __future__ import annotations

import random
from itertools import permutations

import pytest

from firmware.cards.card import parse_cards
from firmware.cards.shoe import double_super_9_shoe
from firmware.cards.super9 import super9_rank
from firmware.games.double_super_9_house_way import house_way, setting_of, settings
from tests.games.helpers import egm_round, seat, wagers


def oracle(cards):
    """Every ordering of the four positions read as FRONT = first two, BACK = last two; keep the legal
    ones (BACK ranks at least as high as FRONT); best BACK, then best FRONT, then the smallest BACK
    positions."""
    best = None
    for order in permutations(range(4)):
        front, back = tuple(sorted(order[:2])), tuple(sorted(order[2:]))
        rf = super9_rank(cards[front[0]], cards[front[1]])
        rb = super9_rank(cards[back[0]], cards[back[1]])
        if rf > rb:
            continue
        key = (-rb, -rf, back)
        if best is None or key < best[0]:
            best = (key, front, back)
    assert best is not None
    return best[1], best[2]


def test_house_way_matches_the_brute_force_oracle_on_many_random_hands():
    rng = random.Random(20240715)
    shoe = list(double_super_9_shoe(12))
    for _ in range(20_000):
        cards = rng.sample(shoe, 4)           # twin cards (same rank and suit) happen with 12 decks
        chosen = house_way(cards)
        assert (chosen.front, chosen.back) == oracle(cards), cards
        assert not chosen.foul


def test_house_way_matches_the_oracle_on_every_value_pattern():
    """All 6^4 orders of values A-6 (suits fixed per position, so twins of value are distinct cards)."""
    values = "A23456"
    for a in values:
        for b in values:
            for c in values:
                for d in values:
                    cards = parse_cards(f"{a}s {b}h {c}d {d}c")
                    chosen = house_way(cards)
                    assert (chosen.front, chosen.back) == oracle(cards), cards


@pytest.mark.parametrize(
    ("hand", "front", "back"),
    [
        # A pair goes to the BACK even when the rest make a Super 9 (6-3) for the FRONT.
        ("6s 3h 5d 5c", "6s 3h", "5d 5c"),
        # Two pairs: the higher pair at the BACK.
        ("2s 6h 2d 6c", "2s 2d", "6h 6c"),
        # No pair: the best BACK is 6-3 (Super 9, six high); the FRONT is what is left.
        ("6s 4h 3d Ac", "4h Ac", "6s 3d"),
        # Best BACK 5-4 (Super 9, five high) beats any other split's BACK.
        ("5s 2h 4d 3c", "2h 3c", "5s 4d"),
        # Ties (three ways to put a pair of sixes at the BACK with 6-3 in FRONT): lowest positions.
        ("6s 6h 6d 3c", "6d 3c", "6s 6h"),
        ("3c 6s 6h 6d", "3c 6d", "6s 6h"),
        # Four of a value: every setting is pair against pair; BACK = positions 0 and 1.
        ("4s 4h 4d 4c", "4d 4c", "4s 4h"),
        # Twin cards (12 decks): the same card twice.
        ("As As 2h 2h", "As As", "2h 2h"),
    ],
)
def test_hand_picked_house_way_settings(hand, front, back):
    cards = parse_cards(hand)
    chosen = house_way(cards)
    assert chosen.front_cards(cards) == parse_cards(front)
    assert chosen.back_cards(cards) == parse_cards(back)


def test_six_settings_of_three_splits_and_each_split_has_a_legal_side():
    cards = parse_cards("6s 4h 3d Ac")
    all_settings = settings(cards)
    assert len(all_settings) == 6
    splits = {frozenset((s.front, s.back)) for s in all_settings}
    assert len(splits) == 3
    for split in splits:
        assert any(not s.foul for s in all_settings if frozenset((s.front, s.back)) == split)
    # The setting of a given FRONT, foul or not, is reported as it is.
    foul = setting_of(cards, [0, 2])            # 6-3 FRONT (Super 9) over 4-A BACK (5 points)
    assert foul.foul and foul.back == (1, 3)
    with pytest.raises(ValueError):
        setting_of(cards, [0])
    with pytest.raises(ValueError):
        setting_of(cards, [1, 1])
    with pytest.raises(ValueError):
        house_way(cards[:3])


def test_house_way_is_pure_and_deterministic():
    cards = parse_cards("5h 2d 6c 3d")
    before = list(cards)
    assert house_way(cards) == house_way(list(cards)) == house_way(tuple(cards))
    assert cards == before


def test_egm_round_shows_the_split_the_house_way_chose(capsys):
    # House banking, dice 3+3+3 = 9 land on the house's spot 8: dealing order 8, 1, 2, ..., 7.
    # Spot 1 holds 6s 3h 5d 5c and asks for the house way: pair of fives BACK, 6-3 FRONT.
    stack = []
    hands = {8: "5s 2h 4d 4c", 1: "6s 3h 5d 5c"}
    filler = iter(parse_cards("Ah Ad 2s 2c 3s 3c 4s 4h 6h 6d Ac 2d 3d 4c 5h 6c As 3h 5c 6s 2h 4d 5s Ah"))
    for r in range(4):
        for position in (8, 1, 2, 3, 4, 5, 6, 7):
            stack.append(hands[position].split()[r] if position in hands else str(next(filler)))
    rec = egm_round(capsys, "double-super-9", *wagers("1:bet=10"), "--dice", "3,3,3",
                    "--cards", " ".join(stack), "--decision", "1:house-way")
    spot = seat(rec, 1)
    assert spot["cards"] == ["6s", "3h", "5d", "5c"]
    assert spot["house_way"] is True
    assert spot["front"] == ["6s", "3h"] and spot["back"] == ["5d", "5c"]
    assert spot["front_hand"] == "Super 9, Six high" and spot["back_hand"] == "Pair of Fives"
    assert rec["dealer"]["house_way"] is True
    assert rec["dealer"]["front"] == ["5s", "2h"] and rec["dealer"]["back"] == ["4d", "4c"]
