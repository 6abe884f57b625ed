"""The table controller in process with fake stations: bets, the window, seats, results, restarts."""

from __future__ import annotations

import pytest

from firmware.table.errors import TableError
from tests.table.conftest import bet

#: Seat 1 (9h Kc: 9) beats the dealer (4s 2h: 6); seat 2 (2c 3d: 5) loses to it.
TWO_SEATS = ["9h", "2c", "4s", "Kc", "3d", "2h"]


def one_bet(controller) -> None:
    """station-1 (seat 1) and station-2 (seat 2) join; the window opens; station-1 bets 10+10."""
    controller.join("station-1", 0)
    controller.join("station-2", 0)
    controller.open_betting()
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))


def two_bets(controller) -> None:
    """:func:`one_bet`, then station-2 bets 20+20 (every station has bet: the window closes)."""
    one_bet(controller)
    controller.bet("station-2", bet("b2", {"bac": 20, "war": 20}))


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
    one_bet(controller)
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


def _returned(result: dict) -> int:
    return sum(result["stakes"][n] + result["results"][n]["net"] for n in result["stakes"])


def test_a_bet_sent_again_after_the_settlement_gets_the_same_result_and_the_round_counts_once(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS)
    two_bets(controller)
    controller.deal()
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))     # its link dropped: sent again
    first, again = out.of("station-1", "result")
    assert first["results"] == again["results"] and first["bet_id"] == again["bet_id"] == "b1"
    assert controller.meters()["games_played"] == 1


def test_a_station_gone_mid_round_is_settled_by_the_record_when_it_comes_back(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS)
    two_bets(controller)
    controller.leave("station-2")                      # gone after betting, before the deal
    assert controller.snapshot()["seats"][1] == {**controller.snapshot()["seats"][1], "station": "station-2",
                                                 "online": False, "bet": {"bac": 20, "war": 20}}
    controller.deal()
    assert out.of("station-2", "result") == []
    assert controller.join("station-2", 0)["seat"] == 2          # its seat was kept
    controller.bet("station-2", bet("b2", {"bac": 20, "war": 20}))   # its open bet, re-sent on joining
    (result,) = out.of("station-2", "result")
    assert result["results"]["bac"] == {"outcome": "lose", "net": -20}


def poker_bets(controller, second_ante: int) -> None:
    """Three Card Poker: station-1 antes 5 at seat 1, station-2 ``second_ante`` at seat 2; dealt."""
    controller.join("station-1", 0)
    controller.join("station-2", 0)
    controller.open_betting()
    controller.bet("station-1", bet("t1", {"ante": 5}, game="three-card-poker"))
    controller.bet("station-2", bet("t2", {"ante": second_ante}, game="three-card-poker"))
    controller.deal()


def test_a_seat_that_does_not_decide_takes_the_default_on_time_out(table) -> None:
    controller, out, clock = table(source="rng", game="three-card-poker", decision_timeout_s=10)
    poker_bets(controller, 5)
    (request,) = out.of("station-1", "decision_request")
    assert request["actions"] == ["play", "fold"] and len(request["view"]["cards"]) == 3
    controller.decision("station-1", {"round_id": request["round_id"], "seat": 1, "action": "play",
                                      "decision_id": "d1"})
    assert controller.snapshot()["phase"] == "decisions"
    clock.now += 10
    controller.tick()
    assert controller.snapshot()["phase"] == "settled"
    record = controller.round.record
    assert record["decisions"] == [{"seat": 1, "action": "play"}, {"seat": 2, "action": "fold", "timed_out": True}]
    (r2,) = out.of("station-2", "result")
    assert r2["results"]["ante"]["net"] == -5


