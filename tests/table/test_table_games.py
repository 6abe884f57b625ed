"""Every game at a live table with three stations in process (issue 24, "Games"): each station's
result is its seat's in the controller's round record and the money identities hold every round;
Three Card Poker's PLAY/FOLD and the hand-setting games' settings are taken per station (a silent
station gets the default); Double Super 9's player banker rotates among the stations and one that
cannot cover what it may owe is passed over."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from firmware.cabinet.devices import Devices
from firmware.cabinet.errors import TerminalError
from firmware.cabinet.terminal import Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config.schema import Config
from firmware.games.registry import available
from firmware.kernel.limits import BetLimits
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from tests.table.conftest import bet
from tests.table.stations import RecordingPort

STATIONS = ("station-1", "station-2", "station-3")
UNIT = 5


def seat_of(name: str) -> int:
    return STATIONS.index(name) + 1


def answer(controller, out, name: str, choose=lambda request: request["auto"]) -> bool:
    """The station answers the decision request of its seat awaiting (False: none awaits)."""
    pending = {r.seat for r in controller.round.kernel.pending()} if controller.round.kernel else set()
    requests = out.of(name, "decision_request")
    if seat_of(name) not in pending or not requests:
        return False
    request = requests[-1]
    controller.decision(name, {"round_id": request["round_id"], "seat": request["seat"], "action": choose(request),
                               "decision_id": f"{request['round_id']}:{name}:{len(requests)}"})
    return True


def play_round(controller, out, wagers: dict[str, dict[str, int]], covers: dict[str, int] | None = None,
               deciding=STATIONS, choose=lambda request: request["auto"]) -> dict[str, dict[str, Any]]:
    """One round: the window, the stations' bets, the deal, the decisions of ``deciding``; returns
    each station's result of this round."""
    before = {name: len(out.of(name, "result")) for name in STATIONS}
    controller.open_betting()
    round_id = controller.round.round_id
    for name, w in wagers.items():
        body = bet(f"{name}-{round_id}", w, game=controller.game.id)
        body["cover"] = (covers or {}).get(name, 0)
        controller.bet(name, body)
    if controller.phase.value == "betting":
        controller.close_betting()
    controller.deal()
    while controller.phase.value == "decisions":
        if not any([answer(controller, out, name, choose) for name in deciding]):
            break
    return {name: out.of(name, "result")[before[name]] for name in wagers if len(out.of(name, "result")) > before[name]}


def check_round(controller, results: dict[str, dict[str, Any]], before: dict[str, int]) -> None:
    """Each station's result is its seat's in the round record; the stations' stakes are the
    controller's coin in and what came back its coin out."""
    for name, result in results.items():
        (seat,) = [s for s in result["record"]["seats"] if s["seat"] == result["seat"]]
        assert result["results"] == seat["results"], name
        assert result["seat"] == seat_of(name)
    m = controller.meters()
    assert sum(sum(r["stakes"].values()) for r in results.values()) == m["coin_in"] - before["coin_in"]
    assert sum(r["stakes"][n] + r["results"][n]["net"] for r in results.values() for n in r["stakes"]) \
        == m["coin_out"] - before["coin_out"]


def join_all(controller) -> None:
    for name in STATIONS:
        assert controller.join(name, 0)["seat"] == seat_of(name)


@pytest.mark.parametrize("game", available())
def test_every_game_plays_rounds_at_a_table_of_three_stations(table, game) -> None:
    controller, out, _ = table(source="rng", game=game)
    join_all(controller)
    wagers = controller.game.automatic_wagers(controller.options, 1, UNIT)[1]
    for _ in range(3):
        before = controller.meters()
        results = play_round(controller, out, {name: wagers for name in STATIONS})
        assert controller.phase.value == "settled"
        assert set(results) == set(STATIONS)
        check_round(controller, results, before)
    assert controller.meters()["games_played"] == 3


