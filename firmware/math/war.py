"""Exact PAR of the war family's one-seat wagers: BAC, WAR, BAC+WAR, TIE, FOUR_CARD, WAR_POOL
(Baccarat War and Blackjack War; rules/baccarat-war.md), with card removal in the finite shoe.

**Initial deal.** The seat's two cards and the dealer's two are four draws without replacement, so
an ordered 4-tuple of ranks ``r`` has probability ``prod_r (n_r)_(c_r) / (N)_4`` (falling
factorials of the rank counts ``n_r``, ``c_r`` its multiplicity in the tuple). All 13^4 tuples are
scored with the game's own ``hand_score``: higher, lower or tied (a war).

**Wars.** A war step ties exactly when the seat's and the dealer's war cards fall in the same *war
class* -- baccarat value (``baccarat`` scoring: ``(s+a) % 10 == (s+b) % 10`` iff ``a == b`` for
values 0-9), rank (``high_card``) or blackjack value (``aggregate``: the totals were equal, so the
step's cards decide). Draws are exchangeable, so the probability that the first ``k`` steps all tie,
given the four initial cards, depends only on the class counts ``R_g`` left in the shoe::

    P(k ties | R) = sum over (m_g), sum m_g = k, of  k!/prod m_g!  prod_g (R_g)_(2 m_g)  /  (M)_(2k)

with ``M = N - 4``. The sum is an integer convolution over the classes (no floating point), done
once per distinct removal of the initial cards. The recursion over the shoe's composition is thus
followed exactly to ``max_war_steps``; only above :data:`EXACT_STEPS` steps (an option allows up to
1000) is the tail beyond that step reported as an unresolved line with its probability as the
stated precision.

**Who wins a war.** Exchanging the seat's and the dealer's cards in the step that ends the war
maps every winning sequence to a losing one of the same probability, so a war is won and lost with
exactly equal probability at every step. Hence BAC returns exactly 1, and BAC+WAR exactly 1 under
``war_win_pays = even`` (the acceptance figure 0 house edge); the test suite checks the symmetry
against a direct enumeration.

**FOUR_CARD** counts the four initial cards' categories over the whole shoe with
:func:`firmware.cards.poker4.four_card_counts`; **TIE** is the initial tie probability.

**WAR_POOL** with one seat: the seat and the dealer are the only participants; the higher initial
hand takes the pot, a tie is contested with the same war cards (one war-card sequence per hand), so
it ends as the war against the dealer does. The seat's win pays the pot less the commission rounded
down (the game's :func:`pool_payout`), which depends on the stake: the sheet states ``unit``.
Several seats share wars and the pot: those figures come from Monte Carlo (``firmware.math.par``).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from functools import lru_cache
from math import comb, perm
from typing import Any, Protocol

from firmware.cards.card import BACCARAT_VALUE, BLACKJACK_VALUE, Card
from firmware.cards.poker4 import four_card_counts
from firmware.cards.shoe import standard_shoe
from firmware.games.options import percent_fraction
from firmware.games.war_engine import WarScoring, pool_payout
from firmware.games.war_family import WarFamilyGame, WarFamilyOptions
from firmware.math.sheet import OutcomeLine, ParSheet, WagerPar

#: War steps followed exactly; a longer ``max_war_steps`` reports the tail as its precision.
EXACT_STEPS = 60
RANKS = tuple(range(2, 15))


def war_class(mode: WarScoring, rank: int) -> int:
    """The class of a war card: two war cards tie exactly when their classes are equal."""
    card = Card.of(rank, 0)
    if mode is WarScoring.BACCARAT:
        return BACCARAT_VALUE[card]
    if mode is WarScoring.AGGREGATE:
        return BLACKJACK_VALUE[card]
    return rank


def _falling(n: int, k: int) -> int:
    return perm(n, k) if 0 <= k <= n else 0


@lru_cache(maxsize=4096)
def tie_run_numerators(remaining: tuple[int, ...], steps: int) -> tuple[int, ...]:
    """``S_k`` for k = 0..steps: ``P(first k war steps tie) = S_k / (M)_(2k)`` for class counts
    ``remaining`` (M their sum). Integer convolution over the classes."""
    acc = [1] + [0] * steps
    for r in remaining:
        term = [_falling(r, 2 * m) for m in range(steps + 1)]
        acc = [
            sum(comb(k, m) * term[m] * acc[k - m] for m in range(k + 1) if term[m])
            for k in range(steps + 1)
        ]
    return tuple(acc)


class Deal(Protocol):
    """What :func:`par_sheet` reads of an initial deal: :class:`InitialDeal`, or Hold'em War's
    (``firmware.math.holdem_war.HoldemDeal``)."""

    p_higher: Fraction
    p_lower: Fraction
    p_tie: Fraction
    #: A bound on the error of the last entry of :meth:`tie_runs` (0: exact).
    precision: float

    @property
    def shoe_steps(self) -> int: ...

    def tie_runs(self, steps: int) -> list[Fraction]: ...


class InitialDeal:
    """The initial four cards of one seat against the dealer, and the wars that follow a tie."""

    #: A bound on the error of the last entry of :meth:`tie_runs` (0: exact).
    precision = 0.0

    def __init__(self, game: WarFamilyGame, options: WarFamilyOptions) -> None:
        self.decks = options.decks
        self.per_rank = 4 * options.decks
        self.cards = 52 * options.decks
        mode = options.war_scoring
        classes = sorted({war_class(mode, r) for r in RANKS})
        self.class_of = {r: classes.index(war_class(mode, r)) for r in RANKS}
        self.class_size = [sum(self.per_rank for r in RANKS if self.class_of[r] == g)
                           for g in range(len(classes))]
        score = {(a, b): game.hand_score([Card.of(a, 0), Card.of(b, 1)], []) for a in RANKS for b in RANKS}
        n = self.per_rank
        higher = lower = tie = 0
        ties_by_removal: dict[tuple[int, ...], int] = defaultdict(int)
        for s1 in RANKS:
            for s2 in RANKS:
                seat = score[s1, s2]
                for d1 in RANKS:
                    for d2 in RANKS:
                        dealer = score[d1, d2]
                        counts: dict[int, int] = defaultdict(int)
                        for r in (s1, s2, d1, d2):
                            counts[r] += 1
                        w = 1
                        for c in counts.values():
                            w *= _falling(n, c)
                        if seat > dealer:
                            higher += w
                        elif seat < dealer:
                            lower += w
                        else:
                            tie += w
                            removed = [0] * len(self.class_size)
                            for r in (s1, s2, d1, d2):
                                removed[self.class_of[r]] += 1
                            ties_by_removal[tuple(removed)] += w
        self.total = _falling(self.cards, 4)
        assert higher + lower + tie == self.total
        self.p_higher = Fraction(higher, self.total)
        self.p_lower = Fraction(lower, self.total)
        self.p_tie = Fraction(tie, self.total)
        self._ties = dict(ties_by_removal)

    @property
    def shoe_steps(self) -> int:
        """War steps the shoe has cards for after the initial four: two war cards a step (one seat
        and the dealer). The kernel's RNG shoe ends a war still tied after them in a misdeal."""
        return (self.cards - 4) // 2

    def tie_runs(self, steps: int) -> list[Fraction]:
        """``P(initial tie and the first k war steps all tie)`` for k = 0..steps."""
        if steps > self.shoe_steps:
            raise ValueError(f"{self.decks} deck(s) leave cards for {self.shoe_steps} war steps, not {steps}")
        m = self.cards - 4
        sums = [0] * (steps + 1)
        for removed, weight in self._ties.items():
            remaining = tuple(size - x for size, x in zip(self.class_size, removed, strict=True))
            for k, s in enumerate(tie_run_numerators(remaining, steps)):
                sums[k] += weight * s
        return [Fraction(sums[k], self.total * _falling(m, 2 * k)) for k in range(steps + 1)]


