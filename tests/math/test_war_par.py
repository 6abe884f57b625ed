"""The exact war-family PAR sheet (firmware/math/war.py): symmetric wars, card removal, the pool."""

from __future__ import annotations

from fractions import Fraction
from math import comb, perm

import numpy as np
import pytest

from firmware.cards.card import BACCARAT_VALUE, Card
from firmware.games.registry import get_game, make_options
from firmware.kernel.simulate import simulate
from firmware.math import war
from firmware.rng.service import RngService


def sheet(game="baccarat-war", **options):
    return war.par_sheet(get_game(game), make_options(game, options))


def test_every_wager_sums_to_one_and_bac_returns_exactly_its_stake():
    s = sheet()
    for w in s.wagers.values():
        assert sum(o.probability for o in w.outcomes) == 1, w.name
    assert s.wagers["bac"].rtp == 1            # a war is won and lost equally often
    assert s.method == "exact"


def test_bac_plus_war_is_exactly_even_when_a_won_war_pays_even():
    s = sheet(war_win_pays="even")
    assert s.wagers["bac+war"].house_edge == 0
    assert s.wagers["war"].house_edge == 0
    assert s.to_json()["wagers"]["bac+war"]["house_edge"] == 0.0


def test_war_pushed_on_a_win_costs_half_the_wars_that_end():
    s = sheet()
    p_war = s.wagers["tie"].outcomes[0].probability
    misdeal = sum((o.probability for o in s.wagers["war"].outcomes if "misdeal" in o.name), Fraction(0))
    assert s.wagers["war"].house_edge == (p_war - misdeal) / 2
    assert 0 < misdeal < Fraction(1, 10**26)         # 30 war steps all tied
    assert round(float(s.wagers["war"].house_edge), 6) == 0.051031
    assert round(float(p_war), 6) == 0.102062


def test_tie_and_four_card_figures():
    s = sheet()
    p_tie = s.wagers["tie"].outcomes[0].probability
    assert s.wagers["tie"].rtp == 9 * p_tie                       # 8:1
    four = s.wagers["four_card"]
    assert sum(o.count for o in four.outcomes) == comb(416, 4)
    assert round(float(four.house_edge), 4) == 0.0445
    bj = sheet("blackjack-war")
    assert round(float(bj.wagers["tie"].outcomes[0].probability), 6) == 0.071365
    assert round(float(bj.wagers["tie"].rtp), 4) == 0.9277           # 12:1, the game's docstring


def test_one_seat_war_pool_pays_the_pot_less_commission_rounded_down():
    s = sheet()
    pool = s.wagers["war_pool"]
    win = next(o for o in pool.outcomes if o.name == "seat wins the pot")
    assert win.net == Fraction(9 - 10, 10)                           # pot 10, 5% -> paid 9
    assert pool.rtp == 1 - Fraction(1, 10) * win.probability - next(
        o.probability for o in pool.outcomes if o.name == "dealer wins the pot")
    house_ante = war.par_sheet(get_game("baccarat-war"),
                               make_options("baccarat-war", {"pool": {"dealer_ante": 10}}))
    win = next(o for o in house_ante.wagers["war_pool"].outcomes if o.name == "seat wins the pot")
    assert win.net == Fraction(19 - 10, 10)                          # pot 20 -> paid 19
    assert round(float(house_ante.wagers["war_pool"].rtp), 4) == 0.95


def test_first_war_step_matches_a_direct_enumeration_of_six_cards_with_card_removal():
    """Single deck, baccarat scoring: every ordered 6-tuple of ranks (seat 2, dealer 2, two war
    cards), weighted by card removal, scored directly: the module's tie-again probability and the
    equal split of the first step's wins and losses."""
    deal = war.InitialDeal(get_game("baccarat-war"), make_options("baccarat-war", {"decks": 1}))
    runs = deal.tie_runs(2)
    ranks = np.arange(2, 15)
    value = np.array([BACCARAT_VALUE[Card.of(int(r), 0)] for r in ranks])
    t = np.indices((13,) * 6, dtype=np.int8).reshape(6, -1)
    weight = np.ones(t.shape[1], dtype=np.int64)
    for r in range(13):
        c = (t == r).sum(axis=0)
        weight *= np.array([perm(4, k) if k <= 4 else 0 for k in range(7)], dtype=np.int64)[c]
    v = value[t]
    seat = (v[0] + v[1]) % 10
    dealer = (v[2] + v[3]) % 10
    tie = seat == dealer
    a, b = (seat + v[4]) % 10, (dealer + v[5]) % 10
    total = perm(52, 6)
    win = int(weight[tie & (a > b)].sum())
    lose = int(weight[tie & (a < b)].sum())
    again = int(weight[tie & (a == b)].sum())
    assert win == lose
    assert Fraction(int(weight[tie].sum()), total) == deal.p_tie
    assert Fraction(again, total) == runs[1]
    assert Fraction(win + lose, total) == runs[0] - runs[1]


