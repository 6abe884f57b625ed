"""Playing cards and their notation.

A card is an ``int`` from 0 to 51, ``(rank - 2) * 4 + suit``, with rank 2..14 (ace high = 14) and
suit 0..3 for ``s h d c``. Being an ``int`` keeps cards hashable, cheap to compare and usable as
indexes into the evaluators' lookup tables. The 52 instances are interned: ``Card.parse("As") is
CARDS[51]``.

Notation (CONTRACTS.md): rank ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` also accepted), suit ``s h d c``;
a card list is space- or comma-separated; output always uses the two-character form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from firmware.cards.errors import CardError

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "shdc"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
RANK_NAMES = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
    10: "ten", 11: "jack", 12: "queen", 13: "king", 14: "ace",
}

_RANK_OF_CHAR = {c: i + 2 for i, c in enumerate(RANK_CHARS)}
_SUIT_OF_CHAR = {c: i for i, c in enumerate(SUIT_CHARS)}


class Card(int):
    """One playing card; see the module docstring for the encoding."""

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if isinstance(index, Card):
            return index
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 52:
            raise CardError(f"card index must be an integer 0..51, not {index!r}")
        try:
            return CARDS[index]
        except NameError:  # while CARDS itself is being built
            return super().__new__(cls, index)

    @classmethod
    def of(cls, rank: int, suit: int) -> Card:
        """The card of ``rank`` (2..14, ace = 14; 1 is also read as ace) and ``suit`` (0..3)."""
        if rank == 1:
            rank = 14
        if not (2 <= rank <= 14 and 0 <= suit <= 3):
            raise CardError(f"no card of rank {rank!r} and suit {suit!r}")
        return CARDS[(rank - 2) * 4 + suit]

    @classmethod
    def parse(cls, text: str) -> Card:
        return parse_card(text)

    @property
    def rank(self) -> int:
        """2..14, ace high."""
        return int(self) // 4 + 2

    @property
    def suit(self) -> int:
        """0..3 for s, h, d, c."""
        return int(self) % 4

    @property
    def rank_char(self) -> str:
        return RANK_CHARS[int(self) // 4]

    @property
    def suit_char(self) -> str:
        return SUIT_CHARS[int(self) % 4]

    @property
    def baccarat_value(self) -> int:
        """A = 1, 2-9 face value, 10/J/Q/K = 0."""
        return BACCARAT_VALUE[int(self)]

    @property
    def blackjack_value(self) -> int:
        """A = 1 (soft handling is the evaluator's job), 2-10 face value, J/Q/K = 10."""
        return BLACKJACK_VALUE[int(self)]

    @property
    def point_value(self) -> int:
        """Point value used by the ``aggregate`` war mode: A = 1, 2-10 face, J/Q/K = 10."""
        return BLACKJACK_VALUE[int(self)]

    def __str__(self) -> str:
        return RANK_CHARS[int(self) // 4] + SUIT_CHARS[int(self) % 4]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (int(self),))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


CARDS: tuple[Card, ...] = tuple(int.__new__(Card, i) for i in range(52))

BACCARAT_VALUE: tuple[int, ...] = tuple(
    (1 if r == 14 else (r if r < 10 else 0)) for r in (i // 4 + 2 for i in range(52))
)
BLACKJACK_VALUE: tuple[int, ...] = tuple(
    (1 if r == 14 else min(r, 10)) for r in (i // 4 + 2 for i in range(52))
)

_SPLIT = re.compile(r"[\s,]+")


def parse_card(text: str) -> Card:
    """Read one card such as ``As``, ``Td``, ``10d`` or ``7c``; raise :class:`CardError` otherwise."""
    if not isinstance(text, str):
        raise CardError(f"a card must be a string such as 'As', not {type(text).__name__}")
    s = text.strip()
    if len(s) == 3 and s[:2] == "10":
        rank_part, suit_part = "T", s[2]
    elif len(s) == 2:
        rank_part, suit_part = s[0].upper(), s[1]
    else:
        raise CardError(
            f"bad card {text!r}: expected a rank (A 2-9 T J Q K, or 10) and a suit (s h d c), e.g. 'As'"
        )
    rank = _RANK_OF_CHAR.get(rank_part)
    suit = _SUIT_OF_CHAR.get(suit_part.lower())
    if rank is None:
        raise CardError(f"bad card {text!r}: unknown rank {rank_part!r} (use A 2-9 T J Q K or 10)")
    if suit is None:
        raise CardError(f"bad card {text!r}: unknown suit {suit_part!r} (use s h d c)")
    return CARDS[(rank - 2) * 4 + suit]


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Read a space- or comma-separated card list (or an iterable of card strings)."""
    parts = [p for p in _SPLIT.split(text.strip()) if p] if isinstance(text, str) else list(text)
    return [parse_card(p) for p in parts]


def format_cards(cards: Iterable[int]) -> list[str]:
    """The two-character JSON form of each card."""
    return [str(Card(c)) for c in cards]
