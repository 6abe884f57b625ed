"""The Split 21 Stud house way (rules/split21-stud.md step 4) against a brute-force oracle written here
from the rules' text alone, hand-picked hands for each step of the rule, purity, and how
``egm round`` shows the split it chose.

The rules' text: "among all legal splits choose the one that (a) busts the fewest hands, then (b)
maximises the HIGH hand's rank, then (c) maximises the LOW hand's rank; ties broken by the lowest
card indices". A split is legal when each hand holds 2 or 3 cards and "the HIGH hand must rank at
least as high as the LOW hand"; hands rank by blackjack total, a hand over 21 is bust, "a 2-card 21
beats a 3-card 21" (seed rules 4-7). "Lowest card indices" is read as the game documents it: the
HIGH hand's positions in the dealt hand (0..4, ascending) form the smallest tuple.
"""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware.cards.card import format_cards, parse_cards
from firmware.cards.shoe import standard_shoe
from firmware.games.split21_stud_house_way import house_way, splits
from tests.games.helpers import egm_round, seat, wagers
from tests.games.split21_cards import round_args

DECK = tuple(standard_shoe(1))


# --- the oracle: only the rules' words, card text in, positions out ------------------------------
def _value(card_text: str) -> int:
    """Seed rule 7: number cards their number, face cards (and tens) ten, the ace one (or eleven)."""
    rank = card_text[0]
    return 1 if rank == "A" else 10 if rank in "TJQK" else int(rank)


def _hand_rank(texts: list[str]) -> tuple[int, ...]:
    """Bigger is better: a bust is below everything; then the total; a 2-card 21 above a 3-card 21."""
    hard = sum(_value(t) for t in texts)
    total = hard + 10 if any(t[0] == "A" for t in texts) and hard + 10 <= 21 else hard
    if total > 21:
        return (-1,)
    return (total, 1 if total == 21 and len(texts) == 2 else 0)


def oracle(cards: list[int]) -> tuple[int, ...]:
    """The HIGH hand's positions the house way must choose for ``cards`` (five, in dealt order)."""
    texts = format_cards(cards)
    candidates = []
    for size in (2, 3):
        for high in itertools.combinations(range(5), size):
            low = tuple(i for i in range(5) if i not in high)
            h, lo = _hand_rank([texts[i] for i in high]), _hand_rank([texts[i] for i in low])
            if h >= lo:                                           # legal: HIGH at least LOW
                candidates.append((high, h, lo, (h == (-1,)) + (lo == (-1,))))
    fewest = min(c[3] for c in candidates)                       # (a) fewest busts
    candidates = [c for c in candidates if c[3] == fewest]
    best_high = max(c[1] for c in candidates)                    # (b) best HIGH
    candidates = [c for c in candidates if c[1] == best_high]
    best_low = max(c[2] for c in candidates)                     # (c) best LOW
    candidates = [c for c in candidates if c[2] == best_low]
    return min(c[0] for c in candidates)                         # lowest card indices


def test_oracle_over_many_random_hands():
    rng = random.Random(20_210_021)
    for _ in range(4000):
        cards = rng.sample(DECK, 5)
        assert house_way(cards).high == oracle(cards), format_cards(cards)


def test_oracle_over_every_blackjack_value_combination():
    # The house way sees only blackjack values (and positions for the tie-break): every multiset
    # of five values A, 2..9, ten (2002 of them), each in a shuffled order and random suits.
    rng = random.Random(7)
    by_value: dict[int, list[int]] = {}
    for card in DECK:
        by_value.setdefault(_value(format_cards([card])[0]), []).append(card)
    checked = 0
    for values in itertools.combinations_with_replacement(sorted(by_value), 5):
        if any(values.count(v) > len(by_value[v]) for v in set(values)):
            continue                                             # five of a kind: tens only
        pools = {v: rng.sample(by_value[v], values.count(v)) for v in set(values)}
        cards = [pools[v].pop() for v in values]
        rng.shuffle(cards)
        assert house_way(cards).high == oracle(cards), format_cards(cards)
        checked += 1
    assert checked == 2002 - 9                                   # C(14, 5) less 9 impossible hands


@settings(max_examples=300, deadline=None)
@given(st.permutations(DECK).map(lambda p: list(p[:5])))
def test_oracle_hypothesis(cards):
    assert house_way(cards).high == oracle(cards)


