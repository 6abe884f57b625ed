"""The exact Double Super 9 PAR sheet (firmware/math/double_super_9.py; docs/math/double-super-9.md):
exact sums, the game's symmetry, the commission's rounding as the game settles it, an independent
ordered enumeration, a sample of real deals and a seeded run of the real kernel."""

from __future__ import annotations

import json
import math
import random
from decimal import Decimal
from fractions import Fraction
from itertools import product
from math import prod

import numpy as np
import pytest

from firmware.cards.card import Card
from firmware.games.base import Outcome
from firmware.games.double_super_9 import (
    Comparison,
    DoubleSuper9,
    DoubleSuper9Options,
    compare,
    hand_outcome,
)
from firmware.games.double_super_9_house_way import house_way
from firmware.kernel.simulate import simulate
from firmware.math.double_super_9 import par_sheet, win_net
from firmware.rng.service import RngService

DEFAULT = DoubleSuper9Options()


@pytest.fixture(scope="module")
def default_sheet():
    return par_sheet(DEFAULT)


def _lines(sheet):
    return {o.name: o for o in sheet.wagers["bet"].outcomes}


def _falling(n: int, k: int) -> int:
    return prod(range(n - k + 1, n + 1))


# --- the sheet itself ------------------------------------------------------------------------------
@pytest.mark.parametrize("options", [
    DEFAULT,
    DoubleSuper9Options(decks=2),
    DoubleSuper9Options(banking="player", collection=1),
    DoubleSuper9Options(commission=Decimal(0)),
])
def test_probabilities_are_exact_fractions_adding_up_to_one(options):
    sheet = par_sheet(options)
    bet = sheet.wagers["bet"]
    assert [o.name for o in bet.outcomes] == ["win", "push", "lose"]
    assert all(isinstance(o.probability, Fraction) for o in bet.outcomes)
    assert sum(o.probability for o in bet.outcomes) == 1
    deals = math.comb(24 * options.decks, 4) * math.comb(24 * options.decks - 4, 4)
    assert sheet.extras["deals"] == deals
    assert sum(o.count for o in bet.outcomes) == deals
    assert all(o.probability == Fraction(o.count, deals) for o in bet.outcomes)
    assert sheet.method == "exact" and bet.method == "exact"
    assert (sheet.game, sheet.seats, sheet.unit) == ("double-super-9", 1, 10)
    assert sheet.options == options.to_json()
    # The JSON document is complete and plain.
    doc = json.loads(json.dumps(sheet.to_json()))
    assert doc["wagers"]["bet"]["rtp_exact"] == f"{bet.rtp.numerator}/{bet.rtp.denominator}"
    assert len(doc["hands"]) == 9


def test_without_commission_the_game_is_symmetric_and_returns_exactly_one():
    bet = par_sheet(DoubleSuper9Options(commission=Decimal(0))).wagers["bet"]
    lines = {o.name: o for o in bet.outcomes}
    assert lines["win"].probability == lines["lose"].probability
    assert lines["win"].count == lines["lose"].count
    assert lines["win"].net == 1
    assert bet.rtp == 1 and bet.house_edge == 0


def test_the_figures_found_earlier_with_twelve_decks(default_sheet):
    lines = _lines(default_sheet)
    assert round(float(lines["win"].probability), 6) == 0.318304
    assert round(float(lines["lose"].probability), 6) == 0.318304
    assert round(float(lines["push"].probability), 6) == 0.363393
    assert lines["win"].probability == Fraction(21021104628374, 66041039169105)


