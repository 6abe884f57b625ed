"""A player station at a live table (issue 24): its money across bets, answers, results and power
cuts, against an in-process controller (:class:`tests.cabinet.table_fake.FakeTable`) that settles
rounds with the real round kernel and several seats."""

from __future__ import annotations

import pytest

from firmware.cabinet.service.guards import round_open
from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.states import TiltSource
from firmware.cabinet.terminal import Devices, Terminal, TerminalError
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.errors import LedgerStateError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.rng.service import RngService
from tests.cabinet.table_fake import FakeTable

SEAT = 3


def station(state, *, seat: int = SEAT, game: str = "baccarat-war", on_step=None,
            **fake) -> tuple[Terminal, Ledger, FakeTable]:
    """A station on ``state`` (powered up, joined, its link up) and the table it sits at."""
    cfg = Config.model_validate({"table": {"controller": "127.0.0.1:7717", "seat": seat, "game": game}})
    ledger = Ledger.open(state)
    terminal = Terminal(cfg, ledger, RngService.seeded(7), Devices(), VoucherBook(ledger, terminal_id="T1"),
                        on_step=on_step)
    terminal.power_up()
    assert terminal.table is not None
    table = FakeTable(terminal.table, game, **fake)
    terminal.connect_table(table)
    table.join()
    return terminal, ledger, table


def seat_meters(result: dict, denom: int = 1) -> tuple[int, int]:
    """(coin_in, coin_out) in cents the kernel settled for the result's seat."""
    staked = sum(result["stakes"].values())
    back = sum(a + result["results"][n]["net"] for n, a in result["stakes"].items())
    return staked * denom, back * denom


