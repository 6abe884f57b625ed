"""Subprocess driver for the power-fail tests: play one fixed Baccarat War round into critical
memory, killing the process (``os._exit``, no clean-up, like a power cut) at write step N.

Usage: python crash_driver.py STATE_DIR CRASH_AT   (CRASH_AT 0 = never crash)

On every start it does what the terminal does: open (verify, repair) critical memory, insert the
note if none was inserted yet, resume an unfinished round from its journal or else play the round.
Cards come from the fixed stack; on resume the cards past the journal come from the same stack
position, so a resumed round must end exactly as the uninterrupted one.
Prints the final meters and the round's record as JSON on success.
"""

from __future__ import annotations

import json
import os
import sys

from firmware.cards.card import parse_cards
from firmware.cards.source import StackedSource
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.ledger import store
from firmware.ledger.ledger import Ledger
from firmware.ledger.resume import resume_round

# Seats 1, 3 and the dealer tie at 5; a four-step war (tens) for both seats, then seat 1 wins and
# seat 3 loses; seats 1, 3, 5 contest the pool (tier 5), reusing the war cards; seat 5 draws its own.
STACK = parse_cards(
    "2c 3d 8s 5h 3c 2d Ks Kh Td Tc Th Jd Jc Jh Qd Qc Qh Kd Kc Kh 4s 2s 3s 7h 8h 9h 2h 3h 4h 5s"
)
WAGERS = {1: {"bac": 10, "war": 10, "war_pool": 5}, 3: {"bac": 20, "war": 20, "war_pool": 5, "tie": 5},
          5: {"bac": 10, "war": 10, "war_pool": 5, "four_card": 5}}


def main() -> None:
    state_dir, crash_at = sys.argv[1], int(sys.argv[2])
    steps = {"n": 0}

    def checkpoint(self, label):
        steps["n"] += 1
        if steps["n"] == crash_at:
            os._exit(137)

    store.Copy.checkpoint = checkpoint
    with Ledger.open(state_dir) as ledger:
        if ledger.meters.get("bills_in", 0) == 0:
            ledger.bill_in(10000)
        game = get_game("baccarat-war")
        options = make_options(game.id, {"max_war_steps": 30})
        if ledger.open_round is not None:
            n = len(ledger.open_round.resume_data()["cards"])
            kernel = resume_round(ledger, None, continuation=StackedSource(STACK[n:]))
        elif ledger.meters.get("games_played", 0) == 0:
            kernel = RoundKernel(game, options, journal=ledger)
            kernel.play(WAGERS, StackedSource(STACK), credits=ledger.credits, round_id="fixed-round")
        recall = ledger.recall(1)[0]
        print(json.dumps({"meters": ledger.meters, "record": recall, "steps": steps["n"]}))


if __name__ == "__main__":
    main()
