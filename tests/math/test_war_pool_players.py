"""The war pool's figures for N real players (issue 24): against a brute-force enumeration of the
initial deal, the one-seat sheet at N = 1, the commission's share, symmetry, and ``egm par --players``."""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import combinations_with_replacement, product
from math import perm

import pytest

from firmware.cards.card import BACCARAT_VALUE, BLACKJACK_VALUE, Card
from firmware.games.registry import get_game, make_options
from firmware.math import war_pool
from firmware.math.par import ParError
from tests.math.test_par_cli import par, par_error

Z999 = 3.29          # a seeded run inside its 99.9% interval


def brute_force(game_id: str, decks: int, players: int) -> tuple[Fraction, Fraction]:
    """(P(the dealer takes the pot), P(a contest of two or more hands)), exactly, by enumerating
    every initial deal of the players and the dealer with card removal. Written from the rules
    (step 6 A/B) alone: the highest tied tier contests, else the single highest hand wins; the
    hands in a contest draw alike, so each wins it with probability 1/k. Nothing here assumes the
    dealer is like a player."""
    game = get_game(game_id)
    value = BACCARAT_VALUE if game_id == "baccarat-war" else BLACKJACK_VALUE
    classes: dict[int, list[int]] = {}
    for rank in range(2, 15):
        classes.setdefault(value[Card.of(rank, 0)], []).append(rank)
    size = {c: 4 * decks * len(ranks) for c, ranks in classes.items()}
    hands = []                      # (class pair, orderings, score)
    for a, b in combinations_with_replacement(sorted(classes), 2):
        cards = [Card.of(classes[a][0], 0), Card.of(classes[b][0], 1)]
        hands.append(((a, b), 1 if a == b else 2, game.hand_score(cards, [])))
    lcm = math.lcm(*range(1, players + 2))
    dealer_wins = contest = 0           # in units of 1 / (total * lcm) and 1 / total
    for deal in product(hands, repeat=players + 1):   # the dealer's hand first
        used: Counter[int] = Counter()
        weight = 1
        for (a, b), orderings, _s in deal:
            used[a] += 1
            used[b] += 1
            weight *= orderings
        for c, m in used.items():
            weight *= perm(size[c], m)
        scores = [s for _p, _o, s in deal]
        tiers = Counter(scores)
        tied = [s for s, k in tiers.items() if k >= 2]
        if tied:
            best = max(tied)
            contest += weight
            if scores[0] == best:
                dealer_wins += weight * lcm // tiers[best]
        elif scores[0] == max(scores):
            dealer_wins += weight * lcm
    total = perm(52 * decks, 2 * (players + 1))
    return Fraction(dealer_wins, total * lcm), Fraction(contest, total)


def pool_options(game_id: str, **extra) -> object:
    return make_options(game_id, {"pool": {"enabled": True}, **extra})


def test_brute_force_one_player_is_the_exact_one_seat_sheet():
    options = pool_options("baccarat-war", decks=1)
    dealer, contest = brute_force("baccarat-war", 1, 1)
    one = war_pool.player_figures("baccarat-war", options, 1)[0]
    assert contest == one.p_contest                    # the initial tie, exactly
    assert dealer == Fraction(1, 2)
    assert abs(dealer - one.p_dealer) < Fraction(1, 10**20)   # exact but for the war misdeal line
    assert abs(one.commission_per_round - Fraction(1, 2)) < Fraction(1, 10**20)   # 1 credit, half the time


@pytest.mark.parametrize("game_id", ["baccarat-war", "blackjack-war"])
def test_two_players_through_the_kernel_match_the_brute_force(game_id):
    options = pool_options(game_id, decks=1)
    dealer, contest = brute_force(game_id, 1, 2)
    assert dealer == Fraction(1, 3)                     # the dealer is one of three alike hands
    fig = war_pool.player_figures(game_id, options, 2, rounds=10_000, seed="brute", processes=1,
                                  use_shipped=False)[1]
    pot, paid = 20, 19                                  # 5% of 20 is 1 credit
    assert (fig.pot, fig.paid, fig.commission) == (pot, paid, 1)
    rtp = (1 - dealer) / 2 * Fraction(paid, 10)         # each player wins half of what the dealer does not
    assert fig.rtp == rtp and fig.p_dealer == dealer
    assert fig.commission_per_round == (1 - dealer) * (pot - paid)
    mc = fig.monte_carlo
    assert mc is not None and fig.agrees
    assert abs(mc.p_dealer - float(dealer)) < Z999 * mc.p_dealer_se
    assert abs(mc.p_contest - float(contest)) < Z999 * mc.p_contest_se
    assert fig.p_contest == mc.p_contest
    assert abs(mc.rtp - float(rtp)) < Z999 * mc.rtp_se
    assert abs(mc.commission_per_round - float(fig.commission_per_round)) < Z999 * mc.commission_se
    assert abs(mc.rtp - float(fig.rtp)) < Z999 * mc.rtp_se          # the dealer ante is the players' gain
    # The same check refuses a computation that forgets the commission (it pays the whole pot)
    # or the dealer (each player wins half the pots).
    for broken in ((1 - dealer) / 2 * Fraction(pot, 10), Fraction(paid, 2 * 10)):
        assert abs(mc.rtp - float(broken)) > Z999 * mc.rtp_se