def test_a_bet_holds_its_stake_and_the_result_meters_what_the_kernel_settled_for_the_seat(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    round_id = table.open_window()
    terminal.play({SEAT: {"bac": 10, "war": 10}})
    assert ledger.credits == 1980 and ledger.meters.get("coin_in", 0) == 0       # held, not played
    assert table.sent == [{"bet_id": table.sent[0]["bet_id"], "round_id": round_id, "seat": SEAT,
                           "game": "baccarat-war", "wagers": {"bac": 10, "war": 10}, "cover": 0}]
    status = terminal.status()
    assert status["state"] == "PLAYING" and status["table"]["open_bet"]["bet_id"] == table.sent[0]["bet_id"]
    assert status["table"]["own_seat"] == SEAT and status["table"]["link"] == "up"
    assert accounting_difference(ledger.meters) == 0
    table.answer()
    assert ledger.meters["coin_in"] == 20 and ledger.credits == 1980
    [result] = table.settle()
    coin_in, coin_out = seat_meters(result)
    assert ledger.meters["coin_in"] == coin_in and ledger.meters.get("coin_out", 0) == coin_out
    assert ledger.credits == 2000 - coin_in + coin_out
    assert ledger.meters["games_played"] == 1 and ledger.meters["games_played.baccarat-war"] == 1
    assert ledger.meters["coin_in.baccarat-war.bac"] == 10
    assert accounting_difference(ledger.meters) == 0 and not ledger.table_bets
    terminal.step()
    status = terminal.status()
    assert status["state"] == "IDLE" and status["table"]["open_bet"] is None
    assert status["table"]["last_result"]["net"] == coin_out - coin_in and terminal.rounds_played == 1
    ledger.close()


def test_a_bet_refused_gives_its_stake_back_and_the_event_log_says_why(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(500)
    table.open_window()
    terminal.play()
    assert ledger.credits < 500
    table.answer(accepted=False, reason="the betting window had closed")
    assert ledger.credits == 500 and ledger.meters.get("coin_in", 0) == 0
    assert accounting_difference(ledger.meters) == 0
    refused = [e for e in ledger.events(10) if e["event"] == "table_bet_refused"]
    assert refused and refused[0]["reason"] == "the betting window had closed"
    terminal.step()
    assert terminal.cabinet.state is S.IDLE and "window had closed" in terminal.status()["message"]
    [entry] = ledger.recall(5)
    assert entry["status"] == "refused" and entry["credits_before"] == entry["credits_after"] == 500
    ledger.close()


def test_an_answer_or_a_result_sent_again_changes_nothing(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    answer = table.answer()
    meters, rows = dict(ledger.meters), ledger.rows
    table.events.bet_answered(answer)
    assert ledger.meters == meters and ledger.rows == rows
    [result] = table.settle()
    meters, rows = dict(ledger.meters), ledger.rows
    table.events.round_result(result)
    table.events.bet_answered({**answer, "accepted": False, "reason": "late"})
    assert ledger.meters == meters and ledger.rows == rows and terminal.rounds_played == 1
    ledger.close()


def power_cut(state, ledger: Ledger, table: FakeTable) -> tuple[Terminal, Ledger, FakeTable]:
    """The station loses power and comes back; the same table goes on (its round as it was)."""
    ledger.close()
    terminal, ledger, fresh = station(state)
    for name in ("kernel", "rng", "round_no", "round_id", "phase", "accepted", "dealt", "others"):
        setattr(fresh, name, getattr(table, name))
    return terminal, ledger, fresh


@pytest.mark.parametrize("cut", ["before the answer", "before the result"])
def test_a_power_cut_mid_round_ends_in_exactly_one_settlement(tmp_path, cut):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    bet = table.sent[-1]
    if cut == "before the result":
        table.answer()
    terminal, ledger, table = power_cut(tmp_path, ledger, table)
    assert terminal.status()["state"] == "PLAYING"                      # the bet is still open
    assert [b["bet_id"] for b in terminal.table.open_bets()] == [bet["bet_id"]]
    assert ledger.recall(1)[0]["status"] == "in_progress"
    table.answer(bet)                                                    # the link sent it again
    [result] = table.settle()
    table.events.round_result(result)                                    # and the result twice
    coin_in, coin_out = seat_meters(result)
    assert ledger.meters["coin_in"] == coin_in and ledger.meters.get("coin_out", 0) == coin_out
    assert ledger.credits == 2000 - coin_in + coin_out and ledger.meters["games_played"] == 1
    assert ledger.kind_counts["table.result"] == 1 and ledger.kind_counts["table.accepted"] == 1
    assert accounting_difference(ledger.meters) == 0
    terminal.step()
    assert terminal.cabinet.state is S.IDLE and terminal.table.open_bets() == []
    ledger.close()


def test_a_result_during_a_tilt_is_committed_at_once_and_the_cabinet_is_idle_once_the_tilt_clears(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    table.answer()
    terminal.supervision.tilt(TiltSource.DOOR, "main", "main door open")
    [result] = table.settle()
    coin_in, coin_out = seat_meters(result)
    assert ledger.credits == 2000 - coin_in + coin_out and not ledger.table_bets   # paid in critical memory
    terminal.step()
    assert terminal.cabinet.state is S.TILT and terminal.cabinet.interrupted_state is S.PLAYING
    terminal.supervision.clear(TiltSource.DOOR, "main")
    terminal.step()
    assert terminal.cabinet.state is S.IDLE
    ledger.close()


def test_a_result_without_its_answer_accepts_the_bet_first(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    table.accepted[table.sent[-1]["bet_id"]] = table.sent[-1]        # the answer was lost
    [result] = table.settle()
    coin_in, coin_out = seat_meters(result)
    assert ledger.meters["coin_in"] == coin_in and ledger.credits == 2000 - coin_in + coin_out
    ledger.close()


def test_cash_out_game_change_and_ram_clear_wait_while_a_bet_is_open(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    with pytest.raises(TerminalError, match="a table bet is open"):
        terminal.request_cashout()
    with pytest.raises(LedgerStateError, match="table bet is open"):
        ledger.ticket_out(100, "000000000000000001")
    with pytest.raises(TerminalError, match="in progress"):
        terminal.choose_game("three-card-poker")
    assert round_open(terminal)
    table.answer()
    table.settle()
    terminal.step()
    assert not round_open(terminal)
    ledger.close()


def test_a_bet_a_power_cut_left_open_blocks_a_ram_clear_before_the_cabinet_plays_again(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play()
    ledger.close()
    ledger = Ledger.open(tmp_path)
    cfg = Config.model_validate({"table": {"controller": "127.0.0.1:7717", "seat": SEAT}})
    back = Terminal(cfg, ledger, RngService.seeded(7), Devices(), VoucherBook(ledger, terminal_id="T1"))
    assert back.cabinet.state is S.POWER_UP and round_open(back)       # not PLAYING yet: the bet says so
    ledger.close()


def test_no_bet_without_a_window_a_link_or_the_credits_and_nothing_changes(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(5)
    with pytest.raises(TerminalError, match="no betting window is open at the table"):
        terminal.play()
    table.open_window()
    with pytest.raises(Exception, match="credits"):
        terminal.play({SEAT: {"bac": 10, "war": 10}})
    table.events.link_state(False, "controller silent for 5 s")
    with pytest.raises(TerminalError, match="the table link is down"):
        terminal.play({SEAT: {"bac": 1, "war": 1}})
    assert ledger.credits == 5 and not ledger.table_bets and table.sent == []
    events = [e["event"] for e in ledger.events(10)]
    assert "table_joined" in events and "table_link_down" in events
    table.events.link_state(True, "back")
    assert ledger.events(1)[0]["event"] == "table_link_up"
    terminal.play({SEAT: {"bac": 1, "war": 1}})
    with pytest.raises(TerminalError, match=r"a bet cannot be placed now \(playing\)"):
        terminal.play({SEAT: {"bac": 1, "war": 1}})
    with pytest.raises(TerminalError, match="not settled yet"):
        terminal.table.window()
    assert len(table.sent) == 1
    ledger.close()


def test_a_decision_is_sent_to_the_table_and_play_is_counted_with_the_reserve_back(tmp_path):
    terminal, ledger, table = station(tmp_path, game="three-card-poker", others={1: {"ante": 5}})
    ledger.bill_in(1000)
    table.open_window()
    terminal.play({SEAT: {"ante": 10}})
    assert ledger.credits == 1000 - 20                 # the ante and the PLAY it may need
    table.answer()
    table.deal()
    decision = terminal.status()["table"]["decision"]
    assert decision["seat"] == SEAT and set(decision["actions"]) == {"play", "fold"}
    terminal.decide(SEAT, "play")
    assert table.decisions[-1]["action"] == "play" and terminal.status()["table"]["decision"] is None
    [result] = table.settle()
    assert result["stakes"]["play"] == 10
    coin_in, coin_out = seat_meters(result)
    assert ledger.meters["coin_in"] == coin_in == 20 and ledger.credits == 1000 - coin_in + coin_out
    assert accounting_difference(ledger.meters) == 0
    ledger.close()


def test_recall_shows_the_table_round_with_this_station_marked(tmp_path):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play({SEAT: {"bac": 10, "war": 10}})
    table.answer()
    [result] = table.settle()
    ledger.close()
    with Ledger.open(tmp_path, read_only=True) as reader:
        [entry] = reader.recall(5)
    coin_in, coin_out = seat_meters(result)
    assert entry["status"] == "complete" and entry["round_id"] == result["round_id"] and entry["own_seat"] == SEAT
    assert {s["seat"]: s["own"] for s in entry["seats"]} == {1: False, SEAT: True}
    assert entry["table"]["wagers"] == {"bac": 10, "war": 10} and entry["table"]["results"] == result["results"]
    assert entry["credits_before"] == 2000 and entry["credits_after"] == 2000 - coin_in + coin_out
    assert entry["net"] == coin_out - coin_in and entry["cards_dealt"] == result["record"]["cards_dealt"]
