"""The table controller in process with fake stations: bets, the window, seats, results, restarts."""

from __future__ import annotations

import pytest

from firmware.table.errors import TableError
from tests.table.conftest import bet

#: Seat 1 (9h Kc: 9) beats the dealer (4s 2h: 6); seat 2 (2c 3d: 5) loses to it.
TWO_SEATS = ["9h", "2c", "4s", "Kc", "3d", "2h"]


def test_bets_are_accepted_and_each_station_gets_its_result_once(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS)
    assert controller.join("station-1", 0)["seat"] == 1
    assert controller.join("station-2", 0)["seat"] == 2
    controller.open_betting()
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))
    controller.bet("station-2", bet("b2", {"bac": 20, "war": 20}))
    assert controller.snapshot()["phase"] == "dealing"     # every station has bet: closed early
    controller.deal()
    assert controller.snapshot()["phase"] == "settled"
    (r1,) = out.of("station-1", "result")
    (r2,) = out.of("station-2", "result")
    assert (r1["bet_id"], r1["results"]["bac"]["net"], r1["results"]["war"]["net"]) == ("b1", 10, 0)
    assert (r2["bet_id"], r2["results"]["bac"]["net"], r2["results"]["war"]["net"]) == ("b2", -20, 0)
    assert out.of("station-1", "bet_answer") == [
        {"bet_id": "b1", "accepted": True, "round_id": "TABLE-1-000001", "reason": "accepted"}]
    m = controller.meters()
    assert (m["coin_in"], m["coin_out"], m["games_played"]) == (60, 50, 1)
    assert controller.ledger.credits_cents == 0          # the controller holds no credits


def test_a_bet_after_the_window_closed_is_refused_and_returned(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS)
    controller.join("station-1", 0)
    controller.join("station-2", 0)
    controller.open_betting()
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))
    controller.close_betting()
    controller.bet("station-2", bet("late", {"bac": 10, "war": 10}))
    (answer,) = out.of("station-2", "bet_answer")
    assert answer["accepted"] is False and answer["reason"] == "the betting window is closed"
    assert "late" not in controller.round.bets
    assert out.of("station-2", "result") == []


def test_the_same_bet_sent_twice_is_answered_once_and_counted_once(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS)
    controller.join("station-1", 0)
    controller.open_betting()
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))
    assert len(controller.round.bets) == 1
    answers = out.of("station-1", "bet_answer")
    assert len(answers) == 2 and answers[0] == answers[1]
    assert len(controller.ledger.records_for("b1")) == 1


def test_a_seat_taken_is_refused_and_a_station_keeps_its_seat(table) -> None:
    controller, _, _ = table(stack=TWO_SEATS)
    assert controller.join("station-1", 3)["seat"] == 3
    with pytest.raises(TableError, match="seat 3 is taken by station-1"):
        controller.join("station-2", 3)
    assert controller.join("station-2", 0)["seat"] == 1
    with pytest.raises(TableError, match="sits at seat 3"):
        controller.join("station-1", 4)
