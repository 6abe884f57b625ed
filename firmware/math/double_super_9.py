"""The exact PAR sheet of Double Super 9 (rules/double-super-9.md; docs/math/double-super-9.md).

One spot against the banker, both hands set by the house way. Suits never matter (a hand's rank
depends only on the point values, and so does the house way's choice of ranks), so a deal is
enumerated as two *value multisets*: the spot's four cards and the banker's four cards, each one of
the 126 multisets of four values from A-6. The shoe holds ``n = 4 x decks`` cards of each value
(``N = 24 x decks`` in all) and the eight cards are drawn without replacement, so a pair of multisets
``(p, b)`` has

    count(p, b) = prod_v C(n, p_v) * C(n - p_v, b_v)

(spot's 4-card set, then banker's 4-card set, of distinct physical cards) out of
``C(N, 4) * C(N - 4, 4)``: the hypergeometric probability
``(4!/prod p_v!) (4!/prod b_v!) prod_v (n)_(p_v + b_v) / (N)_8`` with falling factorials. Every one
of the 126 x 126 pairs goes through the game's own functions: :func:`house_way` on each hand (built
as real cards), :func:`compare` FRONT with FRONT and BACK with BACK, :func:`hand_outcome`. All
arithmetic is integer counts and :class:`~fractions.Fraction`; nothing is rounded.

What a win pays is not computed here but read from the game itself: one stacked round is played
through the real kernel (:class:`~firmware.kernel.round.RoundKernel`) with the automatic wagers of
``unit`` credits, a deal in which the spot wins both hands, and the ``bet`` result's net is the win
line's pay (per unit stake). With ``banking = house`` that is ``unit - ceil(unit x commission)``
(the commission is rounded up on each winning wager); with ``banking = player`` there is no
commission and the club's collection is reported beside the bet (``extras["collection"]``).
"""

from __future__ import annotations

import time
from collections import Counter
from fractions import Fraction
from itertools import combinations_with_replacement
from math import comb, prod
from typing import Any

from firmware.cards.card import Card, parse_cards
from firmware.cards.source import StackedSource
from firmware.games.base import Outcome
from firmware.games.double_super_9 import (
    BANK,
    BET,
    COLLECTION,
    HOUSE_SPOT,
    Comparison,
    DoubleSuper9,
    DoubleSuper9Options,
    compare,
    dealing_order,
    dice_position,
    hand_outcome,
)
from firmware.games.double_super_9_house_way import HAND_SIZE, house_way
from firmware.games.options import percent_fraction
from firmware.kernel.limits import NO_LIMITS
from firmware.kernel.round import RoundKernel
from firmware.math.sheet import ParSheet, WagerPar, outcomes_from_counts

__all__ = ["GAME", "VALUES", "deal_counts", "par_sheet", "win_net"]

GAME = "double-super-9"

#: The shoe's point values, ace = 1.
VALUES = (1, 2, 3, 4, 5, 6)

#: The order of the comparison table in ``extras["hands"]``.
_COMPARISONS = (Comparison.WIN, Comparison.COPY, Comparison.LOSE)

#: A stacked deal in which the spot wins both hands whatever the shoe: the spot's pair of sixes
#: (BACK) and pair of fives (FRONT) against the banker's pair of twos (BACK) and aces (FRONT).
_WINNING_SPOT = "6s 6h 5s 5h"
_LOSING_BANKER = "As Ah 2s 2h"
#: Dice for the stacked round (any total works: the deal order is computed from it).
_DICE = (1, 1, 1)


def _hands() -> list[tuple[tuple[int, ...], int, int]]:
    """The 126 value multisets of four cards: (count of each value, FRONT rank, BACK rank), the
    ranks from the game's own house way applied to four real cards of those values."""
    out = []
    for values in combinations_with_replacement(VALUES, HAND_SIZE):
        # Distinct suits among equal values: at most four equal values, four suits.
        seen: Counter[int] = Counter()
        cards = []
        for v in values:
            cards.append(Card.of(v, seen[v]))
            seen[v] += 1
        setting = house_way(cards)
        counts = tuple(values.count(v) for v in VALUES)
        out.append((counts, setting.front_rank, setting.back_rank))
    return out


def deal_counts(decks: int) -> tuple[dict[tuple[Comparison, Comparison], int], int]:
    """Exact counts of (spot FRONT comparison, spot BACK comparison) over every deal of the spot's
    and the banker's four cards from ``decks`` decks of A-6, and the number of deals
    ``C(N, 4) x C(N - 4, 4)`` (4-card sets of distinct physical cards, the spot's and the banker's)."""
    per_value = 4 * decks
    shoe = len(VALUES) * per_value
    hands = _hands()
    # C(n, k) and C(n - k, j) for k, j <= 4, computed once.
    first = [comb(per_value, k) for k in range(HAND_SIZE + 1)]
    second = [[comb(per_value - k, j) for j in range(HAND_SIZE + 1)] for k in range(HAND_SIZE + 1)]
    table: dict[tuple[Comparison, Comparison], int] = {}
    for pc, pf, pb in hands:
        spot_ways = prod(first[k] for k in pc)
        for bc, bf, bb in hands:
            ways = spot_ways * prod(second[k][j] for k, j in zip(pc, bc, strict=True))
            if not ways:
                continue
            key = (compare(pf, bf), compare(pb, bb))
            table[key] = table.get(key, 0) + ways
    total = comb(shoe, HAND_SIZE) * comb(shoe - HAND_SIZE, HAND_SIZE)
    if sum(table.values()) != total:                       # pragma: no cover - a broken enumeration
        raise AssertionError("Double Super 9 deal counts do not add up to every deal")
    return table, total


