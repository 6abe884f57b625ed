"""Blackjack hand totals (Blackjack War, Split 21 Stud).

Card values: 2-10 face value, J/Q/K 10, ace 1 or 11 (:data:`BLACKJACK_VALUE` holds 1 for the ace; the
soft total is this module's job). The best total counts one ace as 11 when that does not go over 21.

* Blackjack War compares the initial 2-card totals (A+A = 12).
* Split 21 Stud (rules/split21-stud.md): a hand over 21 is bust and loses; a 2-card 21 beats a
  3-card 21; otherwise the higher total wins and equal totals push. :func:`blackjack_rank` turns that
  into one integer key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from firmware.cards.card import BLACKJACK_VALUE

__all__ = ["BlackjackTotal", "blackjack_rank", "blackjack_total"]

#: The rank every bust hand gets from :func:`blackjack_rank` (below every live hand).
BUST_RANK = 0


class BlackjackTotal(NamedTuple):
    """The total of a blackjack hand.

    ``total`` is the best total not over 21 if there is one, else the hard total (aces as 1);
    ``soft`` says an ace is counted as 11 in ``total``; ``bust`` means ``total > 21``;
    ``natural`` means exactly two cards totalling 21.
    """

    total: int
    soft: bool
    bust: bool
    natural: bool


def blackjack_total(cards: Iterable[int]) -> BlackjackTotal:
    """The :class:`BlackjackTotal` of any number of cards (ints 0..51).

    >>> from firmware.cards.card import parse_cards
    >>> blackjack_total(parse_cards("As Ah"))
    BlackjackTotal(total=12, soft=True, bust=False, natural=False)
    >>> blackjack_total(parse_cards("As Kd")).natural
    True
    """
    value = BLACKJACK_VALUE
    hard = 0
    count = 0
    has_ace = False
    for c in cards:
        v = value[c]
        hard += v
        count += 1
        if v == 1:
            has_ace = True
    if has_ace and hard <= 11:
        total = hard + 10
        return BlackjackTotal(total, True, False, count == 2 and total == 21)
    return BlackjackTotal(hard, False, hard > 21, False)


def blackjack_rank(cards: Iterable[int]) -> int:
    """A comparison key for Split 21 Stud hands: higher is better, equal is a push.

    Every bust hand ranks :data:`BUST_RANK` (0), below every live hand; live hands rank by total,
    and a 2-card 21 (natural) beats a 3-card 21: ``rank = 1 + 2 * total + natural`` (so 1..44).
    """
    t = blackjack_total(cards)
    if t.bust:
        return BUST_RANK
    return 1 + 2 * t.total + (1 if t.natural else 0)
