"""A station's table rounds as the link and the player use them (issue 24): the link's events on
the link's own thread, autoplay at a table, and what ``egm recall`` and ``egm meters`` read."""

from __future__ import annotations

import json
import threading

from firmware.cabinet.autoplay import Autoplay
from firmware.cli import main
from firmware.ledger.ledger import accounting_difference
from tests.cabinet.table_fake import FakeTable
from tests.cabinet.test_table_station import SEAT, seat_meters, station


def test_the_links_events_run_on_the_terminals_thread_and_an_answer_returns_once_committed(tmp_path):
    armed, held, inside = threading.Event(), threading.Event(), threading.Event()

    def hold(_terminal):                                 # the terminal's thread waits while held is clear
        if armed.is_set():
            inside.set()
            held.wait()

    terminal, ledger, table = station(tmp_path, on_step=hold)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play({SEAT: {"bac": 10, "war": 10}})
    armed.set()
    runner = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.01})
    runner.start()
    try:
        assert inside.wait(30)
        link = FakeTable(terminal.table)                 # the link's thread is another one now
        link.accepted, link.round_id, link.kernel, link.rng = table.accepted, table.round_id, table.kernel, table.rng
        answering = threading.Thread(target=link.answer, args=(table.sent[-1],))
        answering.start()
        answering.join(0.5)
        assert answering.is_alive() and ledger.meters.get("coin_in", 0) == 0   # waits for the terminal
        held.set()
        answering.join(30)
        assert not answering.is_alive() and ledger.meters["coin_in"] == 20      # returned once committed
        [bet] = terminal.table.open_bets()
        assert bet["bet_id"] == table.sent[-1]["bet_id"] and bet["wagers"] == {"bac": 10, "war": 10}
        [result] = link.settle()
        coin_in, coin_out = seat_meters(result)
        assert ledger.credits == 2000 - coin_in + coin_out and ledger.table_bets == {}
        assert terminal.call("status")["table"]["last_result"]["round_id"] == result["round_id"]
    finally:
        held.set()
        terminal.stop()
        runner.join(10)
    assert not runner.is_alive()
    ledger.close()


def test_autoplay_bets_once_per_window_and_answers_the_decisions(tmp_path):
    terminal, ledger, table = station(tmp_path, game="three-card-poker", others={1: {"ante": 5}})
    ledger.bill_in(5000)
    autoplay = Autoplay(2, lambda dollars: False, cashout_every=100, note_values=[2000], clock=lambda: 0.0)
    table.open_window()
    autoplay(terminal)
    table.answer(accepted=False, reason="the seat is taken")
    terminal.step()
    autoplay(terminal)                                    # refused in this window: not tried again in it
    assert len(table.sent) == 1 and terminal.cabinet.state.name == "IDLE"
    for _ in range(2):
        table.open_window()
        autoplay(terminal)
        autoplay(terminal)                                # the same window: no second bet
        assert len([b for b in table.sent if b["round_id"] == table.round_id]) == 1
        assert table.sent[-1]["seat"] == SEAT and table.sent[-1]["wagers"] == terminal.table.wagers_for(table.game.id)[SEAT]
        table.answer()
        table.deal()
        autoplay(terminal)                                # the decision the table waits for
        assert table.decisions[-1]["round_id"] == table.round_id
        assert table.decisions[-1]["action"] == table.auto            # the strategy's choice, sent
        table.settle()
        terminal.step()
    autoplay(terminal)
    assert autoplay.done and terminal.rounds_played == 2 and autoplay.errors == []
    assert ledger.meters["games_played"] == 2 and accounting_difference(ledger.meters) == 0
    ledger.close()


def test_egm_recall_lists_the_table_round_and_egm_meters_reads_the_station(tmp_path, capsys):
    terminal, ledger, table = station(tmp_path)
    ledger.bill_in(2000)
    table.open_window()
    terminal.play({SEAT: {"bac": 10, "war": 10}})
    table.answer(accepted=False, reason="the window had closed")
    table.open_window()
    terminal.step()
    terminal.play({SEAT: {"bac": 10, "war": 10}})
    table.answer()
    [result] = table.settle()
    ledger.close()
    capsys.readouterr()
    assert main(["recall", "--state-dir", str(tmp_path), "--json"]) == 0
    settled, refused = json.loads(capsys.readouterr().out)
    assert settled["status"] == "complete" and settled["own_seat"] == SEAT
    assert settled["table"]["results"] == result["results"]
    assert refused["status"] == "refused" and refused["table"]["reason"] == "the window had closed"
    assert main(["recall", "--state-dir", str(tmp_path)]) == 0
    table_view = capsys.readouterr().out
    assert "refused" in table_view and result["round_id"] in table_view      # the whole table round id
    assert main(["meters", "--state-dir", str(tmp_path), "--json"]) == 0
    meters = json.loads(capsys.readouterr().out)
    coin_in, coin_out = seat_meters(result)
    assert meters["meters"]["coin_in"] == coin_in and meters["meters"]["coin_out"] == coin_out
    assert meters["credits"] == 2000 - coin_in + coin_out