def test_a_controller_restarted_mid_round_resumes_it_and_the_identities_hold(table) -> None:
    controller, out, _ = table(source="rng", game="three-card-poker")
    poker_bets(controller, 7)
    round_id = controller.round.round_id
    cards = out.of("station-1", "decision_request")[0]["view"]["cards"]

    controller, out, _ = table(source="rng", game="three-card-poker")      # the power came back
    assert (controller.phase.value, controller.round.round_id) == ("decisions", round_id)
    assert controller.snapshot()["decision_left_s"] == 30       # the seats' time starts again
    controller.join("station-1", 0)
    controller.join("station-2", 0)
    (request,) = out.of("station-1", "decision_request")
    assert request["view"]["cards"] == cards                   # the same hand, from the journal
    for station, seat, bet_id in (("station-1", 1, "t1"), ("station-2", 2, "t2")):
        controller.bet(station, bet(bet_id, {"ante": 5 if seat == 1 else 7}, game="three-card-poker"))
        controller.decision(station, {"round_id": round_id, "seat": seat, "action": "play",
                                      "decision_id": f"d{seat}"})
    assert controller.phase.value == "settled"
    results = [r for s in ("station-1", "station-2") for r in out.of(s, "result")]
    assert len(results) == 2
    m = controller.meters()
    assert sum(sum(r["stakes"].values()) for r in results) == m["coin_in"]
    assert sum(_returned(r) for r in results) == m["coin_out"]
    assert m["games_played"] == 1
    recalled = controller.ledger.round_record(round_id)
    assert [s["seat"] for s in recalled["seats"]] == [1, 2]


#: Seven seats: seats 1 and 2 hold 9 points, the others 1-5, the dealer 6; in the pool contest seat 1
#: draws 2c (1 point) and seat 2 draws 5d (4 points): seat 2 takes the pot of 70 less 5% (4 kept).
SEVEN = ["9h", "9d", "Ac", "2d", "3h", "4s", "5c", "6h", "Kc", "Qd", "Ks", "Kd", "Kh", "Qs", "Jc", "Th", "2c", "5d"]


def test_the_pool_among_seven_stations_pays_the_winner_and_meters_the_commission(table) -> None:
    controller, out, _ = table(stack=SEVEN)
    stations = [f"station-{n}" for n in range(1, 8)]
    for name in stations:
        controller.join(name, 0)
    controller.open_betting()
    for name in stations:
        controller.bet(name, bet(f"{name}-b", {"bac": 10, "war": 10, "war_pool": 10}))
    controller.deal()
    pool = controller.round.record["war_pool"]
    assert (pool["pot"], pool["winner"], pool["paid"], pool["commission"]) == (70, 2, 66, 4)
    results = {name: out.of(name, "result")[0] for name in stations}
    assert results["station-2"]["results"]["war_pool"] == {"outcome": "win", "net": 56}
    assert results["station-1"]["results"]["war_pool"] == {"outcome": "lose", "net": -10}
    m = controller.meters()
    assert m["pool_commission"] == 4
    assert sum(sum(r["stakes"].values()) for r in results.values()) == m["coin_in"] == 210
    assert sum(_returned(r) for r in results.values()) == m["coin_out"]


def test_a_misread_of_the_shoe_is_a_misdeal_and_every_wager_comes_back(table) -> None:
    controller, out, _ = table(stack=TWO_SEATS[:4])          # the shoe gives 4 cards, the deal needs 6
    two_bets(controller)
    controller.deal()
    snap = controller.snapshot()
    assert snap["phase"] == "misdeal" and "every wager is returned" in snap["messages"][0]
    for station in ("station-1", "station-2"):
        (result,) = out.of(station, "result")
        assert {r["outcome"] for r in result["results"].values()} == {"void"}
        assert _returned(result) == sum(result["stakes"].values())
    m = controller.meters()
    assert m["coin_in"] == m["coin_out"] == 60
    assert controller.ledger.round_record(snap["round_id"])["misdeal"].startswith("the shoe could not deal")
    assert controller.ledger.open_round is None


def test_the_card_reading_shoe_deals_and_its_misread_is_a_misdeal(table) -> None:
    from firmware.commands.table import _sim_shoe

    rig = _sim_shoe(3)
    try:
        shoe = rig.simulator("shoe")
        controller, out, _ = table(source="physical", shoe=rig.device("shoe"))
        controller.cards.card_wanted = shoe.draw            # the simulated dealer draws each card asked
        controller.join("station-1", 0)
        controller.open_betting()
        controller.bet("station-1", bet("p1", {"bac": 10, "war": 10}))
        assert controller.snapshot()["dealer_prompt"] == "Press deal to start dealing"
        controller.deal()
        assert controller.snapshot()["phase"] == "settled"
        assert controller.round.record["source"] == "physical"
        shoe.misread_next()
        controller.open_betting()
        controller.bet("station-1", bet("p2", {"bac": 10, "war": 10}))
        controller.deal()
        assert controller.snapshot()["phase"] == "misdeal"
        result = out.of("station-1", "result")[-1]
        assert result["bet_id"] == "p2" and _returned(result) == 20
    finally:
        rig.close()


