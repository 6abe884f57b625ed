"""Results named by what the player gets (firmware/games/outcome_label.py): the JSON keeps the
contract's outcome values, the text for people never calls a loss of money a win."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from firmware.cli import main
from firmware.games.outcome_label import outcome_label, player_gets


@pytest.mark.parametrize("net,stake,gets", [
    (10, 10, "win"), (Fraction(9, 10), 1, "win"), (0, 10, "stake returned"),
    (-1, 10, "pays less than the stake"), (Fraction(-1, 10), 1, "pays less than the stake"),
    (-10, 10, "stake lost"), (-1, 2, "pays less than the stake"), (-2, 2, "stake lost"),
])
def test_what_the_player_gets(net, stake, gets):
    assert player_gets(net, stake) == gets


@pytest.mark.parametrize("outcome,net,stake,label", [
    ("win", 10, 10, "win"),
    ("lose", -10, 10, "lose"),
    ("push", 0, 10, "push"),
    ("win", -1, 10, "pays less than the stake"),             # a war pool won alone, 5% kept
    ("win", Fraction(-1, 10), 1, "pays less than the stake"),  # a Split 21 jackpot, per unit
    ("win", 0, 10, "stake returned"),
    ("lose", -1, 2, "pays less than the stake"),             # ANTE+PLAY lost, ante bonus paid
    ("fold", -1, 1, "fold, stake lost"),
    ("void", 0, 10, "void, stake returned"),
    ("seat wins the pot", Fraction(-1, 10), 1, "seat wins the pot: pays less than the stake"),
    ("dealer beats the hand + straight flush bonus 5:1", 3, 2,
     "dealer beats the hand + straight flush bonus 5:1: win"),
])
def test_labels(outcome, net, stake, label):
    assert outcome_label(outcome, net, stake) == label


POOL_WON_ALONE = ["baccarat-war", "--cards", "9h Tc Th Ts", "--wager", "1:bac=10",
                  "--wager", "1:war=10", "--wager", "1:war_pool=10", "--option", "pool.enabled=true"]


def test_egm_round_text_names_a_pool_won_for_less_than_the_ante(capsys):
    """A lone seat wins its own 10-credit pot less 5%: paid 9, net -1. The text used to say
    'win -1'; the JSON keeps the contract's 'win'."""
    assert main(["round", *POOL_WON_ALONE]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("war_pool"))
    assert line.split() == ["war_pool", "10", "pays", "less", "than", "the", "stake", "-1"]
    assert "bac            10  win" in out
    assert main(["round", *POOL_WON_ALONE, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["seats"][0]["results"]["war_pool"] == {"outcome": "win", "net": -1}


def test_par_outcome_rows_carry_the_label_beside_the_outcome(capsys):
    assert main(["par", "baccarat-war", "--option", "pool.enabled=true", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    labels = {o["outcome"]: o["label"] for o in doc["wagers"]["war_pool"]["outcomes"]}
    assert labels["seat wins the pot"] == "seat wins the pot: pays less than the stake"
    assert labels["dealer wins the pot"] == "dealer wins the pot: stake lost"
    war = {o["outcome"]: o["label"] for o in doc["wagers"]["war"]["outcomes"]}
    assert war["war won"] == "war won: stake returned"          # pushed by default
