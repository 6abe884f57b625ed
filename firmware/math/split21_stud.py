"""The exact PAR sheet of Split 21 Stud with the house banking (rules/split21-stud.md;
docs/math/split21-stud.md).

A seat's five cards and the dealer hand's five are ten cards of one 52-card deck drawn without
replacement; the other positions' hands are dealt and discarded unseen, which by exchangeability
changes nothing for one seat against the dealer. Each of ANTE, HIGH, LOW and JACKPOT depends on
one side of the two hands only, so each is enumerated on its own:

**HIGH and LOW** depend on blackjack values only: the house way's ranks
(:func:`~firmware.games.split21_stud_house_way.house_way`: fewest busts, then HIGH, then LOW; the
position tie-break only chooses among splits of equal ranks) are a function of the five cards' value
multiset. The 1,993 possible multisets of five values (A, 2-9 four cards each, ten-values sixteen)
are set by the game's own house way on real cards, and every pair ``(seat, dealer)`` is weighted

    count(p, d) = prod_v C(n_v, p_v) * C(n_v - p_v, d_v)

out of ``C(52, 5) * C(47, 5)``. Each pair is settled with the game's own ``_blackjack_result``
(a bust loses even against a busted dealer; a 2-card 21 beats a 3-card 21; the pay rounded down).

**ANTE and JACKPOT** compare the two 5-card poker hands (:func:`~firmware.cards.poker5.eval5`). By
exchanging the two hands a seat is above the dealer exactly as often as below, so only the tie
needs counting. A strength is scored once per *class* -- a rank multiset, flush or not -- on real
cards, and the enumeration checks that no two classes share a strength (so a tie is two hands of
one class). Disjoint ordered pairs of one class: ``prod_r C(4, m_r) C(4 - m_r, m_r)`` for a paired
class; for five distinct ranks ``12^5 - 2 * 4 * 3^5 + 12`` both off-suit and ``4 * 3 = 12`` both
flushes. JACKPOT (one seat) settles each result through the game's own ``share_jackpot``.

The automatic strategy is the house way on both sides, which never sets a foul hand. Several seats:
ANTE, HIGH and LOW keep their one-seat figures (each seat's five with the dealer's are still ten
random cards), the JACKPOT pot is shared and comes from Monte Carlo; ``banking = player`` is all
Monte Carlo (``firmware.math.par``).
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import lru_cache
from itertools import combinations_with_replacement
from math import comb, prod
from typing import Any

import numpy as np

from firmware.cards.card import Card
from firmware.cards.poker5 import eval5
from firmware.games.options import percent_fraction
from firmware.games.split21_stud import (
    DEALER,
    Split21Stud,
    Split21StudOptions,
    _blackjack_result,
    share_jackpot,
)
from firmware.games.split21_stud_house_way import HAND_SIZE, house_way
from firmware.math.sheet import ParSheet, WagerPar, outcomes_from_counts

__all__ = ["blackjack_counts", "hand_ranks", "par_sheet", "poker_tie_count", "VALUES"]

#: Blackjack values, ace = 1, and the real ranks that carry each (ten-values: T, J, Q, K).
VALUES = tuple(range(1, 11))
_RANKS_OF = {1: (14,), **{v: (v,) for v in range(2, 10)}, 10: (10, 11, 12, 13)}
#: Cards of each value in one deck.
PER_VALUE = tuple(4 * len(_RANKS_OF[v]) for v in VALUES)
DECK = 52
HANDS = comb(DECK, HAND_SIZE) * comb(DECK - HAND_SIZE, HAND_SIZE)

_SEAT = 1


def _cards_of(values: tuple[int, ...]) -> list[Card]:
    """Five distinct real cards with these blackjack values (in this order)."""
    used: Counter[int] = Counter()
    cards = []
    for v in values:
        k = used[v]
        ranks = _RANKS_OF[v]
        cards.append(Card.of(ranks[k // 4], k % 4))
        used[v] += 1
    return cards


def hand_ranks() -> list[tuple[tuple[int, ...], int, int]]:
    """Every possible multiset of five blackjack values: (count of each value, HIGH rank, LOW rank)
    of the game's house way on five real cards of those values."""
    out = []
    for values in combinations_with_replacement(VALUES, HAND_SIZE):
        counts = tuple(values.count(v) for v in VALUES)
        if any(c > n for c, n in zip(counts, PER_VALUE, strict=True)):
            continue
        split = house_way(_cards_of(values))
        out.append((counts, split.high_rank, split.low_rank))
    return out


