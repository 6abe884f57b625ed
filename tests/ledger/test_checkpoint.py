"""Start-up verifies what follows the newest checkpoint (the meters, their seqs and the open round
as of one record, signed), so it takes the same time with years of history as with none; the full
verification (``egm ledger verify --full``) still walks every record and page."""

from __future__ import annotations

import sqlite3

import pytest

from firmware.cards.source import RngShoe
from firmware.cli import main
from firmware.games.registry import get_game, make_options
from firmware.kernel.round import RoundKernel
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger
from firmware.ledger.resume import resume_round
from firmware.ledger.store import MIRROR_FILE
from firmware.rng.service import RngService


@pytest.fixture
def every_50(monkeypatch):
    monkeypatch.setattr(Ledger, "CHECKPOINT_EVERY", 50)


def play(ledger: Ledger, rounds: int, seed: int = 1) -> None:
    game = get_game("baccarat-war")
    options = make_options(game.id)
    kernel = RoundKernel(game, options, journal=ledger)
    source = RngShoe(RngService.seeded(seed), game.shoe(options))
    for _ in range(rounds):
        kernel.play({1: {"bac": 10, "war": 10}}, source, credits=ledger.credits)


def view(ledger: Ledger) -> tuple:
    return ledger.meters, ledger._meter_seq, ledger.rows, ledger.recall(5), ledger.events(5)


def test_start_up_from_a_checkpoint_equals_the_full_verification(tmp_path, every_50):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100_000)
        play(ledger, 60)
        ledger.ticket_out(1000, "V" * 18)
    with Ledger.open(tmp_path, read_only=True) as booted:
        assert booted._store.latest_checkpoint() is not None
        assert 0 < len(booted._store.verify(repair=False, full=False).rows) <= 50
        fast = view(booted)
    with Ledger.open(tmp_path, read_only=True, full=True) as whole:
        assert view(whole) == fast and whole.repairs == []


def test_a_round_open_across_a_checkpoint_resumes(tmp_path, every_50):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(100_000)
        play(ledger, 3)
        game = get_game("three-card-poker")              # waits for the play-or-fold decision
        kernel = RoundKernel(game, make_options(game.id), journal=ledger)
        assert kernel.begin({1: {"ante": 10}}, RngShoe(RngService.seeded(5), game.shoe(make_options(game.id))))
        round_id = ledger.open_round.round_id
        for _ in range(60):                            # history after the deal: a checkpoint holds the round
            ledger.event("door_open", door="main")
    with Ledger.open(tmp_path) as ledger:
        assert ledger._store.latest_checkpoint().seq > ledger.records_for(round_id)[0]["seq"]
        assert ledger.open_round is not None and ledger.open_round.round_id == round_id
        kernel = resume_round(ledger, RngService.seeded(6), decider=lambda req: req.default)
        assert kernel is not None and ledger.open_round is None
        assert ledger.recall(1)[0]["round_id"] == round_id


def test_old_damage_is_for_the_full_verification(tmp_path, every_50, capsys):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(5000)
        for _ in range(80):
            ledger.event("door_open", door="main")
    conn = sqlite3.connect(tmp_path / MIRROR_FILE)
    conn.execute("UPDATE log SET body = replace(body, '5000', '5001') WHERE kind = 'bill'")
    conn.commit()
    conn.close()
    assert main(["ledger", "verify", "--state-dir", str(tmp_path)]) == 0          # start-up's part
    assert main(["ledger", "verify", "--full", "--state-dir", str(tmp_path)]) == 1
    assert "needs repair: ledger-mirror.db: 1 log record(s) bad or missing" in capsys.readouterr().out
    assert main(["ledger", "verify", "--full", "--repair", "--state-dir", str(tmp_path)]) == 0
    assert main(["ledger", "verify", "--full", "--state-dir", str(tmp_path)]) == 0


def test_a_forged_checkpoint_is_not_used(tmp_path, every_50):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(5000)
        for _ in range(60):
            ledger.event("door_open", door="main")
    for name in ("ledger.db", MIRROR_FILE):
        conn = sqlite3.connect(tmp_path / name)
        conn.execute("UPDATE checkpoint SET state = replace(state, '\"credits\":5000', '\"credits\":9000')")
        conn.commit()
        conn.close()
    with Ledger.open(tmp_path, read_only=True) as ledger:      # not authentic: verified whole
        assert ledger.meters["credits"] == 5000


def test_a_checkpoint_that_disagrees_with_the_log_is_the_critical_memory_error(tmp_path, every_50):
    """Signed but wrong (a bug, or the key known to someone): the full verification says so."""
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(5000)
        ledger.meters["credits"] += 100            # the state a checkpoint would carry, wrong
        for _ in range(60):
            ledger.event("door_open", door="main")
    with pytest.raises(CriticalMemoryError, match="checkpoint at record"):
        Ledger.open(tmp_path, read_only=True, full=True)