def par_sheet(game: WarFamilyGame, options: WarFamilyOptions, *, unit: int = 10,
              deal: Deal | None = None) -> ParSheet:
    """The exact one-seat PAR sheet (every wager the options offer). ``deal`` is the initial deal
    (p_higher, p_lower, p_tie, tie_runs, precision): the two-card :class:`InitialDeal` by default,
    Hold'em War's from ``firmware.math.holdem_war``."""
    deal = deal or InitialDeal(game, options)
    max_steps = options.max_war_steps
    # A war still tied after max_war_steps, or when the shoe has no card left for the next step
    # (one deck: 24 steps), ends in a misdeal in the kernel; the sheet stops where it does.
    limit = min(max_steps, deal.shoe_steps)
    followed = min(limit, EXACT_STEPS)
    runs = deal.tie_runs(followed)
    ends = [runs[j - 1] - runs[j] for j in range(1, followed + 1)]        # war ends at step j
    beyond = runs[followed]              # still tied after the steps followed
    misdeal = beyond if followed == limit else Fraction(0)
    misdeal_reason = ("max_war_steps" if limit == max_steps
                      else f"the {options.decks}-deck shoe has no cards left after step {limit}")
    unresolved = beyond - misdeal
    precision = float(unresolved) + deal.precision or None
    resolved = sum(ends, Fraction(0))
    war_win = war_lose = resolved / 2
    even = options.war_win_pays == "even"
    offered = game.offered_wagers(options)

    def tail(lines: list[OutcomeLine]) -> list[OutcomeLine]:
        if misdeal:
            lines.append(OutcomeLine(f"misdeal ({misdeal_reason})", misdeal, Fraction(0)))
        if unresolved:
            lines.append(OutcomeLine(f"war beyond step {followed} (not followed)", unresolved, Fraction(0)))
        return lines

    wagers: dict[str, WagerPar] = {}
    war_note = f"wars followed exactly to step {followed} of max_war_steps {max_steps}"
    if limit < max_steps:
        war_note += (f"; {options.decks} deck(s) hold cards for {limit} war steps only: a war still "
                     "tied then is a misdeal, stakes returned (rules: a shoe that runs out)")
    wagers["bac"] = WagerPar("bac", tail([
        OutcomeLine("higher initial hand", deal.p_higher, Fraction(1)),
        OutcomeLine("war won", war_win, Fraction(1)),
        OutcomeLine("war lost", war_lose, Fraction(-1)),
        OutcomeLine("lower initial hand", deal.p_lower, Fraction(-1)),
    ]), precision=precision, notes=[war_note])
    war_pays = Fraction(1) if even else Fraction(0)
    wagers["war"] = WagerPar("war", tail([
        OutcomeLine("war won", war_win, war_pays),
        OutcomeLine("no war", deal.p_higher + deal.p_lower, Fraction(0)),
        OutcomeLine("war lost", war_lose, Fraction(-1)),
    ]), precision=precision, notes=[f"war_win_pays = {options.war_win_pays}", war_note])
    if options.war_wager == "required":
        half = Fraction(1, 2)
        wagers["bac+war"] = WagerPar("bac+war", tail([
            OutcomeLine("war won", war_win, (1 + war_pays) * half),
            OutcomeLine("higher initial hand", deal.p_higher, half),
            OutcomeLine("lower initial hand", deal.p_lower, -half),
            OutcomeLine("war lost", war_lose, Fraction(-1)),
        ]), precision=precision,
            notes=["BAC and the required equal WAR together, per unit of their total stake", war_note])
    wagers["tie"] = WagerPar("tie", [
        OutcomeLine("tie", deal.p_tie, Fraction(options.tie_pays)),
        OutcomeLine("no tie", 1 - deal.p_tie, Fraction(-1)),
    ])
    if "four_card" in offered:
        wagers["four_card"] = _four_card(options)
    if "war_pool" in offered:
        pot = unit + options.pool.dealer_ante
        paid, _commission = pool_payout(pot, percent_fraction(options.pool.commission))
        wagers["war_pool"] = WagerPar("war_pool", tail([
            OutcomeLine("seat wins the pot", deal.p_higher + war_win, Fraction(paid - unit, unit)),
            OutcomeLine("dealer wins the pot", deal.p_lower + war_lose, Fraction(-1)),
        ]), precision=precision, notes=[
            f"one seat against the dealer, ante {unit} credits, dealer ante {options.pool.dealer_ante}: "
            f"the winning seat is paid {paid} of a pot of {pot}",
            war_note,
        ])
    extras: dict[str, Any] = {"war": _war_table(deal.p_tie, ends, misdeal, unresolved, followed)}
    return ParSheet(game.id, options.to_json(), wagers, seats=1, unit=unit, extras=extras)