def test_three_card_poker_a_silent_station_folds_on_time_out_and_loses_its_ante_not_a_play(table) -> None:
    controller, out, clock = table(source="rng", game="three-card-poker", decision_timeout_s=20)
    join_all(controller)
    before = controller.meters()
    results = play_round(controller, out, {name: {"ante": UNIT} for name in STATIONS},
                         deciding=STATIONS[:2], choose=lambda request: "play")
    assert controller.phase.value == "decisions"             # station-3 has not answered
    (request,) = out.of("station-3", "decision_request")
    assert request["default"] == "fold" and request["auto"] in request["actions"]
    assert len(request["view"]["cards"]) == 3                 # its own three cards
    clock.now += 21
    controller.tick()
    assert controller.phase.value == "settled"
    results = {name: out.of(name, "result")[-1] for name in STATIONS}
    silent = results["station-3"]
    assert silent["stakes"] == {"ante": UNIT}                 # no PLAY stake was placed for it
    assert silent["results"]["ante"] == {"outcome": "fold", "net": -UNIT}
    (seat,) = [s for s in silent["record"]["seats"] if s["seat"] == 3]
    assert seat["decision"] == "fold"
    for name in STATIONS[:2]:
        assert results[name]["stakes"]["play"] == UNIT        # PLAY: the extra stake, taken
    check_round(controller, results, before)


@pytest.mark.parametrize(("game", "front", "back"), [("split21-stud", "high", "low"),
                                                      ("double-super-9", "front", "back")])
def test_a_station_sets_its_hand_from_its_own_cards_and_that_setting_is_recorded(table, game, front, back) -> None:
    controller, out, _ = table(source="rng", game=game)
    join_all(controller)
    wagers = controller.game.automatic_wagers(controller.options, 1, UNIT)[1]
    chosen: dict[int, str] = {}

    def first_explicit(request: dict[str, Any]) -> str:
        action = next(a for a in request["actions"] if a.startswith("set:"))
        chosen[request["seat"]] = action
        return action

    before = controller.meters()
    results = play_round(controller, out, {name: wagers for name in STATIONS}, choose=first_explicit)
    check_round(controller, results, before)
    for name in STATIONS:
        (request,) = out.of(name, "decision_request")
        (seat,) = [s for s in results[name]["record"]["seats"] if s["seat"] == seat_of(name)]
        assert request["view"]["cards"] == seat["cards"]      # the request showed the seat its own cards
        first, second = chosen[seat_of(name)][len("set:"):].split("|")
        assert sorted(seat[front]) == sorted(first.split()) and sorted(seat[back]) == sorted(second.split())
        assert seat["house_way"] is False


def player_banked(table, collection: int = 0, **settings: Any):
    options = {"banking": "player", "collection": collection}
    cfg = Config.model_validate({"games": {"options": {"double-super-9": options}}})
    return table(source="rng", game="double-super-9", cfg=cfg, **settings)


def banked_round(controller, out, cover: int, fee: int = 0) -> dict[str, dict[str, Any]]:
    """Every station bets: the banker its cover, the others UNIT each (and each the club's fee)."""
    controller.open_betting()
    banker = controller.round.banker_seat
    round_id = controller.round.round_id
    before = {name: len(out.of(name, "result")) for name in STATIONS}
    for name in STATIONS:
        banks = seat_of(name) == banker
        wagers = ({} if banks else {"bet": UNIT}) | ({"collection": fee} if fee else {})
        body = bet(f"{name}-{round_id}", wagers, game="double-super-9")
        body["cover"] = cover if banks else 0
        controller.bet(name, body)
    if controller.phase.value == "dealing" and controller.round.kernel is None:
        controller.deal()
    while controller.phase.value == "decisions":
        if not any([answer(controller, out, name) for name in STATIONS]):
            break
    return {name: out.of(name, "result")[before[name]] for name in STATIONS}


