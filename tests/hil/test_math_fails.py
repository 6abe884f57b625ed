"""The lab suite's PAR verification shown able to fail: a game that does not play as its PAR sheet
says, from a broken copy of the software.

Three Card Poker's PAR assumes the house way Q-6-4 (play queen-six-four or better, fold the rest),
derived by the exact analysis; the broken copy's automatic play plays every hand instead. The
exact figures and the shipped sheet are unchanged, so only the simulation through the round kernel
can tell: ``math.par.three-card-poker`` must FAIL on the ANTE's simulated return and still find
the exact figures equal to the shipped sheet's. (The unbroken game passes the same test in every
lab run; running it here too would double this file's minute.)
"""

from __future__ import annotations

import pytest

from tests.hil.broken import broken_copy, run_hil

pytestmark = pytest.mark.slow          # one suite run of 400,000 rounds from a copy of the software: about 40 s

GAME = "firmware/games/three_card_poker.py"


def test_a_game_that_plays_every_hand_fails_its_par_verification(tmp_path):
    software = broken_copy(tmp_path, {GAME: (
        "return optimal_action(state.by_seat[request.seat].strength)", "return PLAY")})
    code, record = run_hil(software, tmp_path, "math.par.three-card-poker")
    assert code == 1
    test = next(t for t in record["tests"] if t["id"] == "math.par.three-card-poker")
    assert test["verdict"] == "FAIL", test["reason"]
    failed = [m["name"] for m in test["measurements"] if not m["passed"]]
    assert failed == ["ante: simulated RTP"]
    shipped = [m for m in test["measurements"] if m["name"].endswith("exact RTP equals the shipped sheet's")]
    assert shipped and all(m["passed"] for m in shipped)
