"""Where a table's cards come from: the certified RNG (a virtual dealer), the card-reading shoe, or a
stacked list (tests, ``egm table serve --stack FILE``) dealt in order across rounds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from firmware.cards.card import Card, parse_card
from firmware.cards.source import CardSource, PhysicalShoeSource, RngShoe, StackedSource
from firmware.rng.interface import RandomSource

SOURCES = ("rng", "physical", "stacked")


class StackedSupply(StackedSource):
    """One list of cards dealt in order, round after round, from :attr:`pos` (a restarted controller
    goes on from where its journal says the stack stood). Running out is a misdeal at the table."""

    def __init__(self, cards: Sequence[str | int | Card], start: int = 0) -> None:
        super().__init__(parse_card(c) if isinstance(c, str) else Card(c) for c in cards)
        self.pos = start

    @property
    def pos(self) -> int:
        """The place of the next card in the list."""
        return self._pos

    @pos.setter
    def pos(self, value: int) -> None:
        self._pos = value


class ObservedSource:
    """A round's card source that counts what it dealt (a misdeal journals the cards seen) and, before
    each card, calls ``card_wanted`` (the card-reading shoe: the dealer is asked for the next card)."""

    def __init__(self, source: Any, card_wanted: Callable[[], None] | None = None) -> None:
        self._source = source
        self._card_wanted = card_wanted
        self.kind = source.kind
        self.exhaustion_is_misdeal = getattr(source, "exhaustion_is_misdeal", True)
        self.dealt: list[Card] = []

    def next_card(self) -> Card:
        if self._card_wanted is not None:
            self._card_wanted()
        card: Card = self._source.next_card()
        self.dealt.append(card)
        return card

    def new_round(self) -> None:
        self._source.new_round()
        self.dealt = []


class CardSupply:
    """Gives the controller a card source for each round and, after a power cut, the continuation of
    an interrupted round (None: resume deals the rest from an RNG shoe of the cards not dealt)."""

    def __init__(self, kind: str, *, rng: RandomSource | None = None, shoe_cards: Callable[[], Sequence[int]] | None = None,
                 shoe: Any = None, stack: StackedSupply | None = None, shoe_timeout_s: float | None = 30.0) -> None:
        if kind not in SOURCES:
            raise ValueError(f"card source {kind!r}: one of {', '.join(SOURCES)}")
        self.kind = kind
        self._rng = rng
        self._shoe_cards = shoe_cards
        self._physical = PhysicalShoeSource(shoe, timeout=shoe_timeout_s) if shoe is not None else None
        self.stack = stack
        self._rng_shoe: RngShoe | None = None
        #: Called before each card from the shoe (a live dealer's prompt; the simulated shoe's
        #: dealer draws one). None: nothing to ask.
        self.card_wanted: Callable[[], None] | None = None

    def source(self) -> CardSource:
        if self.kind == "stacked":
            assert self.stack is not None, "a stacked table is given its cards"
            return self.stack
        if self.kind == "physical":
            assert self._physical is not None, "a physical table is given its shoe"
            return self._physical
        if self._rng_shoe is None:
            assert self._rng is not None and self._shoe_cards is not None
            self._rng_shoe = RngShoe(self._rng, self._shoe_cards())
        return self._rng_shoe

    def observed(self) -> ObservedSource:
        """This round's source, observed."""
        return ObservedSource(self.source(), self.card_wanted if self.kind == "physical" else None)

    def continuation(self) -> Any:
        """What a resumed round deals from after its journaled cards (None: the RNG's rest of the shoe)."""
        if self.kind == "rng":
            return None
        return self.observed() if self.kind == "physical" else self.source()

    @property
    def rng(self) -> RandomSource | None:
        return self._rng