# --- hand-picked cases ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("hand", "high", "low"),
    [
        # The module's own example: A+K, a two-card 21, over 9+5+6 = 20.
        ("Kd 9s As 5h 6c", "Kd As", "9s 5h 6c"),
        # (a) before (b): A K would be a two-card 21 but bust Q J 9; A K Q (21) over J 9 busts nothing.
        ("As Kd Qh Jc 9s", "As Kd Qh", "Jc 9s"),
        # (a) when a bust cannot be avoided (every three cards of K Q J T 9 are over 21): the best
        # two-card HIGH, 20, six ways; the lowest positions (0, 1).
        ("Kd Qs Jh Tc 9c", "Kd Qs", "Jh Tc 9c"),
        # (b): HIGH T 8 2 (20) over the two-card T 8 (18) although LOW falls from 12 to 10; of the two
        # three-card 20s (T 8 2 and T 6 4) the positions (0, 1, 4) come before (0, 2, 3).
        ("Ts 8d 6c 4h 2s", "Ts 8d 2s", "6c 4h"),
        # (c): HIGH 19 three ways (4 4 A twice, 7 A A); LOW 7 A (18) beats 4 4 (8); of the two
        # equal ones the positions (1, 2, 3) come before (1, 2, 4).
        ("7h 4c 4s Ad Ah", "4c 4s Ad", "7h Ah"),
        # Tie-break by positions, not by card count: K T, 2 8 T and 2 K 8 all make 20 | 17; (0, 1, 3)
        # is the smallest, so a three-card HIGH is chosen over an equal two-card one.
        ("2h Kc 7d 8h Tc", "2h Kc 8h", "7d Tc"),
        # Six splits make 20 | 20 (J Q, J K, Q K over the rest, and the rest over them): (0, 1).
        ("Jd Qc Kh 7h 3s", "Jd Qc", "Kh 7h 3s"),
        # Aces: A A 5 = 17 over A A = 12 (legal), better than A 5 = 16 over A A A = 13.
        ("Ac Ad Ah As 5c", "Ac Ad 5c", "Ah As"),
        # Nine ways to a two-card 21 HIGH over a three-card 21 LOW (an ace with a ten-card): (0, 1).
        ("As Kd Ah Qc Jh", "As Kd", "Ah Qc Jh"),
    ],
)
def test_hand_picked(hand, high, low):
    cards = parse_cards(hand)
    split = house_way(cards)
    assert format_cards(split.high_cards(cards)) == high.split()
    assert format_cards(split.low_cards(cards)) == low.split()
    assert not split.foul
    assert split.high == oracle(cards)


def test_never_foul_and_fewest_busts_over_all_splits():
    rng = random.Random(99)
    for _ in range(2000):
        cards = rng.sample(DECK, 5)
        chosen = house_way(cards)
        every = splits(cards)
        assert len(every) == 20 and chosen in every and not chosen.foul
        assert chosen.busts == min(s.busts for s in every if not s.foul) <= 1


# --- pure and deterministic ----------------------------------------------------------------------
def test_pure_and_deterministic():
    rng = random.Random(3)
    hands = [rng.sample(DECK, 5) for _ in range(200)]
    first = [house_way(h) for h in hands]
    copies = [list(h) for h in hands]
    # Same answer again, in another order, from a tuple as from a list; the input is not changed.
    assert [house_way(tuple(h)) for h in reversed(hands)] == first[::-1]
    assert hands == copies


def test_ranks_do_not_depend_on_the_dealt_order():
    # Only the tie-break reads positions: the (busts, HIGH rank, LOW rank) chosen is the same for
    # every order of the same five cards.
    rng = random.Random(11)
    for _ in range(100):
        cards = rng.sample(DECK, 5)
        ranks = {(s.busts, s.high_rank, s.low_rank)
                 for s in (house_way(list(p)) for p in itertools.permutations(cards))}
        assert len(ranks) == 1


def test_a_wrong_hand_size_is_refused():
    with pytest.raises(ValueError, match="has 5 cards, not 4"):
        house_way(parse_cards("As Kd Qh Jc"))


# --- what egm round shows ------------------------------------------------------------------------
def test_egm_round_shows_the_house_way_split_for_seats_and_the_house(capsys):
    for seed in ("1", "2", "3"):
        rec = egm_round(capsys, "split21-stud", "--seats", "3", "--seed", seed)
        for hand in [*rec["seats"], rec["dealer"]]:
            cards = parse_cards(hand["cards"])
            split = house_way(cards)
            assert hand["house_way"] is True
            assert hand["high"] == format_cards(split.high_cards(cards))
            assert hand["low"] == format_cards(split.low_cards(cards))
        assert rec["decisions"] == [{"seat": s, "action": "house-way"} for s in (1, 2, 3)]


def test_egm_round_house_way_decision_and_an_explicit_setting(capsys):
    hands = {1: "2h Kc 7d 8h Tc", 2: "7h 4c 4s Ad Ah", 8: "Kd Qs Jh Ts 9c"}
    bets = wagers(*(f"{s}:{w}" for s in (1, 2) for w in ("ante=10", "low=10", "high=20")))
    rec = egm_round(capsys, "split21-stud", *round_args(8, hands), *bets,
                    "--decision", "1:house-way", "--decision", "2:set:4c 4s Ad|7h Ah")
    s1, s2 = seat(rec, 1), seat(rec, 2)
    assert (s1["house_way"], s1["high"], s1["low"]) == (True, ["2h", "Kc", "8h"], ["7d", "Tc"])
    assert (s1["high_total"], s1["low_total"]) == (20, 17)
    # The same split the house way would choose, but set by the player: house_way is false.
    assert (s2["house_way"], s2["high"], s2["low"]) == (False, ["4c", "4s", "Ad"], ["7h", "Ah"])
    assert (s2["high_total"], s2["low_total"]) == (19, 18)
    assert rec["dealer"]["house_way"] is True
    assert (rec["dealer"]["high"], rec["dealer"]["low"]) == (["Kd", "Qs"], ["Jh", "Ts", "9c"])