def test_one_player_is_the_one_seat_sheet_and_the_kernel_agrees():
    from firmware.math.par import par_sheet

    options = pool_options("blackjack-war")
    exact = war_pool.player_figures("blackjack-war", options, 1)[0]
    sheet = par_sheet("blackjack-war", options, seats=1, unit=10)
    assert exact.rtp == sheet.wagers["war_pool"].rtp           # the same Fraction
    assert exact.monte_carlo is None
    # The formula of N >= 2 gives the same at N = 1, to its precision.
    assert abs(exact.rtp - Fraction(9, 20)) < 1e-20
    mc = war_pool.player_figures("blackjack-war", options, 1, rounds=10_000, seed="one", processes=1,
                                 monte_carlo_one=True, use_shipped=False)[0]
    assert mc.monte_carlo is not None and mc.agrees
    assert abs(mc.monte_carlo.p_contest - float(exact.p_contest)) < Z999 * mc.monte_carlo.p_contest_se


def test_the_commission_is_the_house_share_of_every_pot_a_player_wins():
    # A dealer ante of 10 and 10% commission: pot 40, a winner gets 36, the house keeps 4.
    options = pool_options("baccarat-war", pool={"enabled": True, "dealer_ante": 10, "commission": 10})
    tally = war_pool.play("baccarat-war", options, [3], unit=10, rounds=3_000, seed="share", processes=1)[3]
    fig = war_pool.exact_figures(options, 3, 10, 0.5, 0.01)
    assert (fig.pot, fig.paid, fig.commission) == (40, 36, 4)
    assert fig.rtp == Fraction(36, 40) and fig.commission_per_round == Fraction(3, 4) * 4
    won = tally.rounds - tally.dealer_wins - tally.misdeals
    assert tally.commission == won * 4
    # Every credit the players lose is the house's: the dealer's pots and the commission, less its ante.
    assert -sum(tally.net) == tally.dealer_wins * (40 - 10) + won * (4 - 10)
    mc = war_pool.monte_carlo_figures(tally, 10, seed="share")
    assert mc.commission_per_round == pytest.approx(won * 4 / tally.rounds)
    assert abs(mc.commission_per_round - float(fig.commission_per_round)) < Z999 * mc.commission_se
    assert abs(mc.rtp - float(fig.rtp)) < Z999 * mc.rtp_se          # the dealer ante is the players' gain
    assert fig.house_pool_per_round == 3 * 10 * (1 - fig.rtp)
    # Without commission the players get every pot they win.
    free = pool_options("baccarat-war", pool={"enabled": True, "commission": 0})
    tally = war_pool.play("baccarat-war", free, [3], unit=10, rounds=2_000, seed="share", processes=1)[3]
    assert tally.commission == 0
    assert -sum(tally.net) == tally.dealer_wins * 30
    assert war_pool.exact_figures(free, 3, 10, 0.5, 0.01).rtp == Fraction(30, 40)


def test_every_player_has_the_same_figures():
    options = pool_options("holdem-war")
    fig = war_pool.player_figures("holdem-war", options, 7, rounds=4_000, seed="sym", processes=1,
                                  use_shipped=False)[-1]
    mc = fig.monte_carlo
    assert mc is not None and len(mc.seats) == 7
    assert mc.symmetry_z is not None and mc.symmetry_z < 3.9      # 99.99%, seven seats
    assert mc.rtp == pytest.approx(sum(r for r, _se in mc.seats) / 7)
    for r, se in mc.seats:
        assert abs(r - float(fig.rtp)) < 4 * se
    assert fig.agrees


def test_the_shipped_figures_agree_with_the_exact_ones():
    figures = war_pool.player_figures("baccarat-war", pool_options("baccarat-war"), 7)
    assert [f.players for f in figures] == list(range(1, 8))
    assert all(f.monte_carlo and f.monte_carlo.rounds == war_pool.DEFAULT_ROUNDS for f in figures[1:])
    assert all(f.agrees is not False for f in figures)
    assert [f.rtp for f in figures[1:]] == [Fraction(p, 10 * (n + 1)) for n, p in
                                            zip(range(2, 8), (19, 28, 38, 47, 57, 66), strict=True)]
    contests = [float(f.p_contest) for f in figures]
    assert contests == sorted(contests)
    assert all(f.precision is not None and f.precision < 1e-20 for f in figures[1:])