def test_double_super_9_the_player_banker_rotates_among_the_stations_two_turns_each(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    bankers = []
    for _ in range(6):
        before = controller.meters()
        results = banked_round(controller, out, cover=2 * UNIT)
        assert controller.phase.value == "settled"
        banker = controller.round.banker_seat
        bankers.append(banker)
        assert controller.snapshot()["banker_seat"] == banker
        record = results["station-1"]["record"]
        assert record["banker"] == banker
        banker_result = results[STATIONS[banker - 1]]
        assert banker_result["stakes"] == {"bank": 2 * UNIT}  # its cover, held and settled as its bank
        assert -2 * UNIT <= banker_result["results"]["bank"]["net"] <= 2 * UNIT
        check_round(controller, results, before)
    assert bankers == [1, 1, 2, 2, 3, 3]


def test_double_super_9_a_banker_short_of_cover_is_passed_over_and_every_wager_returned(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    before = controller.meters()
    results = banked_round(controller, out, cover=UNIT)      # the two players bet 2 x UNIT: short
    assert controller.phase.value == "misdeal"
    assert "covers 5 of the 10 credits it may owe: passed over" in controller.round.misdeal
    for name, result in results.items():
        assert all(r == {"outcome": "void", "net": 0} for r in result["results"].values()), name
        assert result["record"]["misdeal"] == controller.round.misdeal
    assert results["station-1"]["stakes"] == {"bank": UNIT}
    check_round(controller, results, before)
    events = [e for e in controller.ledger.events() if e["event"] == "table_banker_passed"]
    assert len(events) == 1 and events[0]["banker_seat"] == 1
    banked_round(controller, out, cover=2 * UNIT)            # the bank passed on to the next spot
    assert controller.round.banker_seat == 2 and controller.phase.value == "settled"


def test_double_super_9_the_club_takes_its_collection_from_every_station_whatever_the_cards(table) -> None:
    controller, out, _ = player_banked(table, collection=2)
    join_all(controller)
    before = controller.meters()
    results = banked_round(controller, out, cover=2 * UNIT, fee=2)
    assert controller.phase.value == "settled"
    for result in results.values():
        assert result["results"]["collection"] == {"outcome": "lose", "net": -2}
    assert results["station-1"]["stakes"] == {"bank": 2 * UNIT, "collection": 2}
    check_round(controller, results, before)
    assert results["station-1"]["record"]["house_net"] == 3 * 2      # the club's result: the fees alone


def test_double_super_9_a_window_in_which_no_hand_is_played_keeps_its_banker(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    banked_round(controller, out, cover=2 * UNIT)            # seat 1, 1st banker
    controller.open_betting()
    assert controller.round.banker_seat == 1                 # seat 1, 2nd banker...
    controller.close_betting()                               # ...but nobody bets
    assert controller.phase.value == "closed"
    results = banked_round(controller, out, cover=2 * UNIT)
    assert controller.round.banker_seat == 1 and results["station-1"]["stakes"] == {"bank": 2 * UNIT}
    banked_round(controller, out, cover=2 * UNIT)
    assert controller.round.banker_seat == 2


def test_double_super_9_a_restarted_controller_keeps_the_window_s_banker(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    banked_round(controller, out, cover=2 * UNIT)
    banked_round(controller, out, cover=2 * UNIT)
    controller.open_betting()
    assert controller.round.banker_seat == 2
    controller, out, _ = player_banked(table)                 # the same critical memory
    assert controller.snapshot()["banker_seat"] == 2
    join_all(controller)
    results = banked_round(controller, out, cover=2 * UNIT)   # no hand was played: its turn is still on
    assert controller.round.banker_seat == 2 and results["station-2"]["stakes"] == {"bank": 2 * UNIT}


def test_double_super_9_a_round_whose_wagers_do_not_stand_together_is_not_dealt(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    controller.round_limits = BetLimits(1, 500, UNIT)        # a round maximum the two bets exceed together
    results = banked_round(controller, out, cover=2 * UNIT)
    assert controller.phase.value == "misdeal"
    assert "do not stand together" in controller.round.misdeal and "round maximum" in controller.round.misdeal
    assert all(r["results"][n]["net"] == 0 for r in results.values() for n in r["results"])


def test_double_super_9_a_bet_that_does_not_fit_its_seat_s_role_is_refused(table) -> None:
    controller, out, _ = player_banked(table)
    join_all(controller)
    controller.open_betting()
    assert controller.round.banker_seat == 1
    plays_as_banker = bet("b1", {"bet": UNIT}, game="double-super-9")
    controller.bet("station-1", plays_as_banker)
    banks_out_of_turn = {**bet("b2", {}, game="double-super-9"), "cover": 50}
    controller.bet("station-2", banks_out_of_turn)
    (a1,) = out.of("station-1", "bet_answer")
    (a2,) = out.of("station-2", "bet_answer")
    assert not a1["accepted"] and "seat 1 banks this round" in a1["reason"]
    assert not a2["accepted"] and "does not bank this round (seat 1 does)" in a2["reason"]
    assert controller.round.bets == {}


@pytest.fixture
def banking_station(tmp_path) -> Iterator[Callable[[int, int], tuple[Any, RecordingPort]]]:
    """``station(seat, credits)``: a player station (a terminal with ``[table]``) at a player-banked
    Double Super 9 table whose window is open with seats 1-3 taken and seat 2 banking."""
    ledgers: list[Ledger] = []

    def make(seat: int, credits: int) -> tuple[Any, RecordingPort]:
        name = STATIONS[seat - 1]
        cfg = Config.model_validate({
            "terminal": {"id": name}, "limits": {"max_bet": 100},
            "games": {"default": "double-super-9", "options": {"double-super-9": {"banking": "player"}}},
            "table": {"controller": "127.0.0.1:1", "seat": seat, "game": "double-super-9"}})
        ledger = Ledger.open(tmp_path / f"{name}-{len(ledgers)}")
        ledgers.append(ledger)
        terminal = Terminal(cfg, ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id=name))
        terminal.power_up()
        if credits:
            ledger.bill_in(credits)
        port = RecordingPort()
        terminal.connect_table(port)
        terminal.table.handle("link", up=True, detail="test")
        seats = [{"seat": n, "station": STATIONS[n - 1]} for n in (1, 2, 3)]
        terminal.table.handle("snapshot", snapshot={"phase": "betting", "round_id": "T-000001", "game": "double-super-9",
                                                    "banker_seat": 2, "min_bet": 1, "max_bet": 100, "seats": seats})
        return terminal, port

    yield make
    for ledger in ledgers:
        ledger.close()


def test_the_banker_station_covers_the_table_maximum_for_each_other_player_from_its_credits(banking_station) -> None:
    terminal, port = banking_station(2, 1000)
    terminal.play()
    (sent,) = port.sent
    assert (sent["wagers"], sent["cover"], sent["seat"]) == ({}, 200, 2)   # 2 other players x max_bet 100
    assert terminal.ledger.credits == 800                                   # the cover is held
    terminal.table.handle("result", result={"round_id": "T-000001", "bet_id": sent["bet_id"], "seat": 2,
                                            "stakes": {"bank": 200},
                                            "results": {"bank": {"outcome": "win", "net": 15}}, "record": {}})
    assert terminal.ledger.credits == 1015


def test_a_banker_station_short_of_credits_covers_what_it_has_or_passes(banking_station) -> None:
    terminal, port = banking_station(2, 50)
    terminal.play()
    assert port.sent[-1]["cover"] == 50 and terminal.ledger.credits == 0    # as far as its credits go
    broke, port = banking_station(2, 0)
    with pytest.raises(TerminalError, match="cannot cover the table minimum 1: the bank passes on"):
        broke.play()
    assert port.sent == []


def test_a_player_station_bets_against_the_banker_with_no_cover(banking_station) -> None:
    terminal, port = banking_station(1, 100)
    terminal.play()
    (sent,) = port.sent
    assert sent["cover"] == 0 and set(sent["wagers"]) == {"bet"}
