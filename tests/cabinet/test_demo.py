"""Demo mode: real rounds with memory-only credits that leave the terminal exactly as they found it."""

from __future__ import annotations

from typing import Any

import pytest

from firmware.cabinet.demo import DemoError, DemoMode
from firmware.cabinet.service import ServiceError
from firmware.cabinet.states import CabinetState
from tests.cabinet.test_service import build, last_event, login, refused, svc

S = CabinetState


@pytest.fixture
def rig(tmp_path):
    r = build(tmp_path)
    yield r
    r.ledger.close()


def demo(rig, *words: str) -> Any:
    """``egm simctl demo WORDS``."""
    future = rig.terminal.submit("demo", words=list(words))
    rig.terminal.step()
    return future.result(0)


def untouched(rig) -> tuple[Any, ...]:
    t = rig.terminal
    return (dict(rig.ledger.meters), rig.ledger.credits_cents, t.rounds_played, t.last_record,
            rig.ledger.recall(10), rig.ledger.open_round, dict(t.rounds._kernels), dict(t.rounds._sources), t.cabinet.state)


@pytest.mark.parametrize("where", ["idle", "service"])
def test_demo_rounds_leave_the_terminal_as_they_found_it(rig, where):
    t, ledger = rig.terminal, rig.ledger
    login(rig, "technician")
    if where == "service":
        t.cabinet.service_key_on()
    before = untouched(rig)
    rows, seq = ledger.rows, ledger._store.last_seq
    assert demo(rig) == {"demo": False, "credits": 0, "rounds": 0, "game": None, "last_round": None}

    started = demo(rig, "start")
    assert started["demo"] is True and started["credits"] == 10_000 and started["game"] == t.game_id
    played = demo(rig, "play", "5")
    assert played["played"] == 5 and len(played["records"]) == 5
    assert played["credits"] == 10_000 + sum(r["net"] for r in played["records"])
    status = demo(rig)
    assert status["demo"] is True and status["rounds"] == 5
    assert status["last_round"]["credits_after"] == played["credits"]
    for game in ("three-card-poker", "double-super-9", "split21-stud", "holdem-war", "blackjack-war"):
        t.game_id = game                                      # the current game (choose_game's effect)
        assert svc(rig, "demo", "play", "3")["played"] == 3
    t.game_id = "baccarat-war"
    stopped = demo(rig, "stop")
    assert stopped["demo"] is False and stopped["rounds"] == 20
    assert demo(rig)["demo"] is False

    assert untouched(rig) == before
    added = [e for e in ledger.events(200) if e["seq"] > seq]
    assert len(added) == ledger.rows - rows                  # nothing but events was written...
    assert {e["event"] for e in added} == {"service_action"}  # ...and only the service's own
    assert [e["action"] for e in reversed(added)] == ["demo start", "demo play"] + ["demo play"] * 5 + ["demo stop"]


def test_demo_needs_the_technician(rig):
    refused(rig, None, "demo", "start", match="log in first")
    login(rig, "auditor")
    refused(rig, "auditor", "demo", "start", match="the auditor role may not use demo start")
    with pytest.raises(ServiceError, match="may not use demo start"):
        demo(rig, "start")
    assert demo(rig)["demo"] is False                        # anyone may look


def test_demo_is_refused_with_credits_on_the_meter_or_a_round_open(rig):
    login(rig, "technician")
    rig.ledger.bill_in(500)
    refused(rig, "technician", "demo", "start", match="needs the technician key .*500 credits")
    rig.terminal.cabinet.service_key_on()                    # SERVICE: the credits are safe
    assert svc(rig, "demo", "start")["demo"] is True
    svc(rig, "demo", "stop")
    rig.terminal.cabinet.service_key_off()
    rig.terminal.choose_game("baccarat-war")
    rig.terminal.play()
    rig.terminal.step()                                     # a whole round (no decisions)
    assert rig.terminal.rounds_played == 1


def test_real_money_ends_the_demo(rig):
    login(rig, "technician")
    svc(rig, "demo", "start")
    rig.ledger.bill_in(2000)                                 # a player walks up
    with pytest.raises(ServiceError, match="demo play needs .*: the credit meter holds 2000 credits"):
        svc(rig, "demo", "play")
    assert rig.api.demo.active is False
    stop, play = [e for e in rig.ledger.events(2)][::-1]
    assert (stop["action"], stop["detail"]) == ("demo stop", "ended: the credit meter holds 2000 credits "
                                                             "(demo mode needs it at zero)")
    assert (play["action"], play["result"]) == ("demo play", "refused")
    assert demo(rig)["demo"] is False


def test_logging_out_ends_the_demo(rig):
    login(rig, "technician")
    svc(rig, "demo", "start", "500")
    assert demo(rig)["credits"] == 500
    svc(rig, "logout")
    assert demo(rig)["demo"] is False
    assert [e["action"] for e in rig.ledger.events(2)] == ["logout", "demo stop"]


def test_demo_credits_run_out(rig):
    login(rig, "technician")
    svc(rig, "demo", "start", "15")
    rig.terminal.bet_unit = 10
    with pytest.raises(ServiceError, match="not enough demo credits"):
        for _ in range(20):
            svc(rig, "demo", "play")
    assert last_event(rig)["result"] == "refused"


def test_demo_mode_object_rules(rig):
    d = DemoMode(rig.terminal, credits=100)
    with pytest.raises(DemoError, match="demo mode is off"):
        d.play()
    d.start()
    with pytest.raises(DemoError, match="already on"):
        d.start()
    with pytest.raises(DemoError, match="1..1000 rounds"):
        d.play(0)
    d.stop()
    with pytest.raises(DemoError, match="positive"):
        DemoMode(rig.terminal, credits=0)