@lru_cache(maxsize=1)
def blackjack_counts() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every five-card value multiset's house-way HIGH and LOW ranks, and the number of deals of each
    (seat multiset, dealer multiset) pair: ``(high, low, ways, counts)``, ``ways[i, j]`` for the seat
    holding multiset ``i`` (``counts[i]``) and the dealer ``j``."""
    hands = hand_ranks()
    counts = np.array([h[0] for h in hands], dtype=np.int64)
    high = np.array([h[1] for h in hands], dtype=np.int64)
    low = np.array([h[2] for h in hands], dtype=np.int64)
    n = np.array(PER_VALUE, dtype=np.int64)
    binom = np.array([[comb(a, b) for b in range(HAND_SIZE + 1)] for a in range(17)], dtype=np.int64)
    first = np.prod(binom[n[None, :], counts], axis=1)                       # C(n_v, p_v)
    left = n[None, :] - counts                                                # n_v - p_v
    second = np.prod(binom[left[:, None, :], counts[None, :, :]], axis=2)     # C(n_v - p_v, d_v)
    ways = first[:, None] * second
    if int(ways.sum()) != HANDS:                                              # pragma: no cover
        raise AssertionError("Split 21 Stud value pairs do not add up to every deal")
    return high, low, ways, counts


def _blackjack_wager(name: str, mine: np.ndarray, ways: np.ndarray, stake: int,
                     pays: Fraction) -> WagerPar:
    """HIGH or LOW: the seat's ranks (rows) against the dealer's (columns), settled by the game."""
    seat, dealer = mine[:, None], mine[None, :]
    bust = seat == 0
    lose = int(ways[bust | (seat < dealer)].sum())
    push = int(ways[~bust & (seat == dealer)].sum())
    win = HANDS - lose - push
    nets = {
        "win": _blackjack_result(stake, 2, 1, pays).net,
        "push": _blackjack_result(stake, 1, 1, pays).net,
        "lose": _blackjack_result(stake, 0, 1, pays).net,
    }
    counts = {(k, Fraction(nets[k], stake), 1): c for k, c in (("win", win), ("push", push), ("lose", lose))}
    return WagerPar(name, outcomes_from_counts(counts, HANDS, exact=True), notes=[
        "both hands set by the house way; every pair of the 1,993 five-card value multisets, "
        "weighted prod_v C(n_v, p_v) C(n_v - p_v, d_v) out of C(52, 5) C(47, 5)",
        f"stake {stake} credits, a win pays {pays.numerator}:{pays.denominator} rounded down",
    ])


def _poker_classes() -> dict[tuple[int, ...] | tuple[tuple[int, ...], str], tuple[int, int, int]]:
    """Each poker class (rank multiset, flush or not): (strength by eval5, hands, tied pairs)."""
    out: dict[tuple[int, ...] | tuple[tuple[int, ...], str], tuple[int, int, int]] = {}
    for ranks in combinations_with_replacement(range(2, 15), HAND_SIZE):
        m = Counter(ranks)
        if max(m.values()) > 4:
            continue
        suits: Counter[int] = Counter()
        plain = []
        for r in ranks:
            plain.append(Card.of(r, suits[r]))
            suits[r] += 1
        if len(m) == HAND_SIZE:
            plain[-1] = Card.of(ranks[-1], 1)            # not all one suit
            flush = [Card.of(r, 0) for r in ranks]
            out[ranks, "flush"] = (eval5(flush), 4, 4 * 3)
            out[ranks, "plain"] = (eval5(plain), 4 ** 5 - 4, 12 ** 5 - 2 * 4 * 3 ** 5 + 12)
        else:
            hands = prod(comb(4, k) for k in m.values())
            pairs = prod(comb(4, k) * comb(4 - k, k) for k in m.values())
            out[ranks, "plain"] = (eval5(plain), hands, pairs)
    return out


@lru_cache(maxsize=1)
def poker_tie_count() -> int:
    """Ordered pairs of disjoint 5-card hands (seat, dealer) of equal eval5 strength."""
    classes = _poker_classes()
    strengths = Counter(s for s, _h, _p in classes.values())
    if max(strengths.values()) != 1:                                          # pragma: no cover
        raise AssertionError("two poker classes share a strength: ties across classes not counted")
    if sum(h for _s, h, _p in classes.values()) != comb(DECK, HAND_SIZE):     # pragma: no cover
        raise AssertionError("the poker classes do not hold every five-card hand")
    return sum(p for _s, _h, p in classes.values())


def _poker_wager(name: str, nets: dict[str, Fraction], tie: int, note: str) -> WagerPar:
    """Lines ``win``, the tie's line (the one key of ``nets`` besides win and lose) and ``lose``."""
    above = (HANDS - tie) // 2
    tied = next(k for k in nets if k not in ("win", "lose"))
    counts = {("win", nets["win"], 1): above, (tied, nets[tied], 1): tie,
              ("lose", nets["lose"], 1): HANDS - tie - above}
    return WagerPar(name, outcomes_from_counts(counts, HANDS, exact=True), notes=[
        note,
        "above and below the dealer equally often (exchange the two hands); ties counted over every "
        "rank multiset with eval5, disjoint hands of one 52-card deck",
    ])


