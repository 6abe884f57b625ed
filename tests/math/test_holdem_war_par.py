"""The exact Hold'em War PAR sheet (firmware/math/holdem_war.py, holdem_war_tie.py;
docs/math/holdem-war.md): the per-board tie count against a brute force over every card kind, the
board weights, the shipped counts recomputed, the evaluator against treys, and the real kernel."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import islice
from math import comb, perm

import numpy as np
import pytest
from treys import Card as TreysCard
from treys import Evaluator

from firmware.cards.card import Card
from firmware.cards.poker5 import eval7, eval7_batch
from firmware.games.registry import make_options
from firmware.games.war_engine import WarScoring
from firmware.math import holdem_war, holdem_war_tie
from firmware.math.par import par_sheet
from tests.math.agreement import assert_simulation_agrees


def _brute_ties(board: tuple[int, ...], decks: int) -> int:
    """Ordered (seat two, dealer two) draws of equal eval7 over all 52 card kinds, with removal."""
    n = np.full(52, decks, dtype=np.int64)
    for c in board:
        n[c] -= 1
    a, b = (x.ravel() for x in np.meshgrid(np.arange(52), np.arange(52), indexing="ij"))
    rows = np.concatenate([np.tile(np.array(board), (len(a), 1)), a[:, None], b[:, None]], axis=1)
    value = eval7_batch(rows)
    total = 0
    for i in range(len(a)):
        w = int(n[a[i]] * (n[b[i]] - (a[i] == b[i])))
        if w <= 0:
            continue
        m = n.copy()
        m[a[i]] -= 1
        m[b[i]] -= 1
        total += w * int((m[a] * (m[b] - (a == b)))[value == value[i]].sum())
    return total


@pytest.mark.parametrize("part,index,decks", [
    ("plain", 100, 2), ("plain", 4000, 8), ("flush3", 5000, 2), ("flush4", 777, 2), ("flush5", 42, 2),
    ("flush5", 3, 1),
])
def test_board_ties_equal_a_brute_force_over_every_card_kind(part, index, decks):
    """The class reduction (ranks; rank and flush suit) and the quadratic-form removal, checked
    against the plain sum over the 52^4 kinds of the four hole cards."""
    board = next(islice(holdem_war_tie.boards(part, decks), index, None))
    _weight, cards, hole, counts = board
    t = holdem_war_tie.board_ties(np.array([cards]), np.array(hole), np.array([counts]))
    assert int(t[0]) == _brute_ties(cards, decks)


@pytest.mark.parametrize("decks", [1, 8])
def test_the_four_parts_hold_every_board_once(decks):
    assert holdem_war_tie.board_total(decks) == comb(52 * decks, 5)


def test_the_shipped_counts_are_what_the_code_computes():
    """The two cheap parts (6,188 boards each) recomputed; `make par-sheets` recomputes all four."""
    shipped = holdem_war_tie.shipped()[8]
    for part in ("plain", "flush5"):
        assert holdem_war_tie.part_count(part, 8) == shipped.parts[part], part
    assert set(shipped.parts) == set(holdem_war_tie.PARTS)


def test_eval7_agrees_with_treys_on_who_wins_and_who_splits():
    """One deck (treys knows no repeated cards): 3,000 deals, seat against dealer on one board."""
    evaluator = Evaluator()
    names = "23456789TJQKA"
    rng = random.Random(7)
    splits = 0
    for _ in range(3000):
        cards = rng.sample(range(52), 9)
        seat, dealer, board = cards[:2], cards[2:4], cards[4:]
        ours = (eval7([*seat, *board]) > eval7([*dealer, *board])) - (
            eval7([*seat, *board]) < eval7([*dealer, *board]))

        def t(cs):
            return [TreysCard.new(names[c // 4] + "shdc"[c % 4]) for c in cs]

        a, b = evaluator.evaluate(t(board), t(seat)), evaluator.evaluate(t(board), t(dealer))
        theirs = (a < b) - (a > b)                # treys: lower is better
        assert ours == theirs, [str(Card(c)) for c in cards]
        splits += ours == 0
    assert splits > 50


def test_sheet_is_exact_and_adds_up():
    opts = make_options("holdem-war", {})
    sheet = par_sheet("holdem-war", opts, method="exact")
    assert sheet.method == "exact" and sheet.to_json()["method"] == "exact"
    for w in sheet.wagers.values():
        assert sum(o.probability for o in w.outcomes) == 1, w.name
    tie = sheet.wagers["tie"].outcomes[0]
    ties = holdem_war_tie.tie_count(8)
    assert tie.probability == Fraction(ties.ties, comb(416, 5) * perm(411, 4))
    assert round(float(tie.probability), 6) == 0.050676
    assert sheet.wagers["bac"].rtp == 1
    assert sheet.wagers["war"].precision < 1e-30


def test_several_seats_keep_tie_exact_and_play_the_shared_wars():
    opts = make_options("holdem-war", {"pool": {"enabled": False}})
    sheet = par_sheet("holdem-war", opts, seats=2, rounds=2_000, seed="seats")
    assert sheet.wagers["tie"].method == "exact"
    assert sheet.wagers["bac"].method == "monte-carlo"


def test_war_step_bounds_hold_the_tie_of_a_real_removal():
    """P(first war step ties) after removing the ranks of nine real cards lies within the bounds."""
    bounds = holdem_war.war_step_bounds(8, WarScoring.HIGH_CARD, 3)
    removed = [2, 2, 2, 2, 2, 9, 13, 14, 14]
    left = [32 - removed.count(r) for r in range(2, 15)]
    p1 = Fraction(sum(x * (x - 1) for x in left), 407 * 406)
    assert bounds[1][0] <= p1 <= bounds[1][1]
    assert bounds[0] == (1, 1)
    assert bounds[1][1] - bounds[1][0] < Fraction(1, 1000)


@pytest.mark.parametrize("options", [{}, {"war_scoring": "aggregate", "war_win_pays": "even"}])
def test_egm_simulate_lands_inside_its_interval_around_the_exact_figures(options):
    """The real kernel, 30,000 seeded rounds, every wager's return within 99.9% of the exact one."""
    opts = make_options("holdem-war", options)
    exact = holdem_war.par_sheet(opts)
    assert_simulation_agrees("holdem-war", opts, exact, 30_000, "verify:holdem")
