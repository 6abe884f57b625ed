"""Card sources: where a round's cards come from.

The rules engine only ever asks ``next_card()``; it never knows whether the card came from the
certified RNG, a stacked list (tests, ``egm round --cards``, replay) or a physical card-reading shoe.
Every source remembers what it dealt in ``dealt``, which the round record keeps, so any round replays
exactly from a :class:`StackedSource` over its dealt cards.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from firmware.cards.card import Card
from firmware.cards.errors import ShoeExhausted
from firmware.cards.shoe import check_taken
from firmware.rng.interface import RandomSource


@runtime_checkable
class CardSource(Protocol):
    """The one thing a game may do with cards it has not seen: take the next one."""

    dealt: list[Card]
    #: "rng", "stacked" or "physical"; the round record keeps it.
    kind: str
    #: Whether running out during a war is a misdeal (live shoes) or an error (a stacked list).
    exhaustion_is_misdeal: bool

    def next_card(self) -> Card:
        """The next card, or :class:`ShoeExhausted` when there is none."""
        ...

    def new_round(self) -> None:
        """Start a round: forget ``dealt``; an RNG shoe starts from a full, freshly shuffled shoe."""
        ...


class StackedSource:
    """Deals a fixed card list in order: ``--cards``, tests, and replay of a recorded round.

    Running out is an error of the stack (``egm round --cards`` fails cleanly) unless
    ``exhaustion_is_misdeal`` says otherwise: a replay of a round whose live shoe ran out during a
    war must end in the same misdeal. Given the game's ``shoe``, a stack the shoe cannot hold (a card
    it does not contain, or more copies than it holds) is a :class:`CardError` naming the card.
    """

    kind = "stacked"

    def __init__(self, cards: Iterable[int], *, exhaustion_is_misdeal: bool = False,
                 shoe: Sequence[int] | None = None) -> None:
        self.exhaustion_is_misdeal = exhaustion_is_misdeal
        self._cards = [Card(c) for c in cards]
        if shoe is not None:
            check_taken(shoe, self._cards)
        self._pos = 0
        self.dealt: list[Card] = []

    def next_card(self) -> Card:
        if self._pos >= len(self._cards):
            raise ShoeExhausted(
                f"the stacked cards ran out: {len(self._cards)} given, another one is needed"
            )
        card = self._cards[self._pos]
        self._pos += 1
        self.dealt.append(card)
        return card

    def new_round(self) -> None:
        self.dealt = []

    @property
    def remaining(self) -> int:
        return len(self._cards) - self._pos


class RngShoe:
    """A shoe shuffled by the certified RNG, freshly for every round.

    Dealing is a lazy Fisher-Yates shuffle: the k-th card dealt is chosen uniformly from the
    ``n - k`` cards not yet dealt and swapped into place. Dealing k cards this way has exactly the
    distribution of the first k cards of a full Fisher-Yates shuffle, but costs k random draws
    instead of n - 1. Starting the next round from the permuted array is equally uniform, so
    ``new_round`` only rewinds.
    """

    kind = "rng"
    #: A shoe too small for a long war (one deck, seven seats) ends that war in a misdeal.
    exhaustion_is_misdeal = True

    def __init__(self, rng: RandomSource, cards: Sequence[int]) -> None:
        if not cards:
            raise ShoeExhausted("a shoe needs at least one card")
        self._rng = rng
        self._cards = [Card(c) for c in cards]
        self._pos = 0
        self.dealt: list[Card] = []

    def next_card(self) -> Card:
        cards, i = self._cards, self._pos
        n = len(cards)
        if i >= n:
            raise ShoeExhausted(f"the shoe of {n} cards is empty")
        j = i + self._rng.randbelow(n - i)
        cards[i], cards[j] = cards[j], cards[i]
        self._pos = i + 1
        card = cards[i]
        self.dealt.append(card)
        return card

    def new_round(self) -> None:
        self._pos = 0
        self.dealt = []

    @property
    def size(self) -> int:
        return len(self._cards)

    @property
    def remaining(self) -> int:
        return len(self._cards) - self._pos


@runtime_checkable
class PhysicalShoe(Protocol):
    """What a card-reading shoe driver offers the card layer (seed 000, claim 4).

    ``read_card`` blocks until the dealer draws a card past the reader (or the timeout passes) and
    returns it; the adapter below turns it into a card source. A misread, jam or empty shoe raises
    (the HAL's device errors; ``ShoeExhausted`` for an empty shoe) so the round ends as a misdeal.
    """

    def read_card(self, timeout: float | None = None) -> Card: ...


class PhysicalShoeSource:
    """Adapts a physical card-reading shoe to :class:`CardSource`: cards in the order drawn."""

    kind = "physical"
    exhaustion_is_misdeal = True

    def __init__(self, shoe: PhysicalShoe, timeout: float | None = 30.0) -> None:
        self._shoe = shoe
        self._timeout = timeout
        self.dealt: list[Card] = []

    def next_card(self) -> Card:
        card = Card(self._shoe.read_card(self._timeout))
        self.dealt.append(card)
        return card

    def new_round(self) -> None:
        self.dealt = []