def test_short_and_long_war_limits():
    one = sheet(max_war_steps=1)
    misdeal = next(o for o in one.wagers["bac"].outcomes if "misdeal" in o.name)
    deal = war.InitialDeal(get_game("baccarat-war"), make_options("baccarat-war", {}))
    assert misdeal.probability == deal.tie_runs(1)[1]
    long = sheet(max_war_steps=200)
    w = long.wagers["bac"]
    assert w.precision is not None and w.precision < 1e-40
    assert any("not followed" in o.name for o in w.outcomes)
    assert sum(o.probability for o in w.outcomes) == 1


def test_war_length_table():
    t = sheet().extras["war"]
    assert round(t["probability"], 6) == 0.102062
    assert 1.1 < t["average_steps"] < 1.2
    assert t["length"][0]["steps"] == 1 and t["length"][0]["probability"] > 0.8
    assert abs(sum(x["probability"] for x in t["length"]) - 1) < 1e-12


@pytest.mark.parametrize("game,options", [
    ("baccarat-war", {}),
    ("baccarat-war", {"war_scoring": "high_card", "war_win_pays": "even"}),
    ("blackjack-war", {"pool": {"dealer_ante": 10}}),
    ("baccarat-war", {"decks": 1}),
])
def test_egm_simulate_lands_inside_its_interval_around_the_exact_figures(game, options):
    """The verification a lab runs: the real kernel's return of every wager, 30,000 seeded rounds.

    Fifteen figures are checked, so the interval is widened from simulate's 95% to 99.9% (a 95%
    interval misses one figure in twenty by chance); `make par-verify` runs 10^7 rounds at 95%."""
    opts = make_options(game, options)
    exact = war.par_sheet(get_game(game), opts)
    result = simulate(get_game(game), opts, 30_000, rng=RngService.seeded(f"verify:{game}"), seed="v")
    for name, stats in result.to_json()["wagers"].items():
        lo, hi = stats["ci95"]
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * 3.29 / 1.96
        lo, hi = mid - half, mid + half
        assert lo <= float(exact.wagers[name].rtp) <= hi, (name, lo, hi, float(exact.wagers[name].rtp))


@pytest.mark.parametrize("game", ["baccarat-war", "blackjack-war"])
def test_one_deck_stops_the_wars_where_the_shoe_runs_out(game):
    """One deck leaves 48 cards after the initial four: 24 war steps. The kernel ends a war still
    tied then in a misdeal (stakes returned), so the sheet must stop there whatever max_war_steps
    says (it used to divide by zero asking for the 25th step)."""
    s = sheet(game, decks=1)
    deal = war.InitialDeal(get_game(game), make_options(game, {"decks": 1}))
    assert deal.shoe_steps == 24
    for w in s.wagers.values():
        assert sum(o.probability for o in w.outcomes) == 1, w.name
    misdeal = next(o for o in s.wagers["bac"].outcomes if "misdeal" in o.name)
    assert "no cards left after step 24" in misdeal.name
    assert misdeal.probability == deal.tie_runs(24)[24] > 0
    assert s.extras["war"]["length"][-1]["steps"] <= 24
    for steps in (24, 1000):                    # the shoe, not max_war_steps, is the limit
        other = sheet(game, decks=1, max_war_steps=steps)
        assert {n: w.rtp for n, w in other.wagers.items()} == {n: w.rtp for n, w in s.wagers.items()}
    with pytest.raises(ValueError, match="24 war steps"):
        deal.tie_runs(25)


def test_one_deck_kernel_misdeals_when_the_shoe_runs_out_mid_war():
    """The kernel behaviour the one-deck sheet models: a war tied through all 24 steps of one deck
    ends in a misdeal on the 25th, every war wager and the pool returned."""
    from firmware.cards.card import parse_cards
    from firmware.cards.source import StackedSource
    from firmware.games.base import Outcome
    from firmware.kernel.round import RoundKernel

    # Seat 2c 3c against dealer 2d 3d (both 5), then 24 war steps of equal ranks (high card).
    pairs = ["2h 2s", "3h 3s"] + [f"{r}c {r}d {r}h {r}s" for r in "456789TJQKA"]
    cards = parse_cards("2c 2d 3c 3d " + " ".join(pairs))
    assert len(cards) == 52
    game = get_game("blackjack-war")
    kernel = RoundKernel(game, make_options("blackjack-war", {"decks": 1}))
    settlement = kernel.play({1: {"bac": 10, "war": 10, "war_pool": 10}},
                             StackedSource(cards, exhaustion_is_misdeal=True))
    results = settlement.results[1]
    assert {n: (r.outcome, r.net) for n, r in results.items()} == {
        n: (Outcome.VOID, 0) for n in ("bac", "war", "war_pool")}
