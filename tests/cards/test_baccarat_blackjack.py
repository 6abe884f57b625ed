"""Baccarat scores and blackjack totals (Baccarat War, Blackjack War, Split 21 Stud)."""

from __future__ import annotations

from itertools import combinations_with_replacement

import numpy as np
import pytest

from firmware.cards.baccarat import baccarat_score, baccarat_score_batch
from firmware.cards.blackjack import BlackjackTotal, blackjack_rank, blackjack_total
from firmware.cards.card import CARDS, parse_cards


@pytest.mark.parametrize(
    ("cards", "score"),
    [
        ("Qs 3h Td 6c", 9),   # FIG. 8, spot 7
        ("2d Ah Ts 9s", 2),   # FIG. 8, the dealer
        ("Qs 3h", 3), ("2d Ah", 3), ("Ks Qd", 0), ("9s 9h", 8), ("As", 1), ("", 0),
        ("4s 3d", 7), ("7c Qd", 7),
        ("9s 9h 9d 9c 9s", 5),
    ],
)
def test_baccarat_score(cards: str, score: int) -> None:
    assert baccarat_score(parse_cards(cards)) == score


def test_baccarat_score_batch() -> None:
    hands = np.array(list(combinations_with_replacement(range(52), 2)))
    assert baccarat_score_batch(hands).tolist() == [baccarat_score(h) for h in hands.tolist()]
    assert baccarat_score(np.array([48, 4])) == 4  # numpy ints work: A + 3
    with pytest.raises(ValueError):
        baccarat_score_batch(np.array([1, 2, 3]))
    with pytest.raises(ValueError):
        baccarat_score_batch(np.array([[1, 52]]))


@pytest.mark.parametrize(
    ("cards", "total", "soft", "bust", "natural"),
    [
        ("As Ah", 12, True, False, False),      # Blackjack War: A + A = 12
        ("As Kd", 21, True, False, True),
        ("Td As", 21, True, False, True),
        ("As 5h Kd", 16, False, False, False),  # the ace falls back to 1
        ("As 6h", 17, True, False, False),
        ("As Ah 9d", 21, True, False, False),   # three-card 21, not a natural
        ("7s 7h 7d", 21, False, False, False),
        ("Ts Th 5d", 25, False, True, False),
        ("Ts Jh Qd", 30, False, True, False),
        ("Ks Qh", 20, False, False, False),
        ("2s 3h", 5, False, False, False),
        ("As Ah Ad Ac", 14, True, False, False),
        ("", 0, False, False, False),
    ],
)
def test_blackjack_total(cards: str, total: int, soft: bool, bust: bool, natural: bool) -> None:
    assert blackjack_total(parse_cards(cards)) == BlackjackTotal(total, soft, bust, natural)


def test_blackjack_total_properties() -> None:
    for hand in combinations_with_replacement(CARDS, 3):
        t = blackjack_total(hand)
        hard = sum(c.blackjack_value for c in hand)
        assert t.total == (hard + 10 if t.soft else hard)
        assert t.bust == (t.total > 21) and (not t.bust or hard > 21)
        assert not t.natural


def test_blackjack_rank_split21_rules() -> None:
    r = lambda text: blackjack_rank(parse_cards(text))  # noqa: E731
    assert r("As Kd") > r("7s 7h 7d") > r("Ks Qd") > r("9s 9h") > r("2s 3h")  # 2-card 21 first
    assert r("As Kd") == r("Qh Ac")               # two naturals push
    assert r("7s 7h 7d") == r("As Kd Th")         # equal 3-card totals push
    assert r("Ks Qd") == r("5s 5h Kc")            # equal totals push whatever the card count
    assert r("Ks Qd 2c") == r("Ks Qd Jc") < r("2s 3h")  # every bust ranks lowest, all alike
    assert r("2s 3h") > r("") > r("Ts Th 5d")
