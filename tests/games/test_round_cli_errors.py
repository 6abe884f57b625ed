"""Bad input to ``egm round`` exits non-zero with one clear line and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FIG8 = "Qs 2d 3h Ah Td Ts 6c 9s"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "firmware.cli", *args], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--wager", "1:bacc=10", "--cards", FIG8], "unknown wager 'bacc'"),
        (["--wager", "1:bac=-10", "--wager", "1:war=-10", "--cards", FIG8], "cannot be negative"),
        (["--wager", "1:bac=ten", "--cards", FIG8], "not a whole number"),
        (["--wager", "1:bac=10", "--wager", "1:war=10", "--cards", "Qs 2d 3h Xh"], "bad card 'Xh'"),
        (["--wager", "1:bac=10", "--wager", "1:war=10", "--cards", "Qs 2d 3h"], "ran out"),
        (["--wager", "1:bac=10", "--wager", "1:war=5", "--cards", FIG8], "war must equal bac"),
        (["--wager", "1:bac=10", "--wager", "1:war=10", "--option", "war_scoring=fast"], "war_scoring"),
        (["--wager", "1:bac=10", "--wager", "1:war=10", "--option", "colour=red"], "unknown key"),
        (["--wager", "9:bac=10", "--wager", "9:war=10"], "seat 9 does not exist"),
        (["--wager", "1:bac=100000", "--wager", "1:war=100000"], "above the table maximum"),
        (["--wager", "1:tie=5"], "needs a bac wager"),
        (["--wager", "1bac=10"], "expected SEAT:NAME=AMOUNT"),
    ],
)
def test_bad_round_input_is_one_clear_line(args, needle):
    proc = run("round", "baccarat-war", "--json", *args)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert needle in lines[0], lines[0]


def test_unknown_game_is_a_clear_error():
    proc = run("round", "roulette", "--json")
    assert proc.returncode != 0 and "unknown game 'roulette'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_impossible_configuration_is_refused():
    proc = run("round", "baccarat-war", "--option", "decks=1", "--option",
               "four_card_pays=1000,100,50,22,16,13,11")
    assert proc.returncode != 0
    assert "impossible with 1 deck" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        # the issue: 64 x Qs from an 8-deck shoe paid 1000:1
        (["baccarat-war", "--wager", "1:bac=10", "--wager", "1:war=10", "--cards", " ".join(["Qs"] * 64)],
         "Qs is given 64 times, but the game's shoe of 416 cards holds 8"),
        (["baccarat-war", "--option", "decks=1", "--wager", "1:bac=10", "--wager", "1:war=10",
          "--cards", "Qs Qs 3h Ah Td Ts 6c 9s"], "Qs is given 2 times, but the game's shoe of 52 cards holds 1"),
        # Double Super 9's 288-card shoe holds A-6 only: 12 decks, 12 of each card
        (["double-super-9", "--dice", "7", "--cards", "7h As 2s 3s 4s 5s 6s As"],
         "7h is given 1 time, but the game's shoe of 288 cards holds none"),
        (["double-super-9", "--dice", "7", "--cards", " ".join(["6c"] * 13)],
         "6c is given 13 times, but the game's shoe of 288 cards holds 12"),
        (["three-card-poker", "--cards", "As Ks Qs As Kd Qd"], "As is given 2 times, but the game's shoe of 52 cards holds 1"),
    ],
    ids=["64-queens-8-decks", "two-queens-1-deck", "seven-in-ds9", "13-sixes-in-ds9", "two-aces-tcp"],
)
def test_cards_the_shoe_cannot_hold_are_refused(args, needle):
    proc = run("round", *args, "--json")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [f"egm round: error: {needle}"]


def test_every_stacked_path_checks_the_shoe():
    """Replay and the demonstration rounds stack cards through the same check as ``--cards``."""
    from firmware.cards.errors import CardError
    from firmware.config import Config
    from firmware.kernel.round import replay
    from firmware.ui.context import GameContext
    from firmware.ui.demo import play_round

    proc = run("round", "baccarat-war", "--wager", "1:bac=10", "--wager", "1:war=10", "--cards", FIG8, "--json")
    record = json.loads(proc.stdout)
    assert replay(record) == record
    record["cards_dealt"] = ["Qs"] * 8 + record["cards_dealt"]           # edited: 9 x Qs from 8 decks
    with pytest.raises(CardError, match="Qs is given 9 times, but the game's shoe of 416 cards holds 8"):
        replay(record)
    ctx = GameContext.from_config(Config(), "baccarat-war")
    with pytest.raises(CardError, match="Qs is given 9 times"):
        play_round(ctx, " ".join(["Qs"] * 9), {1: {"bac": 10, "war": 10}})