def win_net(options: DoubleSuper9Options, unit: int) -> tuple[int, int]:
    """What the game really pays on a winning ``bet`` of ``unit`` credits, and the collection it
    takes from that spot: one stacked round through the real kernel and the game's settle(), with the
    automatic wagers (one playing spot) and a deal in which the spot wins both hands.

    Returns ``(net of the bet, net of the collection)`` in credits (the collection 0 or negative).
    """
    game = DoubleSuper9()
    wagers = game.automatic_wagers(options, 1, unit)
    spot = next(s for s, w in wagers.items() if BET in w)
    banker = HOUSE_SPOT if options.banking == "house" else next(
        s for s, w in wagers.items() if BANK in w
    )
    spot_cards, banker_cards = parse_cards(_WINNING_SPOT), parse_cards(_LOSING_BANKER)
    rest = list(game.shoe(options))
    for card in (*spot_cards, *banker_cards):
        rest.remove(card)
    order = dealing_order(dice_position(sum(_DICE), banker))
    hands = {p: iter(rest[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i, p in enumerate(order)}
    hands[spot], hands[banker] = iter(spot_cards), iter(banker_cards)
    stack = [next(hands[p]) for _ in range(HAND_SIZE) for p in order]
    kernel = RoundKernel(game, options, limits=NO_LIMITS)
    settlement = kernel.play(wagers, StackedSource(stack, shoe=game.shoe(options)), dice=_DICE)
    result = settlement.results[spot]
    if result[BET].outcome is not Outcome.WIN:          # pragma: no cover - the stack is wrong
        raise AssertionError(f"the stacked Double Super 9 round did not win: {result[BET]}")
    fee = result[COLLECTION].net if COLLECTION in result else 0
    return result[BET].net, fee


def _text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def par_sheet(options: DoubleSuper9Options, *, unit: int = 10) -> ParSheet:
    """The exact PAR sheet of one ``bet`` of ``unit`` credits against the banker, both hands set
    by the house way (see the module docstring)."""
    if unit < 1:
        raise ValueError(f"unit: a wager is at least 1 credit, not {unit}")
    start = time.perf_counter()
    table, total = deal_counts(options.decks)
    by_outcome = dict.fromkeys((Outcome.WIN, Outcome.PUSH, Outcome.LOSE), 0)
    for (front, back), ways in table.items():
        by_outcome[hand_outcome(front, back)] += ways
    paid, fee = win_net(options, unit)
    net_win = Fraction(paid, unit)
    counts = {
        ("win", net_win, 1): by_outcome[Outcome.WIN],
        ("push", Fraction(0), 1): by_outcome[Outcome.PUSH],
        ("lose", Fraction(-1), 1): by_outcome[Outcome.LOSE],
    }
    notes = [
        f"one spot against the banker, both hands set by the house way; {options.decks} decks of "
        f"A-6 ({24 * options.decks} cards), the 8 cards drawn without replacement",
        "exact: 126 x 126 value multisets of the spot's and the banker's four cards, weighted "
        "prod_v C(n, p_v) C(n - p_v, b_v) out of C(N, 4) C(N - 4, 4) (n = 4 x decks, N = 24 x decks)",
        "the house way never sets a foul hand, so foul_setting does not change the figures",
    ]
    extras: dict[str, Any] = {}
    if options.banking == "house":
        commission = unit - paid
        rate = percent_fraction(options.commission)
        notes.append(
            f"banking = house: a winning bet of {unit} credits pays {paid} after a commission of "
            f"{commission} credit{'s' if commission != 1 else ''} ({options.commission}% rounded up "
            f"to a whole credit on each winning wager, as settle() does), so the win line's net is "
            f"{paid}/{unit} = {float(net_win):g}; the effective commission is "
            f"{float(Fraction(commission, unit)):.2%} against the nominal {float(rate):.2%}"
        )
    else:
        collection = -fee
        notes.append(
            "banking = player: the counterparty is the player-banker, no commission; the bet's "
            "figures are between the player and the banker (zero-sum, and the game is symmetric)"
        )
        notes.append(
            f"the club's whole income is the collection: {collection} "
            f"credit{'s' if collection != 1 else ''} per wagering spot per round (the banker's included), {float(Fraction(collection, unit)):g} of a {unit}-credit "
            "bet; it is not part of the bet's figures (see extras['collection'])"
        )
        extras["collection"] = {
            "credits_per_spot_per_round": collection,
            "per_unit": Fraction(collection, unit),
            "per_unit_exact": _text(Fraction(collection, unit)),
        }
    wager = WagerPar(BET, outcomes_from_counts(counts, total, exact=True), "exact", notes=notes)
    extras["hands"] = [
        {
            "front": front.value,
            "back": back.value,
            "outcome": hand_outcome(front, back).value,
            "probability": Fraction(table.get((front, back), 0), total),
            "probability_exact": _text(Fraction(table.get((front, back), 0), total)),
            "count": table.get((front, back), 0),
        }
        for front in _COMPARISONS
        for back in _COMPARISONS
    ]
    extras["deals"] = total
    sheet = ParSheet(
        game=GAME,
        options=options.to_json(),
        wagers={BET: wager},
        seats=1,
        unit=unit,
        extras=extras,
    )
    sheet.elapsed = time.perf_counter() - start
    return sheet
