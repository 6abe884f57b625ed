"""Five-card poker hands: the strength of five cards and of the best five of six or seven.

Used by Hold'em War (best five of two hole cards and five community cards, :func:`eval7`), Split 21
Stud's ANTE and JACKPOT (all five cards, :func:`eval5`), the Three Card Poker SIX_CARD bonus (best five
of six, :func:`best5`) and the math tools (the ``*_batch`` forms over numpy arrays of card indexes).

Strength
--------
Every function returns an ``int`` **strength: higher is better, equal means an exact tie**. The
strength is self-describing: ``category << 20`` plus up to five 4-bit ranks (2..14, ace high) that
decide the hand within its category, most significant first:

================  ==========================================  =============================
category          deciding ranks                              example
================  ==========================================  =============================
straight flush    top card (5 for the A-2-3-4-5 wheel)        9-high: ``9``
four of a kind    quad rank, kicker                           ``K K K K 7``: ``K, 7``
full house        trips rank, pair rank                       ``K K K 5 5``: ``K, 5``
flush             the five ranks, highest first               ``A, J, 8, 4, 2``
straight          top card (5 for the wheel)                  ``T``
three of a kind   trips rank, kickers high to low             ``7, A, 3``
two pair          high pair, low pair, kicker                 ``K, 5, 9``
pair              pair rank, kickers high to low              ``J, 9, 8, 2``
high card         the five ranks, highest first               ``A, Q, 7, 5, 3``
================  ==========================================  =============================

From one 52-card deck this gives exactly the 7,462 distinct classes of standard poker (tested
against an independent evaluator over all 2,598,960 hands). :func:`category` and :func:`describe`
read a strength back.

Several decks
-------------
Hold'em War deals from a multi-deck shoe, so identical cards can meet. The ranking extends the
standard one without changing any single-deck result:

* five cards of one rank are a **five of a kind**, above a straight flush;
* five cards of one suit that hold a pair, two pair or trips are a **flush** (a flush beats those
  categories); suited quads and a suited full house stay four of a kind and full house. A flush
  compares its five ranks highest first, repeats included (``A A K Q J`` beats ``A K Q J 9``).

Method
------
(The card keys are shared with three-card poker: :mod:`firmware.cards.hand_keys`.) Each card ``c`` (``rank = c // 4 + 2``, ``suit = c % 4``) has a precomputed key: ``8 ** (rank - 2)``
(an octal digit per rank counts how many cards of that rank are in the hand: at most 7 of seven
cards) plus a one in its suit's 4-bit counter above bit 40. The counters start at 3 (the bias rides
on the first card's key), so a counter's bit 3 is set exactly when its suit holds five cards or more.
Adding the keys of the cards gives, in one integer, the hand's rank multiset and whether (and in
which suit) it holds a flush. Two tables, built once at import from a direct classification of every
5-card rank multiset, map a multiset of 5, 6 or 7 ranks to its best 5-card strength: ``_NONFLUSH``
(suits ignored) and ``_SUITED`` (all cards of one suit). Six- and seven-card entries are the best of
their sub-multisets one card smaller, computed with numpy.

With seven cards, when one suit holds five or more the best hand is the better of the best suited
five of that suit and the best hand from ranks alone (from one deck that is always the flush or
straight flush; from several decks a quads or full house can still beat it).

Cards are plain ints 0..51 (a :class:`~firmware.cards.card.Card` is an ``int``); the scalar functions
do not validate them (callers hold :class:`Card` objects, which are validated on creation); the batch
functions check the array.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from itertools import combinations
from math import comb

import numpy as np
import numpy.typing as npt

from firmware.cards.hand_keys import (
    CARD_KEY,
    CARD_KEY_A,
    FLUSH_BITS,
    NAME,
    PLURAL,
    RANK_KEY,
    RANK_KEY_A,
    RANK_MASK,
    SUIT_SHIFT,
    card_array,
    first_keys,
    freeze,
    frozen,
    suit_bias,
)

__all__ = [
    "HandCategory", "best5", "best5_batch", "category", "category_batch", "describe", "eval5",
    "eval5_batch", "eval7", "eval7_batch", "tiebreak_ranks",
]


class HandCategory(IntEnum):
    """Poker hand categories, weakest first (``FIVE_OF_A_KIND`` only with several decks)."""

    HIGH_CARD = 1
    PAIR = 2
    TWO_PAIR = 3
    THREE_OF_A_KIND = 4
    STRAIGHT = 5
    FLUSH = 6
    FULL_HOUSE = 7
    FOUR_OF_A_KIND = 8
    STRAIGHT_FLUSH = 9
    FIVE_OF_A_KIND = 10


#: A strength is ``category << CATEGORY_SHIFT | deciding ranks``.
CATEGORY_SHIFT = 20

_HC = HandCategory


def _pack(cat: HandCategory, ranks: Sequence[int]) -> int:
    """The strength of a hand of category ``cat`` decided by ``ranks`` (most significant first)."""
    r = (*ranks, 0, 0, 0, 0)
    return (int(cat) << 20) | (r[0] << 16) | (r[1] << 12) | (r[2] << 8) | (r[3] << 4) | r[4]


def _straight_high(ranks_desc: Sequence[int]) -> int:
    """Top card of a straight made by five distinct ranks given high to low (5 = wheel), else 0."""
    if ranks_desc[0] - ranks_desc[4] == 4:
        return ranks_desc[0]
    if list(ranks_desc) == [14, 5, 4, 3, 2]:
        return 5
    return 0


# --- card keys ------------------------------------------------------------------------------------
#: ``(key >> _FLAG_SHIFT) & 0x1111`` has one bit, ``1 << 4 * suit``, for the flush suit.
_FLAG_SHIFT = SUIT_SHIFT + 3
_SUIT_OF_FLAG = {1: 0, 0x10: 1, 0x100: 2, 0x1000: 3}
_FIRST_KEY: tuple[int, ...] = first_keys(5)
_SUIT_BIAS = suit_bias(5)
_P8 = np.array([8**i for i in range(13)], dtype=np.int64)


# --- tables ---------------------------------------------------------------------------------------
def _table5() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every multiset of five ranks: sorted keys, strengths off-suit, strengths all one suit.

    This is the reference classification from which every other table is built; it generates each
    rank pattern directly (6,188 multisets: 1,287 + 2,860 + 858 + 858 + 156 + 156 + 13).
    """
    rows: list[tuple[int, int, int]] = []

    def add(ranks: Sequence[int], plain: int, suited: int | None = None) -> None:
        key = sum(8 ** (r - 2) for r in ranks)
        if suited is None:  # a paired hand of one suit is a flush (several decks)
            suited = _pack(_HC.FLUSH, sorted(ranks, reverse=True))
        rows.append((key, plain, suited))

    desc = range(14, 1, -1)
    for five in combinations(desc, 5):
        high = _straight_high(five)
        if high:
            add(five, _pack(_HC.STRAIGHT, [high]), _pack(_HC.STRAIGHT_FLUSH, [high]))
        else:
            add(five, _pack(_HC.HIGH_CARD, five), _pack(_HC.FLUSH, five))
    for p in desc:
        others = [r for r in desc if r != p]
        for three in combinations(others, 3):
            add((p, p, *three), _pack(_HC.PAIR, (p, *three)))
        for two in combinations(others, 2):
            add((p, p, p, *two), _pack(_HC.THREE_OF_A_KIND, (p, *two)))
        for k in others:
            full_house = _pack(_HC.FULL_HOUSE, (p, k))
            add((p, p, p, k, k), full_house, full_house)
            quads = _pack(_HC.FOUR_OF_A_KIND, (p, k))
            add((p, p, p, p, k), quads, quads)
        five_of_a_kind = _pack(_HC.FIVE_OF_A_KIND, (p,))
        add((p,) * 5, five_of_a_kind, five_of_a_kind)
    for hi, lo in combinations(desc, 2):
        for k in desc:
            if k != hi and k != lo:
                add((hi, hi, lo, lo, k), _pack(_HC.TWO_PAIR, (hi, lo, k)))
    rows.sort()
    arr = np.array(rows, dtype=np.int64)
    return arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy()


