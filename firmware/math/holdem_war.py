"""The exact PAR sheet of Hold'em War (rules/holdem-war.md; docs/math/holdem-war.md).

The sheet is the war family's (:func:`firmware.math.war.par_sheet`: the same wagers, wars, pool
and FOUR_CARD), fed with Hold'em War's initial deal instead of the two-card one:

* **TIE** -- the seat's and the dealer's best five of seven are equal -- is the exact count of
  :mod:`firmware.math.holdem_war_tie` (every board with suit symmetry, exact card removal of all
  nine cards).
* **Higher and lower** are each ``(1 - P(tie)) / 2`` exactly: exchanging the seat's and the
  dealer's hole cards maps every deal the seat wins to one it loses, of the same probability.
* **Wars** (``high_card``: a step ties when the war cards' ranks are equal; ``aggregate``: their
  blackjack values) start from the shoe less the nine initial cards. How likely a war step ties
  depends on which ranks those nine cards removed; the enumeration of ties does not keep that, so
  the probability that the first ``k`` steps all tie is *bounded*: the exact integer convolution of
  :func:`firmware.math.war.tie_run_numerators` is evaluated for every possible removal of nine
  cards (up to the symmetry of equal classes) and the smallest and largest are kept. The sheet
  takes the middle of the bounds and states half their width as the precision. Only the
  probability that a war reaches ``max_war_steps`` (a misdeal, about 10^-35 with 30 steps) enters
  a return, so every return is exact to that precision; the war-length table is exact to the
  (larger) width given in the notes.

FOUR_CARD (the seat's two hole cards and the dealer's two) is the war family's exact count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import lru_cache
from math import perm

from firmware.games.holdem_war import HoldemWar, HoldemWarOptions
from firmware.games.war_engine import WarScoring
from firmware.math import war
from firmware.math.holdem_war_tie import tie_count
from firmware.math.sheet import ParSheet

__all__ = ["HoldemDeal", "par_sheet", "war_step_bounds"]

#: Cards dealt before a war: two hole cards each and five on the board.
INITIAL_CARDS = 9


def _spreads(total: int, parts: int, cap: int, top: int | None = None) -> Iterator[tuple[int, ...]]:
    """Partitions of ``total`` into at most ``parts`` parts of at most ``cap`` (largest first)."""
    top = min(cap, total) if top is None else min(top, total)
    if total == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(top, 0, -1):
        for rest in _spreads(total - first, parts - 1, cap, first):
            yield (first, *rest)


def _removals(sizes: list[int], removed: int) -> Iterator[tuple[int, ...]]:
    """The class counts left after ``removed`` cards, one per removal up to equal-size symmetry."""
    groups = sorted(Counter(sizes).items())

    def walk(i: int, left: int) -> Iterator[tuple[int, ...]]:
        if i == len(groups):
            if left == 0:
                yield ()
            return
        size, count = groups[i]
        for take in range(left + 1):
            for spread in _spreads(take, count, size):
                taken = (*spread, *([0] * (count - len(spread))))
                for rest in walk(i + 1, left - take):
                    yield (*(size - t for t in taken), *rest)

    yield from walk(0, removed)


@lru_cache(maxsize=16)
def war_step_bounds(decks: int, mode: WarScoring, steps: int) -> tuple[tuple[Fraction, Fraction], ...]:
    """For k = 0..steps: the smallest and largest probability that the first k war steps all tie,
    over every removal of the nine initial cards from ``decks`` decks."""
    classes = sorted({war.war_class(mode, r) for r in war.RANKS})
    sizes = [4 * decks * sum(1 for r in war.RANKS if war.war_class(mode, r) == g) for g in classes]
    m = 52 * decks - INITIAL_CARDS
    lo: list[Fraction | None] = [None] * (steps + 1)
    hi: list[Fraction | None] = [None] * (steps + 1)
    for remaining in _removals(sizes, INITIAL_CARDS):
        for k, s in enumerate(war.tie_run_numerators(remaining, steps)):
            f = Fraction(s, perm(m, 2 * k)) if 2 * k <= m else Fraction(0)
            low, high = lo[k], hi[k]
            lo[k] = f if low is None or f < low else low
            hi[k] = f if high is None or f > high else high
    return tuple((a, b) for a, b in zip(lo, hi, strict=True))  # type: ignore[misc]


class HoldemDeal:
    """Hold'em War's initial deal as :func:`firmware.math.war.par_sheet` reads it."""

    def __init__(self, options: HoldemWarOptions, progress: Callable[[int], None] | None = None) -> None:
        self.options = options
        self.ties = tie_count(options.decks, progress)
        self.p_tie = self.ties.probability
        self.p_higher = self.p_lower = (1 - self.p_tie) / 2
        #: Half the width of the bounds on the run that decides the returns (set by tie_runs).
        self.precision = 0.0
        #: The largest half-width over the war-length table's steps.
        self.table_precision = 0.0

    @property
    def shoe_steps(self) -> int:
        """War steps the shoe has cards for after the nine initial cards (two war cards a step), as
        :attr:`firmware.math.war.InitialDeal.shoe_steps`: the kernel misdeals past them."""
        return (52 * self.options.decks - INITIAL_CARDS) // 2

    def tie_runs(self, steps: int) -> list[Fraction]:
        """``P(initial tie and the first k war steps all tie)`` for k = 0..steps (the middle of the
        bounds for k >= 1; :attr:`precision` is the half-width at ``steps``)."""
        bounds = war_step_bounds(self.options.decks, self.options.war_scoring, steps)
        runs = [self.p_tie] + [self.p_tie * (lo + hi) / 2 for lo, hi in bounds[1:]]
        widths = [float(self.p_tie * (hi - lo) / 2) for lo, hi in bounds]
        self.precision = widths[steps]
        self.table_precision = max(widths)
        return runs


def par_sheet(options: HoldemWarOptions, *, unit: int = 10,
              progress: Callable[[int], None] | None = None) -> ParSheet:
    """The one-seat sheet of every wager the options offer (see the module docstring)."""
    deal = HoldemDeal(options, progress)
    sheet = war.par_sheet(HoldemWar(), options, unit=unit, deal=deal)
    tie_note = (
        f"exact: {deal.ties.ties:,} of {deal.ties.deals:,} deals of the board and both hole pairs "
        f"from {options.decks} deck(s) tie (firmware.math.holdem_war_tie)"
    )
    war_note = (
        "a war step's tie probability depends on the nine initial cards' ranks; it is bounded over "
        f"every removal: returns exact to {deal.precision:.1e}, the war-length table to "
        f"{deal.table_precision:.1e}"
    )
    sheet.wagers["tie"].notes.append(tie_note)
    for name in ("bac", "war", "bac+war", "war_pool"):
        if name in sheet.wagers:
            sheet.wagers[name].notes.extend([
                "higher and lower initial hands each (1 - P(tie)) / 2: exchange the hole cards", war_note,
            ])
    return sheet