def _four_card(options: WarFamilyOptions) -> WagerPar:
    counts = four_card_counts(standard_shoe(options.decks))
    total = sum(counts.values())
    lines = []
    for category, count in counts.items():
        name = category.name.lower()
        pays = options.four_card_pays.pays(name)
        if count:
            lines.append(OutcomeLine(name, Fraction(count, total), Fraction(pays) if pays else Fraction(-1),
                                     count))
    return WagerPar("four_card", lines, notes=[
        f"the seat's two initial cards and the dealer's two, from {options.decks} deck(s); "
        f"{total:,} four-card hands"
    ])


def _war_table(p_war: Fraction, ends: list[Fraction], misdeal: Fraction, unresolved: Fraction,
               followed: int) -> dict[str, Any]:
    """The war-length distribution of one seat against the dealer, given a war."""
    if not p_war:
        return {"probability": 0.0, "average_steps": None, "length": []}
    length = [
        {"steps": j, "probability": float(p / p_war)}
        for j, p in enumerate(ends, start=1) if p / p_war > 1e-18
    ]
    steps = sum((j * p for j, p in enumerate(ends, start=1)), Fraction(0)) + followed * (misdeal + unresolved)
    return {
        "probability": float(p_war),
        "average_steps": float(steps / p_war),
        "misdeal_probability": float(misdeal),
        "length": length,
    }
