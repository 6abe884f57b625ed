"""A live table's bets in a station's critical memory (issue 24): ``table.bet``, ``table.accepted``,
``table.refused`` and ``table.result``, their meters, their idempotence and their power-up."""

from __future__ import annotations

import pytest

from firmware.ledger import meters as M
from firmware.ledger.errors import LedgerError, LedgerStateError
from firmware.ledger.ledger import Ledger, accounting_difference

WAGERS = {"ante": 10}
RECORD = {"game": "three-card-poker", "round_id": "T1-000001", "net": 5,
          "seats": [{"seat": 1, "wagers": {"ante": 5}}, {"seat": 3, "wagers": WAGERS}]}


def bet(ledger: Ledger, bet_id: str = "B1", **kw) -> dict:
    return ledger.table_bet(bet_id, "T1-000001", 3, "three-card-poker", kw.pop("wagers", WAGERS),
                            reserve=kw.pop("reserve", 10), **kw)


def test_the_stake_is_held_on_bet_counted_on_acceptance_and_settled_like_a_round(tmp_path):
    with Ledger.open(tmp_path, denomination=5) as ledger:
        ledger.bill_in(1000)                                    # 200 credits
        bet(ledger)
        assert ledger.credits == 180 and ledger.meters.get("coin_in", 0) == 0
        assert ledger.meters["table_held"] == 100 and accounting_difference(ledger.meters) == 0
        assert ledger.table_answer("B1", True, "T1-000001")
        assert ledger.meters["coin_in"] == 50 and ledger.meters["coin_in.three-card-poker.ante"] == 50
        assert ledger.credits == 180 and accounting_difference(ledger.meters) == 0
        # PLAY was placed (10 more from the reserve); ante +10, play +10: 40 credits come back
        assert ledger.table_result("B1", "T1-000001", {"ante": 10, "play": 10},
                                   {"ante": {"outcome": "win", "net": 10}, "play": {"outcome": "win", "net": 10}},
                                   RECORD)
        assert ledger.credits == 200 - 20 + 40
        assert ledger.meters["coin_in"] == 100 and ledger.meters["coin_out"] == 200
        assert ledger.meters["coin_in.three-card-poker.play"] == 50
        assert ledger.meters["games_played"] == 1 and ledger.meters["games_won"] == 1
        assert ledger.meters["games_since_power_up"] == 1 and ledger.meters["table_held"] == 0
        assert accounting_difference(ledger.meters) == 0 and ledger.table_bets == {}


def test_an_unused_reserve_comes_back_and_a_refusal_returns_everything(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        bet(ledger)
        ledger.table_answer("B1", True, "T1-000001")
        ledger.table_result("B1", "T1-000001", {"ante": 10}, {"ante": {"outcome": "fold", "net": -10}}, RECORD)
        assert ledger.credits == 90 and ledger.meters["games_lost"] == 1
        bet(ledger, "B2")
        assert ledger.credits == 70
        assert ledger.table_answer("B2", False, reason="the betting window had closed")
        assert ledger.credits == 90 and ledger.meters["coin_in"] == 10 and ledger.meters["games_played"] == 1
        assert accounting_difference(ledger.meters) == 0


def test_every_answer_and_result_counts_once_per_bet_also_after_a_power_cut(tmp_path):
    result = ("T1-000001", {"ante": 10}, {"ante": {"outcome": "win", "net": 10}}, RECORD)
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        bet(ledger)
        assert ledger.table_answer("B1", True, "T1-000001")
        assert not ledger.table_answer("B1", True, "T1-000001")
        assert not ledger.table_answer("B1", False, reason="late")          # answered already
    with Ledger.open(tmp_path) as ledger:                                   # the power went
        assert ledger.table_bets["B1"]["accepted"] is True
        assert ledger.table_result("B1", *result)
        meters = dict(ledger.meters)
    with Ledger.open(tmp_path) as ledger:
        assert not ledger.table_result("B1", *result)
        assert not ledger.table_answer("B1", False)
        assert ledger.meters == meters and ledger.credits == 110
        with pytest.raises(LedgerStateError, match="already made"):
            bet(ledger)                                                     # a bet id is used once


def test_open_bets_and_meters_come_back_from_a_checkpoint_and_verify_at_start_up(tmp_path, monkeypatch):
    monkeypatch.setattr(Ledger, "CHECKPOINT_EVERY", 3)
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        bet(ledger, "B1", wagers={"ante": 5}, reserve=5)
        ledger.table_answer("B1", True, "T1-000001")
        bet_b2 = bet(ledger, "B2", wagers={"ante": 5}, reserve=5)
        meters = dict(ledger.meters)
    with Ledger.open(tmp_path) as ledger:
        assert set(ledger.table_bets) == {"B1", "B2"} and ledger.table_bets["B2"]["held"] == bet_b2["held"]
        assert ledger.meters == meters and ledger.repairs == []
    assert M.replay([("table.bet", bet_b2)])["table_held"] == 10


def test_payouts_wait_while_a_table_bet_is_open(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        bet(ledger)
        for payout in (lambda: ledger.ticket_out(50, "000000000000000001"), lambda: ledger.handpay(50),
                       lambda: ledger.transfer_out(50, "AFT-1")):
            with pytest.raises(LedgerStateError, match="table bet is open"):
                payout()
        ledger.table_answer("B1", False, reason="closed")
        ledger.handpay(50)
        assert ledger.credits == 50


def test_a_bet_or_result_that_does_not_fit_is_refused_and_changes_nothing(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(30)
        with pytest.raises(LedgerStateError, match="not enough credits"):
            bet(ledger, wagers={"ante": 40})
        with pytest.raises(LedgerError, match="whole number"):
            bet(ledger, wagers={"ante": -1})
        bet(ledger)
        ledger.table_answer("B1", True, "T1-000001")
        rows = ledger.rows
        with pytest.raises(LedgerStateError, match="not 'T1-000002'"):
            ledger.table_result("B1", "T1-000002", {"ante": 10}, {"ante": {"net": 0}}, RECORD)
        with pytest.raises(LedgerStateError, match="do not fit"):
            ledger.table_result("B1", "T1-000001", {"ante": 10, "play": 20},
                                {"ante": {"net": 0}, "play": {"net": 0}}, RECORD)
        with pytest.raises(LedgerError, match="no net"):
            ledger.table_result("B1", "T1-000001", {"ante": 10}, {"ante": {"outcome": "win"}}, RECORD)
        assert ledger.rows == rows and "B1" in ledger.table_bets