def test_default_commission_rounds_up_to_one_credit_of_ten(default_sheet):
    """5% of 10 credits is 0.5, rounded up to 1 credit: the win nets 9/10 and the house edge is
    P(win) x 1/10 exactly (3.18%, not the nominal 5% x P(win) = 1.59%)."""
    bet = default_sheet.wagers["bet"]
    p_win = _lines(default_sheet)["win"].probability
    assert _lines(default_sheet)["win"].net == Fraction(9, 10)
    assert bet.house_edge == p_win * Fraction(1, 10)
    assert bet.rtp == 1 - p_win / 10
    assert round(float(bet.house_edge), 5) == 0.03183
    assert bet.hit_frequency == p_win
    assert bet.variance == p_win * Fraction(81, 100) + p_win - (p_win / 10) ** 2
    assert any("rounded up" in note for note in bet.notes)


@pytest.mark.parametrize(("commission", "unit", "paid"), [
    (5, 10, 9), (5, 20, 19), (5, 30, 28), (5, 1, 0), (Decimal("2.5"), 40, 39), (0, 10, 10),
    (10, 15, 13),
])
def test_the_win_line_pays_what_the_game_settles(commission, unit, paid):
    """The win's net comes from a real stacked round: the commission is ceil(unit x rate)."""
    options = DoubleSuper9Options(commission=Decimal(commission))
    assert win_net(options, unit) == (paid, 0)
    assert paid == unit - math.ceil(Fraction(Decimal(commission)) * unit / 100)
    sheet = par_sheet(options, unit=unit)
    win = _lines(sheet)["win"]
    assert win.net == Fraction(paid, unit)
    assert sheet.wagers["bet"].house_edge == win.probability * Fraction(unit - paid, unit)


def test_player_banking_has_no_commission_and_reports_the_collection(default_sheet):
    sheet = par_sheet(DoubleSuper9Options(banking="player", collection=2), unit=10)
    bet = sheet.wagers["bet"]
    assert _lines(sheet)["win"].net == 1
    assert bet.rtp == 1
    assert [o.probability for o in bet.outcomes] == [
        o.probability for o in default_sheet.wagers["bet"].outcomes
    ]
    assert sheet.extras["collection"]["credits_per_spot_per_round"] == 2
    assert sheet.extras["collection"]["per_unit"] == Fraction(1, 5)
    assert any("collection" in note for note in bet.notes)
    assert "collection" not in default_sheet.extras
    # Without a collection the club takes nothing.
    free = par_sheet(DoubleSuper9Options(banking="player"))
    assert free.extras["collection"]["credits_per_spot_per_round"] == 0


def test_foul_setting_does_not_change_the_figures(default_sheet):
    """The house way never sets a foul hand."""
    lose = par_sheet(DoubleSuper9Options(foul_setting="lose"))
    assert [o.probability for o in lose.wagers["bet"].outcomes] == [
        o.probability for o in default_sheet.wagers["bet"].outcomes
    ]


def test_the_comparison_table(default_sheet):
    rows = default_sheet.extras["hands"]
    assert sum(r["probability"] for r in rows) == 1
    by = {(r["front"], r["back"]): r for r in rows}
    assert len(by) == 9
    # Swapping the spot and the banker turns win into lose in both places.
    flip = {"win": "lose", "lose": "win", "copy": "copy"}
    for (front, back), row in by.items():
        assert row["probability"] == by[flip[front], flip[back]]["probability"]
        assert row["outcome"] == hand_outcome(Comparison(front), Comparison(back)).value
    lines = _lines(default_sheet)
    for name in ("win", "push", "lose"):
        assert sum(r["probability"] for r in rows if r["outcome"] == name) == lines[name].probability
    assert round(float(by["win", "win"]["probability"]), 6) == 0.244613
    assert round(float(by["copy", "copy"]["probability"]), 6) == 0.010501


def test_decks_change_the_figures_consistently(default_sheet):
    two = par_sheet(DoubleSuper9Options(decks=2))
    p2, p12 = _lines(two), _lines(default_sheet)
    assert p2["win"].probability != p12["win"].probability
    assert p2["win"].probability == p2["lose"].probability
    assert sum(o.probability for o in two.wagers["bet"].outcomes) == 1
    # Fewer decks: more card removal, fewer pairs on both sides, more copies and pushes.
    assert p2["push"].probability > p12["push"].probability
    # And the sheet approaches the infinite-deck one monotonically.
    pushes = [_lines(par_sheet(DoubleSuper9Options(decks=d)))["push"].probability for d in (2, 4, 8, 12)]
    assert pushes == sorted(pushes, reverse=True)


