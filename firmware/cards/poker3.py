"""Three-card poker hands (rules/three-card-poker.md, the patent's "preferred three card version").

Ranking, best first: straight flush > three of a kind > straight > flush > pair > high card.
Straights and straight flushes run from A-K-Q (highest) down to 3-2-A (lowest); K-A-2 is not a
straight. Within a class the deciding ranks are compared: a straight by its top card (3 for 3-2-A),
trips by rank, a pair by pair rank then kicker, a flush or high card by highest, second, third card
(ace high). Equal strength is a tie. Over the 22,100 hands of one deck: 48 straight flushes,
52 trips, 720 straights, 1,096 flushes, 3,744 pairs, 16,440 high cards.

Strength: ``category << 12`` plus three 4-bit deciding ranks (2..14), most significant first;
higher is better, equal means a tie. With several decks (not used by the game, handled for
completeness) a pair of one suit counts as a flush and three identical cards as three of a kind.

Method: as in :mod:`firmware.cards.poker5`, the cards' keys (:mod:`firmware.cards.hand_keys`, suit
counters biased so that a counter's bit 3 is set when all three cards share that suit) are added and
the sum is looked up in a table of the 455 multisets of three ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from itertools import combinations

import numpy as np
import numpy.typing as npt

from firmware.cards.hand_keys import (
    CARD_KEY,
    CARD_KEY_A,
    FLUSH_BITS,
    NAME,
    PLURAL,
    RANK_MASK,
    card_array,
    first_keys,
    freeze,
    frozen,
)

__all__ = [
    "ThreeCardCategory", "best3_of", "best3_of_batch", "category3", "describe3", "eval3",
    "eval3_batch", "strength3",
]


class ThreeCardCategory(IntEnum):
    """Three-card poker categories, weakest first."""

    HIGH_CARD = 1
    PAIR = 2
    FLUSH = 3
    STRAIGHT = 4
    THREE_OF_A_KIND = 5
    STRAIGHT_FLUSH = 6


#: A strength is ``category << CATEGORY_SHIFT | deciding ranks``.
CATEGORY_SHIFT = 12

_C3 = ThreeCardCategory


def strength3(cat: ThreeCardCategory, *ranks: int) -> int:
    """The strength of a hand of category ``cat`` decided by ``ranks`` (2..14, most significant
    first; missing ranks count as 0, which makes thresholds: ``strength3(HIGH_CARD, 12)`` is just
    below every queen-high hand, the dealer's qualifying level)."""
    if len(ranks) > 3 or any(not 0 <= r <= 14 for r in ranks):
        raise ValueError(f"bad deciding ranks {ranks!r}")
    r = (*ranks, 0, 0, 0)
    return (int(cat) << CATEGORY_SHIFT) | (r[0] << 8) | (r[1] << 4) | r[2]


def _table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every multiset of three ranks: sorted keys, strengths off-suit, strengths all one suit."""
    rows: list[tuple[int, int, int]] = []
    desc = range(14, 1, -1)
    for three in combinations(desc, 3):
        a, b, c = three
        high = a if a - c == 2 else (3 if three == (14, 3, 2) else 0)
        key = 8 ** (a - 2) + 8 ** (b - 2) + 8 ** (c - 2)
        if high:
            rows.append((key, strength3(_C3.STRAIGHT, high), strength3(_C3.STRAIGHT_FLUSH, high)))
        else:
            rows.append((key, strength3(_C3.HIGH_CARD, *three), strength3(_C3.FLUSH, *three)))
    for p in desc:
        for k in desc:
            if k != p:
                key = 2 * 8 ** (p - 2) + 8 ** (k - 2)
                flush = strength3(_C3.FLUSH, *sorted((p, p, k), reverse=True))
                rows.append((key, strength3(_C3.PAIR, p, k), flush))
        trips = strength3(_C3.THREE_OF_A_KIND, p)
        rows.append((3 * 8 ** (p - 2), trips, trips))
    rows.sort()
    arr = np.array(rows, dtype=np.int64)
    return arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy()


_FIRST_KEY: tuple[int, ...] = first_keys(3)

_KEYS, _NONFLUSH_A, _SUITED_A = _table()
freeze(_KEYS, _NONFLUSH_A, _SUITED_A)
_NONFLUSH: dict[int, int] = dict(zip(_KEYS.tolist(), _NONFLUSH_A.tolist(), strict=True))
_SUITED: dict[int, int] = dict(zip(_KEYS.tolist(), _SUITED_A.tolist(), strict=True))
_FIRST_KEY_A = frozen(_FIRST_KEY)


def eval3(cards: Sequence[int]) -> int:
    """Strength of exactly three cards (ints 0..51, not validated); higher is better.

    >>> from firmware.cards.card import parse_cards
    >>> eval3(parse_cards("As Ks Qs")) > eval3(parse_cards("2c 2d 2h")) > eval3(parse_cards("3s 2d Ah"))
    True
    """
    try:
        a, b, c = cards
    except (TypeError, ValueError):
        raise ValueError("eval3 needs exactly three cards") from None
    k = _FIRST_KEY[a] + CARD_KEY[b] + CARD_KEY[c]
    if k & FLUSH_BITS:
        return _SUITED[k & RANK_MASK]
    return _NONFLUSH[k & RANK_MASK]


def best3_of(cards: Sequence[int]) -> int:
    """Strength of the best three of three or four cards (the 4-card dealer option,
    ``dealer_cards = 4``)."""
    n = len(cards)
    if n == 3:
        return eval3(cards)
    if n != 4:
        raise ValueError(f"best3_of needs 3 or 4 cards, not {n}")
    a, b, c, d = cards
    return max(eval3((a, b, c)), eval3((a, b, d)), eval3((a, c, d)), eval3((b, c, d)))


def category3(strength: int) -> ThreeCardCategory:
    """The :class:`ThreeCardCategory` of a strength."""
    return ThreeCardCategory(int(strength) >> CATEGORY_SHIFT)


def describe3(strength: int) -> str:
    """A player-facing name such as ``'Straight, Three high'`` or ``'Pair of Queens'``."""
    cat = category3(strength)
    top = (int(strength) >> 8) & 0xF
    match cat:
        case ThreeCardCategory.STRAIGHT_FLUSH:
            return f"Straight Flush, {NAME[top]} high"
        case ThreeCardCategory.THREE_OF_A_KIND:
            return f"Three of a Kind, {PLURAL[top]}"
        case ThreeCardCategory.STRAIGHT:
            return f"Straight, {NAME[top]} high"
        case ThreeCardCategory.FLUSH:
            return f"Flush, {NAME[top]} high"
        case ThreeCardCategory.PAIR:
            return f"Pair of {PLURAL[top]}"
        case _:
            return f"High Card, {NAME[top]}"


def _eval3_rows(arr: np.ndarray) -> npt.NDArray[np.int32]:
    k = _FIRST_KEY_A[arr[:, 0]] + CARD_KEY_A[arr[:, 1]] + CARD_KEY_A[arr[:, 2]]
    idx = np.searchsorted(_KEYS, k & RANK_MASK)
    ranks: npt.NDArray[np.int32] = np.where(k & FLUSH_BITS, _SUITED_A[idx], _NONFLUSH_A[idx]).astype(np.int32)
    return ranks


def eval3_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Strengths of an ``[N, 3]`` array of card indexes; same values as :func:`eval3`."""
    return _eval3_rows(card_array(hands, (3,)))


def best3_of_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Best-three strengths of an ``[N, 4]`` array of card indexes; same values as
    :func:`best3_of`."""
    arr = card_array(hands, (4,))
    best = _eval3_rows(arr[:, [0, 1, 2]])
    for cols in ([0, 1, 3], [0, 2, 3], [1, 2, 3]):
        np.maximum(best, _eval3_rows(arr[:, cols]), out=best)
    return best
