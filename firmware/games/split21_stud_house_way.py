"""Split 21 Stud: the splits of a five-card hand and the house way (rules/split21-stud.md, step 4).

A five-card hand is split into a HIGH and a LOW blackjack hand of 2 + 3 or 3 + 2 cards (seed
US 6,179,293, "Additional preferred specific rules" 4: "All five cards must be played ... with a
minimum of two cards and a maximum of three cards in both the low and high blackjack hands"). That
gives exactly 20 splits: the 10 two-card subsets as HIGH (the other three cards LOW) and the 10
three-card subsets as HIGH (the other two LOW).

Hands rank by :func:`firmware.cards.blackjack.blackjack_rank`: every bust hand ranks 0, below every
live hand; live hands rank by total, and a two-card 21 beats a three-card 21 (patent rules 5, 6, 7).
A split whose HIGH hand ranks below its LOW hand is **foul** (patent rule 2; rules step 4: "the HIGH
hand must rank at least as high as the LOW hand"). Every other split is **legal**; at least ten are,
since swapping the two hands of a foul split gives a legal one.

House way (rules step 4, used for the house's hand always and for a player who asks for it or lets
the setting time run out). Among the legal splits choose the one that

(a) busts the fewest hands, then
(b) maximises the HIGH hand's rank, then
(c) maximises the LOW hand's rank;

ties are broken by the **lowest card indices**: the split whose HIGH hand's *positions* - the
indices 0..4 of its cards in the order the five cards were dealt to the hand, taken in ascending
order - form the lexicographically smallest tuple (Python tuple order, in which a tuple that is a
prefix of another is the smaller: ``(0, 1) < (0, 1, 2) < (0, 2)``). Two splits never have the same
HIGH positions, so the choice is unique.

Pure functions over card indexes (ints 0..51) and positions; no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import NamedTuple, TypeVar

from firmware.cards.blackjack import BUST_RANK, blackjack_rank

#: a card, or its index: the setting picks from whatever the hand holds
C = TypeVar("C", bound=int)

__all__ = ["HAND_SIZE", "Split", "house_way", "split_of", "splits"]

#: Cards in a Split 21 Stud hand.
HAND_SIZE = 5

#: The 10 two-card position sets (ascending, lexicographic order) and their three-card complements.
_PAIRS: tuple[tuple[int, ...], ...] = tuple(combinations(range(HAND_SIZE), 2))
_TRIPLES: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i in range(HAND_SIZE) if i not in pair) for pair in _PAIRS
)


class Split(NamedTuple):
    """One split of a five-card hand, by positions (indices 0..4 in dealt order, ascending)."""

    high: tuple[int, ...]
    low: tuple[int, ...]
    high_rank: int
    low_rank: int

    @property
    def foul(self) -> bool:
        """HIGH ranks below LOW: a wrongly set hand (patent rule 2)."""
        return self.high_rank < self.low_rank

    @property
    def busts(self) -> int:
        """How many of the two hands are over 21 (0, 1 or 2)."""
        return (self.high_rank == BUST_RANK) + (self.low_rank == BUST_RANK)

    def high_cards(self, cards: Sequence[C]) -> list[C]:
        return [cards[i] for i in self.high]

    def low_cards(self, cards: Sequence[C]) -> list[C]:
        return [cards[i] for i in self.low]


def _check(cards: Sequence[int]) -> None:
    if len(cards) != HAND_SIZE:
        raise ValueError(f"a Split 21 Stud hand has {HAND_SIZE} cards, not {len(cards)}")


def splits(cards: Sequence[int]) -> list[Split]:
    """All 20 splits of ``cards`` (five cards in dealt order), foul ones included.

    Order: the ten two-card HIGH hands, then the ten three-card HIGH hands, each in lexicographic
    order of their positions.
    """
    _check(cards)
    out: list[Split] = []
    pair_ranks = [blackjack_rank([cards[i] for i in p]) for p in _PAIRS]
    triple_ranks = [blackjack_rank([cards[i] for i in t]) for t in _TRIPLES]
    for pair, triple, rp, rt in zip(_PAIRS, _TRIPLES, pair_ranks, triple_ranks, strict=True):
        out.append(Split(pair, triple, rp, rt))
    for pair, triple, rp, rt in zip(_PAIRS, _TRIPLES, pair_ranks, triple_ranks, strict=True):
        out.append(Split(triple, pair, rt, rp))
    return out


def _house_way_key(split: Split) -> tuple[int, int, int, tuple[int, ...]]:
    return (split.busts, -split.high_rank, -split.low_rank, split.high)


def house_way(cards: Sequence[int]) -> Split:
    """The house way's split of ``cards`` (five cards in dealt order); see the module docstring.

    >>> from firmware.cards.card import parse_cards
    >>> s = house_way(parse_cards("Kd 9s As 5h 6c"))     # A+K = 21 in two cards; 9+5+6 = 20
    >>> s.high, s.low
    ((0, 2), (1, 3, 4))
    """
    return min((s for s in splits(cards) if not s.foul), key=_house_way_key)


def split_of(cards: Sequence[int], high: Sequence[int]) -> Split:
    """The split of ``cards`` whose HIGH hand holds the cards at positions ``high``.

    ``high`` must be 2 or 3 distinct positions 0..4; the LOW hand is the rest. A foul split is
    returned as it is (its :attr:`Split.foul` is true): refusing it is the caller's choice.
    """
    _check(cards)
    chosen = tuple(sorted(high))
    if len(chosen) not in (2, 3) or len(set(chosen)) != len(chosen) or not all(
        0 <= i < HAND_SIZE for i in chosen
    ):
        raise ValueError(f"a HIGH hand is 2 or 3 distinct positions 0..4, not {list(high)}")
    rest = tuple(i for i in range(HAND_SIZE) if i not in chosen)
    return Split(
        chosen,
        rest,
        blackjack_rank([cards[i] for i in chosen]),
        blackjack_rank([cards[i] for i in rest]),
    )