def _extend(keys: np.ndarray, nonflush: np.ndarray, suited: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tables for multisets one card larger: each entry is the best of its sub-multisets.

    Every larger multiset is generated once, from the parent that lacks one copy of its highest
    rank: a parent grows only by ranks at or above its own highest.
    """
    top = np.zeros(keys.shape, dtype=np.int64)
    for r in range(13):
        top[((keys >> (3 * r)) & 7) > 0] = r
    grow = np.arange(13)[None, :] >= top[:, None]
    big = np.sort((keys[:, None] + _P8[None, :])[grow])
    best_n = np.zeros(big.shape, dtype=np.int64)
    best_s = np.zeros(big.shape, dtype=np.int64)
    for r in range(13):
        has = ((big >> (3 * r)) & 7) > 0
        idx = np.searchsorted(keys, big[has] - _P8[r])
        best_n[has] = np.maximum(best_n[has], nonflush[idx])
        best_s[has] = np.maximum(best_s[has], suited[idx])
    return big, best_n, best_s


#: Per hand size (5, 6, 7): sorted rank-multiset keys, non-flush strengths, suited strengths.
_BY_SIZE: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {5: _table5()}
_BY_SIZE[6] = _extend(*_BY_SIZE[5])
_BY_SIZE[7] = _extend(*_BY_SIZE[6])
for _n, _t in _BY_SIZE.items():
    # Multisets of n of 13 ranks: C(n + 12, n); a wrong count would mean a corrupt table.
    if len(_t[0]) != comb(_n + 12, _n) or len(np.unique(_t[0])) != len(_t[0]):
        raise RuntimeError(f"poker5: bad {_n}-card table")
    freeze(*_t)

_ALL_KEYS = np.concatenate([_BY_SIZE[n][0] for n in (5, 6, 7)])
_order = np.argsort(_ALL_KEYS, kind="stable")
_ALL_KEYS = _ALL_KEYS[_order]
_ALL_SUITED = np.concatenate([_BY_SIZE[n][2] for n in (5, 6, 7)])[_order]
freeze(_ALL_KEYS, _ALL_SUITED)

_NONFLUSH: dict[int, int] = {}
_SUITED: dict[int, int] = {}
for _keys, _nf, _su in _BY_SIZE.values():
    _kl = _keys.tolist()
    _NONFLUSH.update(zip(_kl, _nf.tolist(), strict=True))
    _SUITED.update(zip(_kl, _su.tolist(), strict=True))
del _n, _t, _keys, _nf, _su, _kl, _order


# --- scalar evaluation ----------------------------------------------------------------------------
def eval5(a: int | Sequence[int], b: int | None = None, c: int | None = None,
          d: int | None = None, e: int | None = None) -> int:
    """Strength of exactly five cards: ``eval5(c1, c2, c3, c4, c5)`` or ``eval5(cards)``.

    >>> from firmware.cards.card import parse_cards
    >>> describe(eval5(parse_cards("Ks Kd 5h 5c 9s")))
    'Two Pair, Kings and Fives'
    """
    if b is None:
        try:
            a, b, c, d, e = a  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError("eval5 needs exactly five cards") from None
    k = _FIRST_KEY[a] + CARD_KEY[b] + CARD_KEY[c] + CARD_KEY[d] + CARD_KEY[e]  # type: ignore[index]
    if k & FLUSH_BITS:
        return _SUITED[k & RANK_MASK]
    return _NONFLUSH[k & RANK_MASK]


def eval7(cards: Sequence[int]) -> int:
    """Strength of the best five of exactly seven cards (Hold'em: two hole + five board cards).

    Direct method, no loop over the 21 five-card subsets: one table lookup on the rank multiset,
    plus a second on the flush suit's ranks when a suit holds five or more cards.
    """
    try:
        a, b, c, d, e, f, g = cards
    except (TypeError, ValueError):
        raise ValueError("eval7 needs exactly seven cards") from None
    ck = CARD_KEY
    k = _FIRST_KEY[a] + ck[b] + ck[c] + ck[d] + ck[e] + ck[f] + ck[g]
    if k & FLUSH_BITS:
        return _with_flush((a, b, c, d, e, f, g), k)
    return _NONFLUSH[k & RANK_MASK]


def best5(cards: Sequence[int]) -> int:
    """Strength of the best five of 5, 6 or 7 cards (the same result as the best of the subsets)."""
    n = len(cards)
    if not 5 <= n <= 7:
        raise ValueError(f"best5 needs 5 to 7 cards, not {n}")
    ck = CARD_KEY
    k = _SUIT_BIAS
    for x in cards:
        k += ck[x]
    if k & FLUSH_BITS:
        return _with_flush(cards, k)
    return _NONFLUSH[k & RANK_MASK]


def _with_flush(cards: Sequence[int], k: int) -> int:
    """Best strength of cards whose summed key ``k`` shows a suit with five or more cards."""
    suit = _SUIT_OF_FLAG[(k >> _FLAG_SHIFT) & 0x1111]
    rk = RANK_KEY
    fk = 0
    for x in cards:
        if x & 3 == suit:
            fk += rk[x]
    flush = _SUITED[fk]
    plain = _NONFLUSH[k & RANK_MASK]
    return flush if flush > plain else plain


# --- reading a strength back ------------------------------------------------------------------
def category(strength: int) -> HandCategory:
    """The :class:`HandCategory` of a strength."""
    return HandCategory(int(strength) >> CATEGORY_SHIFT)


def tiebreak_ranks(strength: int) -> tuple[int, ...]:
    """The ranks (2..14) that decide a hand within its category, most significant first."""
    s = int(strength)
    out = []
    for shift in (16, 12, 8, 4, 0):
        r = (s >> shift) & 0xF
        if r:
            out.append(r)
    return tuple(out)


def describe(strength: int) -> str:
    """A player-facing name such as ``'Two Pair, Kings and Fives'`` or ``'Full House, Kings over
    Fives'``."""
    cat = category(strength)
    r = tiebreak_ranks(strength)
    match cat:
        case HandCategory.FIVE_OF_A_KIND:
            return f"Five of a Kind, {PLURAL[r[0]]}"
        case HandCategory.STRAIGHT_FLUSH:
            return "Royal Flush" if r[0] == 14 else f"Straight Flush, {NAME[r[0]]} high"
        case HandCategory.FOUR_OF_A_KIND:
            return f"Four of a Kind, {PLURAL[r[0]]}"
        case HandCategory.FULL_HOUSE:
            return f"Full House, {PLURAL[r[0]]} over {PLURAL[r[1]]}"
        case HandCategory.FLUSH:
            return f"Flush, {NAME[r[0]]} high"
        case HandCategory.STRAIGHT:
            return f"Straight, {NAME[r[0]]} high"
        case HandCategory.THREE_OF_A_KIND:
            return f"Three of a Kind, {PLURAL[r[0]]}"
        case HandCategory.TWO_PAIR:
            return f"Two Pair, {PLURAL[r[0]]} and {PLURAL[r[1]]}"
        case HandCategory.PAIR:
            return f"Pair of {PLURAL[r[0]]}"
        case _:
            return f"High Card, {NAME[r[0]]}"


# --- batch evaluation -----------------------------------------------------------------------------
_FIRST_KEY_A = frozen(_FIRST_KEY)


def best5_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Strengths of an ``[N, k]`` array of card indexes, k = 5, 6 or 7 (best five of each row)."""
    arr = card_array(hands, (5, 6, 7))
    n = arr.shape[1]
    k = _FIRST_KEY_A[arr[:, 0]]
    for i in range(1, n):
        k = k + CARD_KEY_A[arr[:, i]]
    keys, nonflush, suited = _BY_SIZE[n]
    rk = k & RANK_MASK
    flush_rows = np.flatnonzero(k & FLUSH_BITS)
    out = nonflush[np.searchsorted(keys, rk)]
    if flush_rows.size:
        if n == 5:
            out[flush_rows] = suited[np.searchsorted(keys, rk[flush_rows])]
        else:
            flags = (k[flush_rows] >> _FLAG_SHIFT) & 0x1111
            suit = (flags > 1).astype(np.int64) + (flags > 0x10) + (flags > 0x100)
            sub = arr[flush_rows]
            fk = np.where((sub & 3) == suit[:, None], RANK_KEY_A[sub], 0).sum(axis=1)
            flush = _ALL_SUITED[np.searchsorted(_ALL_KEYS, fk)]
            out[flush_rows] = np.maximum(out[flush_rows], flush)
    strengths: npt.NDArray[np.int32] = out.astype(np.int32)
    return strengths


def eval5_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Strengths of an ``[N, 5]`` array of card indexes (one hand per row); same values as
    :func:`eval5`."""
    return best5_batch(card_array(hands, (5,)))


def eval7_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """Best-five strengths of an ``[N, 7]`` array of card indexes; same values as :func:`eval7`."""
    return best5_batch(card_array(hands, (7,)))


def category_batch(strengths: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """The :class:`HandCategory` values of an array of strengths."""
    return (np.asarray(strengths) >> CATEGORY_SHIFT).astype(np.int8)
