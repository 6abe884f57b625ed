"""The table controller's power-up: it takes up where its critical memory stands.

A round in progress is resumed from the journal (its results go out as its stations come back), a
settled round stays shown, and a window that had accepted bets opens again with them
(docs/protocols/table.md, "Power cuts").
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from firmware.games.player_banker import turn_from_json
from firmware.ledger.resume import resume_round
from firmware.table.betting import Bet
from firmware.table.phases import TablePhase as P

if TYPE_CHECKING:
    from firmware.table.controller import TableController

log = logging.getLogger(__name__)


def recover(c: TableController) -> None:
    """Take up where the journal stands: a round in progress is resumed (and its results sent
    as its stations come back), a window with accepted bets opens again."""
    from firmware.table.controller import TableRound  # the controller imports this module

    last = c.records.last_window()
    if last is None:
        return
    seq, window = last
    round_id: str = window["round_id"]
    r = c.round = TableRound(round_id=round_id, round_no=window["round_no"])
    c.rotation.turn = turn_from_json(window.get("banker"))
    r.banker_seat = c.rotation.turn.spot if c.rotation.turn is not None else None
    if c.cards.stack is not None:      # on from the window's place, past the cards journaled
        dealt: int = sum(len(e["cards"]) for e in c.records.round_entries(round_id))
        c.cards.stack.pos = window["stack_pos"] + dealt
    for body in c.records.accepted_since(seq):
        if body["round_id"] == r.round_id:
            r.bets[body["bet_id"]] = Bet.of(body)
    for bet in r.bets.values():
        c.seating.hold(bet.station, bet.seat)
    open_round = c.ledger.open_round
    if open_round is not None and open_round.round_id == r.round_id:
        log.info("table: resuming round %s from the journal", r.round_id)
        c.phase = c._move("resume")
        r.closed_at_ns = time.monotonic_ns()
        kernel = resume_round(c.ledger, c.cards.rng, continuation=c.cards.continuation(),
                              decision_timeout_s=c.settings.decision_timeout_s, clock=c.clock)
        assert kernel is not None
        r.kernel = kernel
        c._after_deal()
    elif c.records.completed(round_id) is not None:
        r.record = c.records.round_record(round_id)
        c.phase = c._move("settle", from_=P.SHOWDOWN)
        r.ended_at = c.clock()
    elif r.bets:
        log.info("table: window of round %s opens again with %d bets", r.round_id, len(r.bets))
        c.phase = c._move("open")
        r.window_closes_at = c.clock() + c.settings.betting_window_s