def _jackpot_nets(options: Split21StudOptions, stake: int) -> dict[str, Fraction]:
    """The seat's JACKPOT net per unit stake when its hand is above, equal to or below the dealer's,
    from the game's own share_jackpot (one seat, the house's hand contesting with its ante)."""
    opts = options.jackpot
    pot = stake + opts.house_ante
    stakes: dict[int | str, int] = {_SEAT: stake, DEALER: opts.house_ante}
    out = {}
    for name, seat_strength in (("win", 2), ("tie (pot shared)", 1), ("lose", 0)):
        result = share_jackpot(pot, stakes, {_SEAT: seat_strength, DEALER: 1},
                               percent_fraction(opts.commission), DEALER)
        out[name] = Fraction(result.shares.get(_SEAT, 0) - stake, stake)
    return out


def exact_wagers(seats: int) -> tuple[str, ...]:
    """The wagers this module computes for ``seats`` seats with the house banking."""
    return ("ante", "jackpot", "high", "low") if seats == 1 else ("ante", "high", "low")


def par_sheet(options: Split21StudOptions, *, seats: int = 1, unit: int = 10) -> ParSheet:
    """The exact sheet of every wager :func:`exact_wagers` covers (``banking = house``)."""
    if options.banking != "house":
        raise ValueError("the exact Split 21 Stud sheet is for banking = house")
    game = Split21Stud()
    stakes = game.automatic_wagers(options, 1, unit)[_SEAT]
    tie = poker_tie_count()
    high, low, ways, _counts = blackjack_counts()
    wagers: dict[str, WagerPar] = {
        "ante": _poker_wager("ante", {"win": Fraction(1), "push": Fraction(0), "lose": Fraction(-1)},
                             tie, "all five cards as a poker hand against the dealer's five; equal pushes"),
    }
    if options.jackpot.enabled and "jackpot" in exact_wagers(seats):
        nets = _jackpot_nets(options, stakes["jackpot"])
        wagers["jackpot"] = _poker_wager(
            "jackpot", nets, tie,
            f"one seat and the house's hand (ante {options.jackpot.house_ante}) contest a pot of "
            f"{stakes['jackpot'] + options.jackpot.house_ante}; commission {options.jackpot.commission}%",
        )
    wagers["high"] = _blackjack_wager("high", high, ways, stakes["high"], options.high_pays)
    wagers["low"] = _blackjack_wager("low", low, ways, stakes["low"], options.low_pays)
    for w in wagers.values():
        w.outcomes = [o for o in w.outcomes if o.probability] or w.outcomes
    extras: dict[str, Any] = {"deals": HANDS}
    return ParSheet(game.id, options.to_json(), wagers, seats=seats, unit=unit, extras=extras)
