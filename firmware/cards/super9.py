"""Double Super 9 two-card hand ranking (rules/double-super-9.md, the product's house ranking).

The shoe holds only A, 2, 3, 4, 5, 6 (ace counts 1). Best first:

1. pairs, 6-6 > 5-5 > 4-4 > 3-3 > 2-2 > A-A; every pair beats every non-pair;
2. otherwise points: the sum mod 10, 9 ("super 9") highest down to 0;
3. equal points: the hand with the higher single card wins (6-3 beats 5-4);
4. same pair, or same points and same higher card: a copy (a tie).

:func:`super9_rank` returns an ``int`` key, higher is better and equal is a copy:
a pair ranks ``100 + value`` (101 for A-A ... 106 for 6-6); any other hand ranks
``10 * points + higher card value`` (at most 96, for 6-3).
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware.cards.errors import CardError

__all__ = ["PAIR_BASE", "describe_super9", "super9_points", "super9_rank", "super9_value"]

#: Ranks of pairs are ``PAIR_BASE + value``; every non-pair ranks below ``PAIR_BASE``.
PAIR_BASE = 100

#: Point value of each card index (A = 1, 2-6 face value); None for ranks the shoe does not hold.
_VALUE: tuple[int | None, ...] = tuple(
    1 if r == 14 else (r if r <= 6 else None) for r in (c // 4 + 2 for c in range(52))
)
_NAME = {1: "Ace", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}
_PLURAL = {1: "Aces", 2: "Twos", 3: "Threes", 4: "Fours", 5: "Fives", 6: "Sixes"}


def super9_value(card: int) -> int:
    """A card's point value (ace 1, 2-6 face value); :class:`CardError` for 7 to king."""
    try:
        v = _VALUE[card]
    except (IndexError, TypeError):
        v = None
    if v is None or isinstance(card, bool) or not 0 <= card < 52:
        raise CardError(f"Double Super 9 uses only A-6; card index {card!r} is not one of them")
    return v


def super9_points(c1: int, c2: int) -> int:
    """The hand's points: the sum of the two values mod 10."""
    return (super9_value(c1) + super9_value(c2)) % 10


def super9_rank(c1: int, c2: int) -> int:
    """Ranking key of a two-card hand: higher is better, equal is a copy.

    >>> from firmware.cards.card import parse_card as p
    >>> super9_rank(p("6s"), p("3h")) > super9_rank(p("5d"), p("4c"))
    True
    """
    v1 = super9_value(c1)
    v2 = super9_value(c2)
    if v1 == v2:
        return PAIR_BASE + v1
    return 10 * ((v1 + v2) % 10) + (v1 if v1 > v2 else v2)


def describe_super9(rank: int | Sequence[int]) -> str:
    """A player-facing name: ``'Pair of Sixes'``, ``'Super 9, Six high'``, ``'7 points, Five high'``.

    Takes a rank from :func:`super9_rank` or the two cards themselves.
    """
    if isinstance(rank, Sequence):
        if len(rank) != 2:
            raise CardError(f"a Double Super 9 hand has two cards, not {len(rank)}")
        rank = super9_rank(rank[0], rank[1])
    rank = int(rank)
    if not (0 <= rank <= 96 and 2 <= rank % 10 <= 6) and not PAIR_BASE < rank <= PAIR_BASE + 6:
        raise ValueError(f"{rank!r} is not a Double Super 9 rank")
    if rank > PAIR_BASE:
        return f"Pair of {_PLURAL[rank - PAIR_BASE]}"
    points, high = divmod(rank, 10)
    if points == 9:
        return f"Super 9, {_NAME[high]} high"
    return f"{points} point{'s' if points != 1 else ''}, {_NAME[high]} high"
