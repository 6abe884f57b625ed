"""Bad input to ``egm round`` exits non-zero with one clear line and no traceback."""

from __future__ import annotations

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
