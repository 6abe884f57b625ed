"""``egm par`` per CONTRACTS.md: the PAR sheet as JSON, exact where enumerable, Monte Carlo otherwise."""

from __future__ import annotations

import json
import re

import pytest

from firmware.cli import main
from tests.games.helpers import egm_fails


def par(capsys, *args: str) -> dict:
    code = main(["par", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def par_error(capsys, *args: str) -> str:
    return egm_fails(capsys, "par", *args, "--json")


def test_contract_shape_and_exact_baccarat_war(capsys):
    doc = par(capsys, "baccarat-war", "--option", "pool.enabled=true")
    assert doc["game"] == "baccarat-war" and doc["method"] == "exact"
    assert doc["options"]["decks"] == 8
    for name in ("bac", "war", "tie", "four_card", "war_pool"):
        w = doc["wagers"][name]
        assert {"rtp", "house_edge", "hit_frequency", "variance", "outcomes"} <= set(w)
        assert abs(w["rtp"] + w["house_edge"] - 1) < 1e-12
        assert abs(sum(o["probability"] for o in w["outcomes"]) - 1) < 1e-12
    assert doc["wagers"]["bac"]["house_edge"] == 0
    assert doc["war"]["average_steps"] > 1


def test_even_war_win_makes_bac_plus_war_exactly_zero(capsys):
    doc = par(capsys, "baccarat-war", "--option", "war_win_pays=even")
    assert doc["wagers"]["bac+war"]["house_edge"] == 0
    assert doc["wagers"]["bac+war"]["rtp_exact"] == "1/1"


def test_three_card_poker_published_figures(capsys):
    doc = par(capsys, "three-card-poker")
    ante = doc["wagers"]["ante"]
    assert round(100 * ante["house_edge"], 2) == 3.37
    assert round(100 * ante["element_of_risk"], 2) == 2.01
    assert doc["strategy"]["play_at_or_above"] == "Q-6-4"
    for pays, edge in (("40,30,6,4,1", 2.32), ("40,30,6,3,1", 7.28), ("35,25,6,4,1", 4.58),
                       ("40,25,6,4,1", 3.49)):
        doc = par(capsys, "three-card-poker", "--option", f"pair_plus_pays={pays}")
        assert round(100 * doc["wagers"]["pair_plus"]["house_edge"], 2) == edge


def test_monte_carlo_states_sample_size_and_interval(capsys):
    doc = par(capsys, "split21-stud", "--method", "monte-carlo", "--rounds", "3000", "--seed", "cli",
              "--processes", "1")
    assert doc["method"] == "monte-carlo"
    ante = doc["wagers"]["ante"]
    assert ante["method"] == "monte-carlo" and ante["sample_size"] == 3000
    lo, hi = ante["ci95"]
    assert lo < ante["rtp"] < hi and ante["standard_error"] > 0
    assert doc["monte_carlo"]["rounds"] == 3000


def test_several_seats_mix_exact_side_bets_with_simulated_wars(capsys):
    doc = par(capsys, "blackjack-war", "--seats", "3", "--rounds", "2000", "--seed", "s",
              "--processes", "1", "--option", "pool.enabled=true")
    assert doc["seats"] == 3 and doc["method"] == "monte-carlo"
    assert doc["wagers"]["tie"]["method"] == "exact"
    assert doc["wagers"]["war_pool"]["method"] == "monte-carlo"
    assert "bac+war" not in doc["wagers"]


@pytest.mark.parametrize("game", ["holdem-war", "split21-stud"])
def test_holdem_war_and_split21_stud_sheets_are_exact(capsys, game):
    doc = par(capsys, game, "--method", "exact")
    assert doc["method"] == "exact"
    assert all(w["method"] == "exact" for w in doc["wagers"].values())
    assert main(["par", game]) == 0
    assert f"PAR sheet: {game} (exact)" in capsys.readouterr().out


def test_bad_requests_are_one_clear_line(capsys):
    assert "no exact method" in par_error(capsys, "split21-stud", "--method", "exact", "--option",
                                          "banking=player", "--seats", "2")
    assert "war_win_pays" in par_error(capsys, "baccarat-war", "--option", "war_win_pays=double")
    assert "unknown game" in par_error(capsys, "roulette")
    assert "seats 1-7" in par_error(capsys, "baccarat-war", "--seats", "9")
    assert "no such directory" in par_error(capsys, "double-super-9", "--html", "/nonexistent/dir/x.html")


def test_verify_checks_exact_figures_against_the_kernel(capsys):
    doc = par(capsys, "double-super-9", "--verify", "4000", "--seed", "verify", "--processes", "1")
    (check,) = doc["verification"]
    assert check["wager"] == "bet" and check["rounds"] == 4000 and check["inside"]


def test_html_report_is_written(capsys, tmp_path):
    path = tmp_path / "ds9.html"
    doc = par(capsys, "double-super-9", "--html", str(path), "--convergence-rounds", "500")
    html = path.read_text("utf-8")
    assert doc["wagers"]["bet"]["method"] == "exact"
    assert html.count("<svg") >= 3 and "Double Super 9" in html and "https://" not in html


def test_one_deck_war_games_have_a_sheet(capsys):
    """decks=1 used to raise ZeroDivisionError: the 30 default war steps need more cards than one
    deck leaves. The sheet now stops where the kernel's shoe runs out (24 steps, a misdeal)."""
    for game in ("baccarat-war", "blackjack-war"):
        doc = par(capsys, game, "--option", "decks=1")
        outcomes = doc["wagers"]["war"]["outcomes"]
        assert any("no cards left after step 24" in o["outcome"] for o in outcomes)
        assert abs(sum(o["probability"] for o in outcomes) - 1) < 1e-12
    doc = par(capsys, "baccarat-war", "--option", "decks=1", "--seats", "2", "--rounds", "2000",
              "--seed", "one-deck")
    assert doc["wagers"]["tie"]["method"] == "exact" and doc["wagers"]["war"]["method"] == "monte-carlo"


def test_elapsed_times_cover_every_phase_and_the_whole_command(capsys, tmp_path):
    """The report used to say 'computed in 0.17 s' for the sheet alone while an unannounced
    convergence run took most of the command: every phase is now timed, and the whole command."""
    path = tmp_path / "tcp.html"
    doc = par(capsys, "three-card-poker", "--html", str(path), "--convergence-rounds", "600",
              "--verify", "600", "--seed", "elapsed", "--processes", "1")
    elapsed = doc["elapsed"]
    assert list(elapsed) == ["sheet", "verification (600 rounds)", "convergence run (600 rounds)",
                             "HTML report", "whole command"]
    assert elapsed["sheet"] == doc["elapsed_s"]
    phases = sum(v for k, v in elapsed.items() if k != "whole command")
    assert elapsed["whole command"] >= phases - 0.005          # rounding to milliseconds
    html = path.read_text("utf-8")
    assert re.search(r"computed in sheet \d+\.\d\d s, verification \(600 rounds\) \d+\.\d\d s, "
                     r"convergence run \(600 rounds\) \d+\.\d\d s", html)
    assert main(["par", "three-card-poker", "--html", str(path), "--convergence-rounds", "300"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^elapsed: sheet \d+\.\d\d s, convergence run \(300 rounds\) \d+\.\d\d s, "
                     r"HTML report \d+\.\d\d s, whole command \d+\.\d\d s$", out, re.M)
    assert "computed in" not in out


def test_html_report_shows_the_monte_carlo_agreement_of_an_exact_sheet(capsys, tmp_path):
    report = tmp_path / "split21.html"
    doc = par(capsys, "split21-stud", "--html", str(report), "--convergence-rounds", "500",
              "--verify", "2000", "--seed", "html", "--processes", "1", "--option", "jackpot.enabled=true")
    assert doc["method"] == "exact"
    assert [c["wager"] for c in doc["verification"]] == ["ante", "jackpot", "high", "low"]
    page = report.read_text("utf-8")
    assert 'id="extra-verification"' in page and 'id="convergence"' in page
    assert page.count("<td") > 0 and "simulated" in page