def test_a_dice_game_at_the_table_rolls_its_dice_with_the_certified_rng(table) -> None:
    controller, out, _ = table(source="rng", game="double-super-9")
    controller.join("station-1", 0)
    controller.open_betting()
    controller.bet("station-1", bet("d1", {"bet": 10}, game="double-super-9"))
    controller.deal()
    for _ in range(10):                                       # the station answers as autoplay does
        if controller.snapshot()["phase"] != "decisions":
            break
        request = out.of("station-1", "decision_request")[-1]
        controller.decision("station-1", {"round_id": request["round_id"], "seat": 1, "action": request["auto"],
                                          "decision_id": f"x{len(out.sent)}"})
    assert controller.snapshot()["phase"] == "settled"
    assert len(controller.round.record["dice"]) == 3
    assert out.of("station-1", "result")[0]["bet_id"] == "d1"


def test_a_controller_restarted_in_the_betting_window_opens_it_again_with_its_bets(table) -> None:
    controller, _, _ = table(stack=TWO_SEATS)
    one_bet(controller)
    round_id = controller.round.round_id

    controller, out, _ = table(stack=TWO_SEATS)                 # the power came back
    snap = controller.snapshot()
    assert (snap["phase"], snap["round_id"]) == ("betting", round_id)
    assert snap["seats"][0]["bet"] == {"bac": 10, "war": 10} and snap["seats"][0]["online"] is False
    controller.join("station-1", 0)
    controller.join("station-2", 0)
    controller.bet("station-1", bet("b1", {"bac": 10, "war": 10}))       # re-sent on joining: the same answer
    controller.bet("station-2", bet("b2", {"bac": 20, "war": 20}))
    controller.deal()
    assert [r["bet_id"] for s in ("station-1", "station-2") for r in out.of(s, "result")] == ["b1", "b2"]
    assert controller.meters()["coin_in"] == 60


def test_the_dealer_declares_a_misdeal_while_the_seats_decide_and_every_wager_comes_back(table) -> None:
    controller, out, _ = table(source="rng", game="three-card-poker")
    poker_bets(controller, 7)
    request = out.of("station-1", "decision_request")[0]
    controller.decision("station-1", {"round_id": request["round_id"], "seat": 1, "action": "play",
                                      "decision_id": "d1"})
    controller.declare_misdeal("a card was exposed")
    assert controller.snapshot()["phase"] == "misdeal"
    for station, ante in (("station-1", 5), ("station-2", 7)):
        (result,) = out.of(station, "result")
        assert result["stakes"] == {"ante": ante} and result["results"] == {"ante": {"outcome": "void", "net": 0}}
    m = controller.meters()
    assert m["coin_in"] == m["coin_out"] == 12
    assert controller.ledger.round_record(request["round_id"])["misdeal"] == "a card was exposed"
    with pytest.raises(TableError, match="misdeal is not allowed in MISDEAL"):
        controller.declare_misdeal("again")


def test_a_result_whose_acknowledgement_was_lost_is_dropped_when_its_station_comes_back(table) -> None:
    """station-1 took its result but the acknowledgement never arrived: the controller would keep it
    for ever. Back without the bet among its open bets, the result is dropped; station-2's, still
    open at station-2, is kept and comes again with the bet."""
    controller, out, _ = table(stack=TWO_SEATS)
    two_bets(controller)
    controller.deal()
    assert set(controller.results) == {"b1", "b2"}
    controller.join("station-1", 1, open_bets=[])
    assert set(controller.results) == {"b2"}
    controller.join("station-2", 2, open_bets=["b2"])
    assert set(controller.results) == {"b2"}
    controller.result_ack("station-2", {"bet_id": "b2"})
    assert controller.results == {}