# --- cross-checks ----------------------------------------------------------------------------------
@pytest.mark.parametrize("decks", [2, 5])
def test_an_ordered_enumeration_agrees(decks):
    """Independent of the multiset weighting: every *ordered* sequence of the eight values
    (6^8 of them), weighted prod_v (n)_(c_v) out of (N)_8 (falling factorials), each four-value
    hand set by the game's house way in dealt order. Exact in int64 for these shoes."""
    n, shoe = 4 * decks, 24 * decks
    assert _falling(shoe, 8) < np.iinfo(np.int64).max
    tuples = list(product(range(1, 7), repeat=4))
    front, back, counts = [], [], []
    for values in tuples:
        setting = house_way([Card.of(v, i) for i, v in enumerate(values)])
        front.append(setting.front_rank)
        back.append(setting.back_rank)
        counts.append([values.count(v) for v in range(1, 7)])
    front_a, back_a, c = np.array(front), np.array(back), np.array(counts)
    falling = np.array([_falling(n, k) for k in range(9)], dtype=np.int64)
    weights = falling[c[:, None, :] + c[None, :, :]].prod(axis=2)      # spot x banker
    sign = {1: Comparison.WIN, 0: Comparison.COPY, -1: Comparison.LOSE}
    fs = np.sign(front_a[:, None] - front_a[None, :])
    bs = np.sign(back_a[:, None] - back_a[None, :])
    totals = dict.fromkeys(Outcome, 0)
    for f, b in product(sign, repeat=2):
        assert compare(f, 0) is sign[f]                                  # the game's own compare
        ways = int(weights[(fs == f) & (bs == b)].sum())
        totals[hand_outcome(sign[f], sign[b])] += ways
    assert sum(totals.values()) == _falling(shoe, 8)
    lines = _lines(par_sheet(DoubleSuper9Options(decks=decks)))
    for outcome in (Outcome.WIN, Outcome.PUSH, Outcome.LOSE):
        assert Fraction(totals[outcome], _falling(shoe, 8)) == lines[outcome.value].probability


def test_sampled_real_deals_agree_with_two_decks():
    """Deals of eight real cards from the 48-card shoe (seeded), both hands set by the house way:
    every cell of the comparison table within 4.5 standard errors of the exact probability."""
    game = DoubleSuper9()
    options = DoubleSuper9Options(decks=2)
    shoe = list(game.shoe(options))
    rng = random.Random(20240607)
    deals = 20_000
    seen: dict[tuple[str, str], int] = {}
    for _ in range(deals):
        cards = rng.sample(shoe, 8)
        spot, banker = house_way(cards[:4]), house_way(cards[4:])
        key = (compare(spot.front_rank, banker.front_rank).value,
               compare(spot.back_rank, banker.back_rank).value)
        seen[key] = seen.get(key, 0) + 1
    for row in par_sheet(options).extras["hands"]:
        p = float(row["probability"])
        se = math.sqrt(p * (1 - p) / deals)
        assert abs(seen.get((row["front"], row["back"]), 0) / deals - p) < 4.5 * se, row


def test_the_real_kernel_lands_in_its_interval(default_sheet):
    """A seeded run of the terminal's own kernel (``egm simulate double-super-9``, one spot, bet
    10): the exact return lies in the simulation's 95% interval."""
    result = simulate(DoubleSuper9(), DEFAULT, 5_000, rng=RngService.seeded("par-ds9"),
                      seed="par-ds9", unit=10).to_json()
    low, high = result["wagers"]["bet"]["ci95"]
    assert low <= float(default_sheet.wagers["bet"].rtp) <= high
