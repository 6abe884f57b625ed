"""Ledger behaviour: meters move with the events that move them, recall redraws rounds exactly,
refusals change nothing, RAM clear is authorised and keeps the record of the clear."""

from __future__ import annotations

import json

import pytest

from firmware.cards.card import parse_cards
from firmware.cards.errors import ShoeExhausted
from firmware.cards.source import RngShoe, StackedSource
from firmware.cli import main
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.ledger.errors import LedgerError, LedgerStateError
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.ledger.resume import resume_round
from firmware.rng.service import RngService

FIG8 = parse_cards("Qs 2d 3h Ah Td Ts 6c 9s")


def kernel(ledger, game_id="baccarat-war"):
    game = get_game(game_id)
    return RoundKernel(game, make_options(game_id), journal=ledger)


def test_money_and_round_meters_and_the_accounting_identity(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        ledger.bill_in(500)
        ledger.ticket_in(300, "000000000000000001")
        k = kernel(ledger)
        k.play({7: {"bac": 10, "war": 10, "tie": 5}}, StackedSource(FIG8), credits=ledger.credits)
        m = ledger.meters
        assert m["bills_in"] == 2500 and m["bills_in_by_denom.2000"] == 1 and m["bills_in_by_denom.500"] == 1
        assert m["coin_in"] == 25
        assert m["coin_out"] == 75               # stakes 25 back plus 50 won (FIG. 8)
        assert m["games_played"] == 1 and m["games_won"] == 1 and m.get("games_lost", 0) == 0
        assert m["coin_in.baccarat-war.tie"] == 5 and m["coin_out.baccarat-war.tie"] == 45
        assert ledger.credits == 2800 + 50
        ledger.ticket_out(ledger.credits_cents, "000000000000000002")
        assert ledger.credits == 0
        assert accounting_difference(ledger.meters) == 0
        report = ledger.meters_report()
        assert report["credits"] == 0 and report["meters"]["ticket_out"] == 2850
        assert report["meters"]["games"]["baccarat-war"]["wagers"]["bac"] == {"coin_in": 10, "coin_out": 20}


def test_recall_redraws_the_round_exactly_as_played(tmp_path, capsys):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(1000)
        k = kernel(ledger)
        source = RngShoe(RngService.seeded(11), get_game("baccarat-war").shoe(make_options("baccarat-war")))
        played = []
        for _ in range(3):
            k.play({1: {"bac": 10, "war": 10, "war_pool": 5}, 2: {"bac": 5, "war": 5}}, source,
                   credits=ledger.credits)
            played.append(k.record())
        recalled = ledger.recall(10)
    assert [r["round_id"] for r in recalled] == [r["round_id"] for r in reversed(played)]
    for mine, theirs in zip(recalled, reversed(played), strict=True):
        assert {k: v for k, v in mine.items() if k in theirs and k != "source"} == \
               {k: v for k, v in theirs.items() if k != "source"}
        assert mine["credits_after"] - mine["credits_before"] == mine["net"]
    assert main(["recall", "--state-dir", str(tmp_path), "--last", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc) == 2 and doc[0]["round_id"] == played[-1]["round_id"]


def test_refusals_change_nothing(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(15)
        before = (dict(ledger.meters), ledger.rows)
        with pytest.raises(LedgerStateError):
            kernel(ledger).play({1: {"bac": 10, "war": 10}}, StackedSource(FIG8))  # 20 > 15 credits
        with pytest.raises(LedgerError):
            ledger.bill_in(-5)
        with pytest.raises(LedgerStateError):
            ledger.ticket_out(100, "x")
        with pytest.raises(LedgerError):
            ledger.event("door_open", door="roof")
        assert (dict(ledger.meters), ledger.rows) == before


def test_no_cash_out_while_a_round_is_open(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        k = kernel(ledger)
        with pytest.raises(ShoeExhausted):      # the power goes mid-deal: the round stays open
            k.begin({1: {"bac": 10, "war": 10}}, StackedSource(FIG8[:2]))
    with Ledger.open(tmp_path) as ledger:
        assert ledger.open_round is not None
        with pytest.raises(LedgerStateError, match="round is in progress"):
            ledger.ticket_out(50, "x")


def test_events_are_sequenced_and_doors_counted(tmp_path, capsys):
    with Ledger.open(tmp_path) as ledger:
        ledger.event("power_up")
        ledger.event("door_open", door="main")
        ledger.event("door_close", door="main")
        ledger.event("service_entry", role="technician")
        assert ledger.meters["door_open"] == 1 and ledger.meters["door_open.main"] == 1
        assert ledger.meters["power_reset"] == 1
    assert main(["events", "--state-dir", str(tmp_path), "--json"]) == 0
    events = json.loads(capsys.readouterr().out)
    assert [e["event"] for e in events] == ["service_entry", "door_close", "door_open", "power_up", "ledger_created"]
    assert [e["seq"] for e in events] == [5, 4, 3, 2, 1]


def test_ram_clear_needs_a_technician_and_keeps_the_record_of_the_clear(tmp_path, capsys):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(700)
    with pytest.raises(LedgerStateError, match="technician"):
        Ledger.ram_clear(tmp_path, role="attendant", reason="test")
    assert main(["ledger", "clear", "--state-dir", str(tmp_path), "--role", "technician",
                 "--reason", "new board"]) == 2                       # needs --yes
    assert main(["ledger", "clear", "--state-dir", str(tmp_path), "--role", "technician",
                 "--reason", "new board", "--yes"]) == 0
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger.credits == 0 and ledger.meters.get("bills_in", 0) == 0
        clear = ledger.events(5)[0]
        assert clear["event"] == "ram_clear" and clear["role"] == "technician"
        assert clear["previous"]["meters"]["bills_in"] == 700


def test_denomination_cannot_change_without_a_ram_clear(tmp_path):
    Ledger.open(tmp_path, denomination=1).close()
    with pytest.raises(LedgerStateError, match="RAM clear"):
        Ledger.open(tmp_path, denomination=5)


def test_resume_with_the_rng_never_redraws_a_journaled_card(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100)
        k = kernel(ledger)
        # Seat and dealer tie at 3: the showdown entry journals the four initial cards, then the
        # war needs a card the (short) stack does not have: the power "goes" in the war.
        with pytest.raises(ShoeExhausted):
            k.begin({1: {"bac": 10, "war": 10}}, StackedSource(parse_cards("Qs 2d 3h Ah")), round_id="cut")
    with Ledger.open(tmp_path) as ledger:
        assert ledger.open_round.resume_data()["cards"] == ["Qs", "2d", "3h", "Ah"]
        k = resume_round(ledger, RngService.seeded(5))
        record = k.record()
        assert ledger.open_round is None
        assert accounting_difference(ledger.meters) == 0
    assert record["round_id"] == "cut"
    assert record["cards_dealt"][:4] == ["Qs", "2d", "3h", "Ah"]       # the journaled cards stand
    assert record["seats"][0]["cards"] == ["Qs", "3h"] and record["dealer"]["cards"] == ["2d", "Ah"]
    assert len(record["seats"][0]["war_cards"]) >= 1                 # the war came from the RNG
    with Ledger.open(tmp_path, read_only=True) as ledger:
        assert ledger.recall(1)[0]["cards_dealt"] == record["cards_dealt"]


def test_cashless_history_vouchers_and_notes(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        for i in range(12):
            ledger.bill_in(100 * (i + 1))
        for i in range(40):
            ledger.ticket_out(10, f"{i:018d}")
        ledger.ticket_in(50, "9" * 18, cashable=False)
        ledger.handpay(100, attendant="A. Smith")
        assert [n["cents"] for n in ledger.notes()] == [1200, 1100, 1000, 900, 800, 700, 600, 500, 400, 300]
        vouchers = ledger.vouchers()
        assert len(vouchers) == 35 and vouchers[0]["validation"] == f"{39:018d}"
        history = ledger.cashless()
        assert len(history) == 42             # 40 tickets out, 1 in, 1 handpay (fewer than 50)
        assert [h["kind"] for h in history[:2]] == ["handpay", "ticket_in"]
        assert ledger.meters["handpay_cancelled_credits"] == 100
        assert ledger.meters["ticket_in_noncashable"] == 50
        assert accounting_difference(ledger.meters) == 0


def test_a_commit_works_out_its_meter_changes_once(tmp_path, monkeypatch):
    """Issue 23, "following one value": a note's credit is worked out once on its way into critical
    memory (the check of the credit meter and the meters it updates use the same figures)."""
    import firmware.ledger.meters as meters

    calls = []
    real = meters.deltas

    def counted(kind, body):
        calls.append(kind)
        return real(kind, body)

    with Ledger.open(tmp_path) as ledger:
        monkeypatch.setattr(meters, "deltas", counted)
        ledger.bill_in(2000)
        assert calls == ["bill"]
        assert ledger.credits_cents == 2000
    with Ledger.open(tmp_path, read_only=True) as again:
        assert again.credits_cents == 2000