@pytest.mark.parametrize("game_id", war_pool.GAMES)
def test_the_default_figures_ship_with_the_firmware(game_id):
    options = pool_options(game_id)
    for n in range(2, war_pool.MAX_PLAYERS + 1):
        hit = war_pool.lookup(game_id, options, n, 10, rounds=war_pool.DEFAULT_ROUNDS, seed=None)
        assert hit is not None, (game_id, n)
        assert hit[0].rounds == war_pool.DEFAULT_ROUNDS and hit[1] == f"shipped:{game_id}"


def test_refusals():
    with pytest.raises(ParError, match="no war pool"):
        war_pool.check("three-card-poker", make_options("three-card-poker", {}), 2, 10)
    with pytest.raises(ParError, match="pool is off"):
        war_pool.check("baccarat-war", make_options("baccarat-war", {"pool": {"enabled": False}}), 2, 10)
    with pytest.raises(ParError, match="1-7 players, not 8"):
        war_pool.check("baccarat-war", pool_options("baccarat-war"), 8, 10)


def test_egm_par_players(capsys):
    doc = par(capsys, "baccarat-war", "--option", "pool.enabled=true", "--players", "3", "--rounds", "2000",
              "--seed", "cli", "--processes", "1")
    plain = par(capsys, "baccarat-war", "--option", "pool.enabled=true")
    assert {k: v for k, v in doc.items() if k not in ("players", "elapsed", "elapsed_s")} == \
        {k: v for k, v in plain.items() if k not in ("elapsed", "elapsed_s")}
    players = doc["players"]
    assert [f["players"] for f in players["figures"]] == [1, 2, 3]
    one, _two, three = players["figures"]
    assert one["contest_method"] == "exact" and one["rtp"] == doc["wagers"]["war_pool"]["rtp"]
    assert "monte_carlo" not in one
    assert three["rtp_exact"] == "7/10" and three["dealer_wins_probability"] == 0.25
    assert (three["pot"], three["paid_to_winner"], three["commission_on_win"]) == (30, 28, 2)
    mc = three["monte_carlo"]
    assert three["contest_method"] == "monte-carlo" and mc["rounds"] == 2000 and mc["seed"] == "cli"
    assert len(mc["per_seat"]) == 3 and mc["agrees"] and players["monte_carlo_agrees"]
    assert three["contest_probability"] == mc["contest_probability"]
    assert players["commission_percent"] == 5


def test_egm_par_players_text_and_refusals(capsys):
    from firmware.cli import main

    assert main(["par", "blackjack-war", "--option", "pool.enabled=true", "--players", "2", "--rounds",
                 "1000", "--seed", "t", "--processes", "1"]) == 0
    out = capsys.readouterr().out
    assert "war pool among real players" in out and "symmetry:" in out
    assert "no war pool" in par_error(capsys, "three-card-poker", "--players", "2")
    assert "pool is off" in par_error(capsys, "baccarat-war", "--option", "pool.enabled=false", "--players", "2")
    assert "1-7 players, not 9" in par_error(capsys, "baccarat-war", "--option", "pool.enabled=true",
                                             "--players", "9")


@pytest.mark.soak
@pytest.mark.parametrize("game_id", ["baccarat-war", "blackjack-war"])
def test_soak_two_players_match_the_brute_force_closely(game_id):
    dealer, contest = brute_force(game_id, 1, 2)
    mc = war_pool.player_figures(game_id, pool_options(game_id, decks=1), 2, rounds=400_000, seed="soak",
                                 use_shipped=False)[1].monte_carlo
    assert mc is not None
    assert abs(mc.p_dealer - float(dealer)) < Z999 * mc.p_dealer_se
    assert abs(mc.p_contest - float(contest)) < Z999 * mc.p_contest_se


def test_the_documented_table_is_the_shipped_figures():
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "math" / "README.md").read_text("utf-8")
    figures = {g: war_pool.player_figures(g, pool_options(g), 7) for g in war_pool.GAMES}
    for i in range(7):
        f = figures["baccarat-war"][i]
        contests = []
        for g in war_pool.GAMES:
            x = figures[g][i]
            se = "" if x.p_contest_se is None else f" ± {100 * x.p_contest_se:.2f}"
            contests.append(f"{100 * float(x.p_contest):.2f}%{se}")
        ret = f"{100 * float(f.rtp):.4f}%"
        ret = f"{ret} (one-seat sheet)" if i == 0 else f"{f.rtp.numerator}/{f.rtp.denominator} = {ret}"
        row = (f"| {f.players} | {f.pot} | {f.paid} | {ret} | 1/{f.players + 1} | "
               f"{float(f.commission_per_round):.4f} | " + " | ".join(contests) + " |")
        assert row in doc, row
