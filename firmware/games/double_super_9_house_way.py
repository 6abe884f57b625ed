"""Double Super 9: the settings of a four-card hand and the house way (rules/double-super-9.md, step 4).

A spot's four cards are set as a FRONT and a BACK two-card hand (seed US 2004/0007815 A1, rule 35
[0047]: "The players set their hands by making a front 2 card hands and a back 2 card hands"). Four
cards fall into two pairs of cards in exactly **three** ways (positions {0,1}+{2,3}, {0,2}+{1,3},
{0,3}+{1,2}); either half of a split can be the FRONT, so there are six *settings*. Hands rank by
:func:`firmware.cards.super9.super9_rank` (pairs, then points, then the higher card; equal ranks are
a copy). A setting whose FRONT ranks above its BACK is **foul** (rule 35: "The back 2 card hands must
rank higher than or at least, be even to the front 2 card hands"; rule 25 [0037]). Every split has a
legal setting (put its higher hand at the BACK), so every hand has at least three legal settings.

House way (rules step 4, seed rule 39 [0051]; always used for the banker's hand, and for a player
who asks for it or lets the setting time run out). Among the legal settings choose the one that

(a) maximises the BACK hand's rank, then
(b) maximises the FRONT hand's rank;

ties are broken by the **lowest card indices**: the setting whose BACK hand's *positions* - the
indices 0..3 of its cards in the order the four cards were dealt to the spot, ascending - form the
lexicographically smallest pair. Two settings never share BACK positions, so the choice is unique.
Ties happen only with repeated values: 6s 6h 6d 3c sets a pair of sixes at the BACK and 6-3 (Super 9)
in FRONT three ways; the house way takes the BACK at positions (0, 1), 6s 6h.

Pure functions over card indexes (ints 0..51, only A-6) and positions; no I/O, no state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, TypeVar

from firmware.cards.super9 import super9_rank

#: a card, or its index: the setting picks from whatever the hand holds
C = TypeVar("C", bound=int)

__all__ = ["HAND_SIZE", "SPLITS", "Setting", "house_way", "setting_of", "settings"]

#: Cards a spot holds.
HAND_SIZE = 4

#: The three splits of positions 0..3 into two pairs, each pair ascending, the one holding 0 first.
SPLITS: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((0, 1), (2, 3)),
    ((0, 2), (1, 3)),
    ((0, 3), (1, 2)),
)


class Setting(NamedTuple):
    """One setting of a four-card hand, by positions (indices 0..3 in dealt order, ascending)."""

    front: tuple[int, int]
    back: tuple[int, int]
    front_rank: int
    back_rank: int

    @property
    def foul(self) -> bool:
        """The FRONT outranks the BACK: a wrongly set hand (seed rule 25 [0037])."""
        return self.front_rank > self.back_rank

    def front_cards(self, cards: Sequence[C]) -> list[C]:
        return [cards[i] for i in self.front]

    def back_cards(self, cards: Sequence[C]) -> list[C]:
        return [cards[i] for i in self.back]


def _check(cards: Sequence[int]) -> None:
    if len(cards) != HAND_SIZE:
        raise ValueError(f"a Double Super 9 spot holds {HAND_SIZE} cards, not {len(cards)}")


def settings(cards: Sequence[int]) -> list[Setting]:
    """All six settings of ``cards`` (four cards in dealt order), foul ones included.

    Order: for each split of :data:`SPLITS` in turn, first its pair holding position 0 as the FRONT,
    then the same split the other way round.
    """
    _check(cards)
    out: list[Setting] = []
    for a, b in SPLITS:
        ra = super9_rank(cards[a[0]], cards[a[1]])
        rb = super9_rank(cards[b[0]], cards[b[1]])
        out.append(Setting(a, b, ra, rb))
        out.append(Setting(b, a, rb, ra))
    return out


def _house_way_key(setting: Setting) -> tuple[int, int, tuple[int, int]]:
    return (-setting.back_rank, -setting.front_rank, setting.back)


def house_way(cards: Sequence[int]) -> Setting:
    """The house way's setting of ``cards`` (four cards in dealt order); see the module docstring.

    >>> from firmware.cards.card import parse_cards
    >>> s = house_way(parse_cards("6s 3h 5d 5c"))   # Pair of Fives at the BACK, Super 9 in FRONT
    >>> s.front, s.back
    ((0, 1), (2, 3))
    """
    return min((s for s in settings(cards) if not s.foul), key=_house_way_key)


def setting_of(cards: Sequence[int], front: Sequence[int]) -> Setting:
    """The setting of ``cards`` whose FRONT holds the cards at positions ``front``.

    ``front`` must be 2 distinct positions 0..3; the BACK is the other two. A foul setting is
    returned as it is (its :attr:`Setting.foul` is true): refusing it is the caller's choice.
    """
    _check(cards)
    chosen = tuple(sorted(front))
    if len(chosen) != 2 or chosen[0] == chosen[1] or not all(0 <= i < HAND_SIZE for i in chosen):
        raise ValueError(f"a FRONT hand is 2 distinct positions 0..3, not {list(front)}")
    rest = tuple(i for i in range(HAND_SIZE) if i not in chosen)
    f = (chosen[0], chosen[1])
    b = (rest[0], rest[1])
    return Setting(
        f, b, super9_rank(cards[f[0]], cards[f[1]]), super9_rank(cards[b[0]], cards[b[1]])
    )
