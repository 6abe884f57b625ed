"""Four-card poker categories for Baccarat War's FOUR_CARD side bet (rules/baccarat-war.md).

The hand is the seat's two initial cards plus the dealer's two initial cards, dealt from a shoe of
several decks, so identical cards can meet. Categories (a hand takes the first that applies, in this
order, which is the rules' 8-deck order, rarest first):

1. suited four of a kind: four identical cards (same rank and suit; needs two decks or more);
2. straight flush: four consecutive ranks of one suit;
3. four of a kind: four cards of one rank;
4. straight: four consecutive ranks; A-2-3-4 (ace low) and J-Q-K-A (ace high) count, no
   wrap-around (Q-K-A-2 is not a straight);
5. flush: four cards of one suit (with several decks a flush may hold a pair, two pair or trips:
   it is still a flush, the rarer category);
6. two pair; 7. three of a kind; 8. pair; 9. high card.

The pay table ranks the categories by their rarity in the configured shoe.
:func:`four_card_counts` counts, exactly, how many of the 4-card hands a shoe can deal fall into
each category, and :func:`four_card_rarity_order` sorts the categories by those counts. A shoe is a
multiset: a card present ``m`` times contributes ``C(m, k)`` ways to hold ``k`` copies of it, so an
8-deck shoe gives ``C(416, 4)`` hands in all. The count enumerates the multisets of four of the
(at most 52) distinct cards, 341,055 of them, weighted by products of binomials; it never walks the
``C(416, 4)`` hands one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import IntEnum
from functools import lru_cache
from itertools import chain, combinations_with_replacement
from math import comb

import numpy as np
import numpy.typing as npt

from firmware.cards.errors import CardError
from firmware.cards.hand_keys import card_array

__all__ = [
    "FourCardCategory", "category4", "category4_batch", "four_card_counts", "four_card_rarity_order",
]


class FourCardCategory(IntEnum):
    """Four-card categories; the values follow the classification precedence (8-deck rarity),
    so a higher value is the rarer category with 8 decks."""

    HIGH_CARD = 1
    PAIR = 2
    THREE_OF_A_KIND = 3
    TWO_PAIR = 4
    FLUSH = 5
    STRAIGHT = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    SUITED_FOUR_OF_A_KIND = 9


_F4 = FourCardCategory

#: Most copies of one card a counted shoe may hold (keeps every count exact in 64-bit integers).
MAX_COPIES = 1000
#: Straights as sorted rank tuples: A-2-3-4 (ace as 14) up to J-Q-K-A.
_STRAIGHTS = frozenset(
    [(2, 3, 4, 14)] + [tuple(range(lo, lo + 4)) for lo in range(2, 12)]
)


def category4(cards: Sequence[int]) -> FourCardCategory:
    """The :class:`FourCardCategory` of exactly four cards (ints 0..51, repeats allowed).

    >>> from firmware.cards.card import parse_cards
    >>> category4(parse_cards("As 2h 3d 4c")).name
    'STRAIGHT'
    >>> category4(parse_cards("Qs Kh Ad 2c")).name
    'HIGH_CARD'
    """
    if len(cards) != 4:
        raise ValueError(f"category4 needs exactly four cards, not {len(cards)}")
    ranks = sorted(c // 4 + 2 for c in cards)
    suited = len({c & 3 for c in cards}) == 1
    distinct = len(set(ranks))
    if distinct == 1:
        return _F4.SUITED_FOUR_OF_A_KIND if suited else _F4.FOUR_OF_A_KIND
    if distinct == 4 and tuple(ranks) in _STRAIGHTS:
        return _F4.STRAIGHT_FLUSH if suited else _F4.STRAIGHT
    if suited:
        return _F4.FLUSH
    if distinct == 2:
        return _F4.TWO_PAIR if ranks[1] != ranks[2] else _F4.THREE_OF_A_KIND
    if distinct == 3:
        return _F4.PAIR
    return _F4.HIGH_CARD


def category4_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """:class:`FourCardCategory` values of an ``[N, 4]`` array of card indexes (one hand per row)."""
    arr = card_array(hands, (4,))
    ranks = np.sort(arr // 4 + 2, axis=1)
    suits = arr & 3
    suited = (suits == suits[:, :1]).all(axis=1)
    eq = ranks[:, 1:] == ranks[:, :-1]            # equal neighbours, [N, 3]
    distinct = 4 - eq.sum(axis=1)
    run = (ranks[:, 3] - ranks[:, 0] == 3) & (distinct == 4)
    wheel = (ranks == np.array([2, 3, 4, 14])).all(axis=1)
    straight = run | wheel
    out = np.full(arr.shape[0], int(_F4.HIGH_CARD), dtype=np.int8)
    out[distinct == 3] = _F4.PAIR
    out[(distinct == 2) & eq[:, 1]] = _F4.THREE_OF_A_KIND   # x x x y or x y y y
    out[(distinct == 2) & ~eq[:, 1]] = _F4.TWO_PAIR         # x x y y
    out[suited] = _F4.FLUSH
    out[straight] = _F4.STRAIGHT
    out[straight & suited] = _F4.STRAIGHT_FLUSH
    out[distinct == 1] = _F4.FOUR_OF_A_KIND
    out[(distinct == 1) & suited] = _F4.SUITED_FOUR_OF_A_KIND
    return out


def _multiplicities(shoe: Iterable[int] | Mapping[int, int]) -> tuple[int, ...]:
    """How many of each of the 52 cards the shoe holds."""
    m = [0] * 52
    items = shoe.items() if isinstance(shoe, Mapping) else ((c, 1) for c in shoe)
    for card, n in items:
        if not isinstance(card, int | np.integer) or isinstance(card, bool) or not 0 <= card < 52:
            raise CardError(f"a shoe holds cards 0..51, not {card!r}")
        if not isinstance(n, int | np.integer) or not 0 <= n <= MAX_COPIES:
            raise CardError(f"card {card}: multiplicity must be 0..{MAX_COPIES}, not {n!r}")
        m[int(card)] += int(n)
    if max(m) > MAX_COPIES:
        raise CardError(f"a shoe may hold at most {MAX_COPIES} copies of a card")
    if sum(m) < 4:
        raise CardError("a shoe for the FOUR_CARD count needs at least four cards")
    return tuple(m)


@lru_cache(maxsize=32)
def _counts(mult: tuple[int, ...]) -> tuple[int, ...]:
    """Hands per category (index = category value) for the shoe of these multiplicities."""
    present = [c for c in range(52) if mult[c] > 0]
    n = len(present)
    total_rows = comb(n + 3, 4)
    idx = np.fromiter(
        chain.from_iterable(combinations_with_replacement(range(n), 4)),
        dtype=np.int8, count=4 * total_rows,
    ).reshape(total_rows, 4)
    cards = np.array(present, dtype=np.int8)[idx]            # sorted rows: equal cards adjacent
    m = np.array(mult, dtype=np.int64)[cards]
    # t[p]: how many earlier positions hold the same card as position p (rows are sorted).
    same = cards[:, 1:] == cards[:, :-1]
    t1 = same[:, 0].astype(np.int64)
    t2 = same[:, 1] * (t1 + 1)
    t3 = same[:, 2] * (t2 + 1)
    # prod over distinct cards of C(m, k) = prod_p (m_p - t_p) / (t_p + 1), exact in integers.
    num = m[:, 0] * (m[:, 1] - t1) * (m[:, 2] - t2) * (m[:, 3] - t3)
    den = (t1 + 1) * (t2 + 1) * (t3 + 1)
    weight = num // den
    cats = category4_batch(cards)
    out = [0] * (len(_F4) + 1)
    for cat in _F4:
        out[cat] = int(weight[cats == cat].sum())
    return tuple(out)


def four_card_counts(shoe: Iterable[int] | Mapping[int, int]) -> dict[FourCardCategory, int]:
    """Exact number of 4-card hands of each category drawn without replacement from ``shoe``.

    ``shoe`` is a sequence of cards (``standard_shoe(8)``) or a composition ``{card: count}``.
    Identical cards are distinct physical cards, so the counts add up to ``C(len(shoe), 4)``.
    """
    counts = _counts(_multiplicities(shoe))
    return {cat: counts[cat] for cat in sorted(_F4, reverse=True)}


def four_card_rarity_order(shoe: Iterable[int] | Mapping[int, int]) -> list[FourCardCategory]:
    """The categories best (rarest) first for this shoe; equal counts keep the precedence order.

    A category the shoe cannot deal at all (a suited four of a kind from one deck) has count 0 and
    comes first; a pay table should not pay it (the game's options refuse that).
    """
    counts = four_card_counts(shoe)
    return sorted(counts, key=lambda cat: (counts[cat], -int(cat)))
