"""The ``set_hand`` decision that the hand-setting games share (Split 21 Stud, Double Super 9).

A player answers ``house-way`` or ``set:<first hand>|<second hand>`` (HIGH|LOW, FRONT|BACK) naming
the cards of the seat's own hand. This module reads the answer and maps the named cards onto the
hand's positions; each game checks its own hand sizes and ranks. Every problem is a
:class:`DecisionError` naming the seat, and nothing changes.
"""

from __future__ import annotations

from collections.abc import Sequence

from firmware.cards.card import Card, format_cards, parse_cards
from firmware.cards.errors import CardError
from firmware.games.errors import DecisionError

SET_HAND = "set_hand"
HOUSE_WAY = "house-way"
SET_PREFIX = "set:"

_TIMES = {1: "once", 2: "twice"}


def read_setting(seat: int, action: str, names: tuple[str, str],
                 example: str) -> tuple[list[Card], list[Card]] | None:
    """None for ``house-way``; else the two hands' cards as named (``names`` such as
    ``("HIGH", "LOW")``, ``example`` a valid answer for the messages)."""
    text = action.strip()
    if text.lower() == HOUSE_WAY:
        return None
    first, second = names
    if not text.lower().startswith(SET_PREFIX):
        raise DecisionError(
            f"seat {seat}: unknown action {action!r}; answer set:{first}|{second} "
            f"(e.g. {example}) or {HOUSE_WAY}"
        )
    first_text, sep, second_text = text[len(SET_PREFIX):].partition("|")
    if not sep or "|" in second_text:
        raise DecisionError(
            f"seat {seat}: a setting is set:{first}|{second} with one '|', e.g. {example}"
        )
    try:
        return parse_cards(first_text), parse_cards(second_text)
    except CardError as exc:
        raise DecisionError(f"seat {seat}: {exc}") from None


def positions(seat: int, cards: Sequence[Card], named: Sequence[Card]) -> list[int]:
    """The hand position of each named card, in order; a card is used at most as often as the
    hand holds it (a multi-deck shoe can deal the same card twice)."""
    free = list(range(len(cards)))
    out: list[int] = []
    for card in named:
        position = next((i for i in free if cards[i] == card), None)
        if position is None:
            held = cards.count(card)
            hand = " ".join(format_cards(cards))
            if not held:
                raise DecisionError(f"seat {seat} does not hold {card}; its cards are {hand}")
            times = named.count(card)
            raise DecisionError(
                f"seat {seat}: {card} is named {_TIMES.get(times, f'{times} times')}; seat {seat} "
                f"holds {card} {_TIMES.get(held, f'{held} times')}, not more; its cards are {hand}"
            )
        free.remove(position)
        out.append(position)
    return out
