"""Stacking ``--cards`` for Split 21 Stud scenarios: five cards per position, in the game's dealing
order (one card at a time to the eight positions clockwise from the one after the die's number,
five times; rules/split21-stud.md step 3). Positions nobody plays get the unused cards of the deck."""

from __future__ import annotations

from collections.abc import Mapping

from firmware.cards.card import format_cards, parse_cards
from firmware.cards.shoe import standard_shoe

POSITIONS = 8


def stack(die: int, hands: Mapping[int, str]) -> str:
    """The 40 cards to pass to ``--cards`` so that position ``p`` holds ``hands[p]`` (five cards, in
    the order dealt to it) when the die shows ``die``."""
    held = {p: parse_cards(text) for p, text in hands.items()}
    assert all(len(cards) == 5 for cards in held.values()), held
    used = [c for cards in held.values() for c in cards]
    assert len(set(used)) == len(used), "a card is stacked twice"
    spare = iter(c for c in standard_shoe(1) if c not in set(used))
    order = [(die + k) % POSITIONS + 1 for k in range(POSITIONS)]
    out = [held[p][r] if p in held else next(spare) for r in range(5) for p in order]
    return " ".join(format_cards(out))


def round_args(die: int, hands: Mapping[int, str]) -> list[str]:
    """``--dice`` and ``--cards`` for :func:`stack`."""
    return ["--dice", str(die), "--cards", stack(die, hands)]
