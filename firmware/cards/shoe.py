"""Shoe compositions: which cards, with what multiplicity, a shoe holds before it is shuffled."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from firmware.cards.card import CARDS, Card
from firmware.cards.errors import CardError

MAX_DECKS = 16


def _check_decks(decks: int) -> int:
    if not isinstance(decks, int) or isinstance(decks, bool) or not 1 <= decks <= MAX_DECKS:
        raise CardError(f"decks must be a whole number from 1 to {MAX_DECKS}, not {decks!r}")
    return decks


def standard_shoe(decks: int = 1) -> tuple[Card, ...]:
    """``decks`` standard 52-card decks, in deck order (2s 2h 2d 2c 3s ... Ac) repeated."""
    return CARDS * _check_decks(decks)


def ranks_shoe(ranks: Iterable[int], decks: int = 1) -> tuple[Card, ...]:
    """A shoe of only the given ranks (2..14, ace 14 or 1), four suits each, ``decks`` times."""
    rank_list = sorted({14 if r == 1 else r for r in ranks})
    if not rank_list or any(not 2 <= r <= 14 for r in rank_list):
        raise CardError(f"bad rank list {list(ranks)!r}")
    one = tuple(Card.of(r, s) for r in rank_list for s in range(4))
    return one * _check_decks(decks)


def double_super_9_shoe(decks: int = 12) -> tuple[Card, ...]:
    """The Double Super 9 shoe: ``decks`` decks of only A-6 in four suits (12 decks = 288 cards)."""
    return ranks_shoe((14, 2, 3, 4, 5, 6), decks)


def composition(cards: Sequence[int]) -> Counter[Card]:
    """How many of each card a shoe holds."""
    return Counter(Card(c) for c in cards)


def check_taken(shoe: Sequence[int], taken: Iterable[int]) -> list[Card]:
    """``taken`` as cards, once it is known the shoe holds them all: :class:`CardError` naming the
    first card ``taken`` holds more copies of than the shoe does (a card the shoe does not hold at
    all is one of them), with the count asked and the count the shoe holds. Counts only the cards
    taken (a replay checks a few cards against a shoe of hundreds)."""
    cards = [Card(c) for c in taken]
    for card, count in Counter(cards).items():       # in the order each card is first taken
        held = shoe.count(card)
        if count > held:
            shown = f"{held}" if held else "none"
            raise CardError(f"{card} is given {count} time{'s' if count != 1 else ''}, but the "
                            f"game's shoe of {len(shoe)} cards holds {shown}")
    return cards


def rest_of_shoe(shoe: Sequence[int], taken: Iterable[int]) -> list[Card]:
    """The cards of ``shoe`` left once ``taken`` are out of it (:func:`check_taken`'s error if
    ``taken`` is not a part of it)."""
    left = composition(shoe)
    left.subtract(check_taken(shoe, taken))
    return list(left.elements())
