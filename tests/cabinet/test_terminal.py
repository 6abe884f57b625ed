"""The terminal in-process, without devices: power-loss recovery, handpay, RNG and memory faults.

The device-facing behaviour (notes, tickets, doors, unplugging) is tested against a running
terminal in ``test_terminal_scenarios.py``.
"""

from __future__ import annotations

import pytest

from firmware.cabinet.states import CabinetState as S
from firmware.cabinet.terminal import Devices, Terminal, TerminalError
from firmware.cashless.vouchers import VoucherBook, VoucherState
from firmware.config import Config
from firmware.kernel.states import RoundState
from firmware.ledger.ledger import Ledger, accounting_difference
from firmware.rng.errors import EntropyError
from firmware.rng.service import RngService


def config(**limits) -> Config:
    return Config.model_validate({"limits": limits} if limits else {})


def start(state, cfg=None, rng=None, clock=None, **kw) -> tuple[Terminal, Ledger]:
    ledger = Ledger.open(state)
    terminal = Terminal(cfg or config(), ledger, rng or RngService.seeded(7), Devices(),
                        VoucherBook(ledger, terminal_id="T1"), **({"clock": clock} if clock else {}), **kw)
    terminal.power_up()
    return terminal, ledger


def settle(terminal: Terminal, steps: int = 20) -> None:
    for _ in range(steps):
        terminal.step()


def test_without_a_printer_a_cashout_is_a_handpay_the_attendant_pays(tmp_path):
    terminal, ledger = start(tmp_path)
    ledger.bill_in(2000)
    terminal.request_cashout()
    assert terminal.cabinet.state is S.HANDPAY
    assert terminal.status()["handpay"] == {"credits": 2000, "reason": "printer"}
    with pytest.raises(TerminalError, match="the printer is not ready: no printer"):
        terminal.retry_ticket()
    assert terminal.attendant_handpay("A. Smith") == {"paid": 2000, "reason": "printer"}
    assert terminal.cabinet.state is S.IDLE and ledger.credits == 0
    assert ledger.meters["handpay_cancelled_credits"] == 2000 and accounting_difference(ledger.meters) == 0
    ledger.close()


def test_a_cashout_at_the_handpay_limit_locks_up_and_the_lockup_survives_a_power_loss(tmp_path):
    cfg = config(handpay_limit=1000)
    terminal, ledger = start(tmp_path, cfg)
    ledger.bill_in(1500)
    terminal.request_cashout()
    assert terminal.cabinet.handpay_pending[0] == 1500 and terminal.cabinet.state is S.HANDPAY
    ledger.close()                                         # the power goes
    terminal, ledger = start(tmp_path, cfg)
    assert terminal.cabinet.state is S.HANDPAY and terminal.status()["handpay"] == {"credits": 1500, "reason": "limit"}
    with pytest.raises(TerminalError):
        terminal.play()
    terminal.attendant_handpay()
    assert terminal.cabinet.state is S.IDLE and ledger.meters["handpay_cancelled_credits"] == 1500
    ledger.close()
    terminal, ledger = start(tmp_path, cfg)                # paid: it does not come back
    assert terminal.cabinet.state is S.IDLE
    ledger.close()


def test_a_voucher_sent_but_never_confirmed_before_a_power_loss_is_voided_and_keeps_the_credits(tmp_path):
    with Ledger.open(tmp_path) as ledger:
        ledger.bill_in(2000)
        issued = VoucherBook(ledger, terminal_id="T1").issue(2000)
    terminal, ledger = start(tmp_path)
    book = terminal.vouchers
    assert book.state(issued.validation) is VoucherState.VOID
    assert ledger.credits == 2000 and ledger.meters.get("ticket_out", 0) == 0
    assert any(e["event"] == "voucher_unconfirmed" for e in ledger.events(20))
    with pytest.raises(Exception, match="void"):
        book.check(issued.validation)
    ledger.close()


def test_a_round_a_power_loss_interrupted_in_its_decisions_resumes_with_the_same_cards(tmp_path):
    terminal, ledger = start(tmp_path)
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()
    status = terminal.status()
    assert status["round"]["phase"] == RoundState.DECISIONS.value
    round_id, dealt = status["round"]["round_id"], list(terminal.kernel._source.dealt)
    ledger.close()                                         # the power goes while the player thinks
    terminal, ledger = start(tmp_path)
    status = terminal.status()
    assert status["state"] == "PLAYING" and status["round"]["round_id"] == round_id
    assert [str(c) for c in terminal.kernel._source.dealt][:len(dealt)] == [str(c) for c in dealt]
    terminal.decide(1, "play")
    settle(terminal)
    assert terminal.cabinet.state is S.IDLE and ledger.open_round is None
    assert ledger.recall(1)[0]["round_id"] == round_id and accounting_difference(ledger.meters) == 0
    ledger.close()


def test_an_rng_failure_mid_deal_tilts_the_cabinet_and_keeps_the_round_in_its_journal(tmp_path):
    class Failing(RngService):
        def randbelow(self, n):
            raise EntropyError("repetition count test failed")

    seeded = RngService.seeded(1)
    terminal, ledger = start(tmp_path, rng=Failing(seeded._drbg))
    ledger.bill_in(2000)
    terminal.play()
    settle(terminal)
    status = terminal.status()
    assert status["state"] == "TILT" and status["tilts"][0]["tilt"] == "rng:drbg"
    assert status["interrupted"] == "PLAYING" and "the round stopped" in status["message"]
    assert ledger.open_round is not None and ledger.credits == 2000 - 40    # staked, not lost
    ledger.close()


def test_a_cashout_asked_for_during_a_round_waits_for_the_round(tmp_path):
    terminal, ledger = start(tmp_path)
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()
    terminal.request_cashout()
    assert terminal.cabinet.state is S.PLAYING and terminal.cabinet.cashout_pending
    terminal.decide(1, "fold")
    settle(terminal)
    # no printer on this cabinet: the pending cashout became a handpay for what was left
    assert terminal.cabinet.state is S.HANDPAY
    assert terminal.cabinet.handpay_pending[0] == ledger.credits
    ledger.close()


def test_bad_requests_change_nothing(tmp_path):
    terminal, ledger = start(tmp_path)
    ledger.bill_in(100)
    rows = ledger.rows
    for bad in (lambda: terminal.play({1: {"bac": 10_000}}), lambda: terminal.play({1: {"nonsense": 5}}),
                lambda: terminal.choose_game("roulette"), lambda: terminal.set_bet(0),
                lambda: terminal.decide(1, "play"), lambda: terminal.attendant_handpay(),
                lambda: terminal.retry_ticket()):
        with pytest.raises(Exception) as info:
            bad()
        assert "Traceback" not in str(info.value)
    assert ledger.rows == rows and terminal.cabinet.state is S.IDLE and ledger.credits == 100
    f = terminal.submit("launch_missiles")
    with pytest.raises(TerminalError, match="unknown command 'launch_missiles'"):
        f.result(1)
    ledger.close()


def test_a_door_found_open_at_power_up_was_opened_while_the_power_was_off(tmp_path):
    from hal.events import Door
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"io_board": parse_spec("io", "sim:io")})
    try:
        rig.simulator("io_board").open_door(Door.CASH_BOX)      # while the cabinet is off
        ledger = Ledger.open(tmp_path)
        terminal = Terminal(config(), ledger, RngService.seeded(1), Devices(io_board=rig.device("io_board")),
                            VoucherBook(ledger, terminal_id="T1"))
        terminal.power_up()
        assert terminal.doors_opened_while_off == ["cash_box"]
        assert terminal.cabinet.state is S.TILT and terminal.cabinet.has_tilt("door", "cash_box")
        opened = [e for e in ledger.events(20) if e["event"] == "door_open"]
        assert opened[0]["while_power_off"] is True and ledger.meters["door_open.cash_box"] == 1
        rig.simulator("io_board").close_door(Door.CASH_BOX)
        for _ in range(200):
            terminal.step(0.01)
            if terminal.cabinet.state is S.IDLE:
                break
        assert terminal.cabinet.state is S.IDLE
        ledger.close()
    finally:
        rig.close()


def test_the_decision_clock_stops_while_play_is_stopped(tmp_path):
    now = [1000.0]
    ledger = Ledger.open(tmp_path)
    terminal = Terminal(config(), ledger, RngService.seeded(3), Devices(), VoucherBook(ledger, terminal_id="T1"),
                        clock=lambda: now[0])
    terminal.power_up()
    terminal.choose_game("three-card-poker")
    ledger.bill_in(2000)
    terminal.play()
    terminal.step()
    deadline = terminal.kernel.decisions_deadline
    assert deadline == 1000.0 + 60                         # [games] decision_timeout_s
    now[0] += 50
    terminal.cabinet.tilt("door", "main", "main door open")
    terminal.step()
    now[0] += 300                                          # the door stays open five minutes
    terminal.step()
    terminal.cabinet.clear_tilt("door", "main")
    terminal.step()
    assert terminal.kernel is not None and terminal.kernel.phase is RoundState.DECISIONS
    assert terminal.kernel.decisions_deadline == deadline + 300
    now[0] += 11                                           # 50 + 11 > 60 seconds of the player's own time
    terminal.step()
    assert terminal.kernel is None and terminal.last_record["decisions"][0] == {"seat": 1, "action": "fold", "timed_out": True}
    assert ledger.recall(1)[0]["decisions"] == terminal.last_record["decisions"]        # recall shows it too
    ledger.close()


def test_with_the_rng_a_door_opened_mid_war_stops_the_war_before_its_next_card(tmp_path):
    """The RNG deal's safe point: before every card. The stacked shoe stands in for the RNG so the
    war is certain; the door opens as the war's first card is asked for."""
    import threading
    import time

    from firmware.cards.card import parse_cards
    from firmware.cards.source import StackedSource
    from hal.events import Door
    from hal.registry import parse_spec
    from sim_hardware.rig import SimRig

    rig = SimRig({"io_board": parse_spec("io", "sim:io")})
    board = rig.simulator("io_board")
    try:
        ledger = Ledger.open(tmp_path)
        terminal = Terminal(config(), ledger, RngService.seeded(1), Devices(io_board=rig.device("io_board")),
                            VoucherBook(ledger, terminal_id="T1"))
        terminal.power_up()
        ledger.bill_in(2000)
        terminal.rounds._sources["baccarat-war"] = StackedSource(parse_cards("Qs 2d 3h Ah Td 6c"))
        asked: list[int] = []
        seen: dict[str, object] = {}
        real_gate = terminal.rounds.safe_point

        def gate():
            asked.append(len(asked))
            if len(asked) == 5:                            # the war's first card
                board.open_door(Door.MAIN)
                while not rig.device("io_board").is_open_door(Door.MAIN):
                    time.sleep(0.005)
                threading.Timer(0.4, board.close_door, args=(Door.MAIN,)).start()
            real_gate()
            if len(asked) == 5:
                seen["state_after"] = terminal.cabinet.state
                seen["events"] = [e["event"] for e in ledger.events(10)]

        terminal.rounds.safe_point = gate
        terminal.play({1: {"bac": 10, "war": 10}})
        terminal.step()
        assert seen["state_after"] is S.PLAYING            # the gate let the card go only after the door closed
        assert {"door_open", "door_close", "cabinet.tilt_raised", "cabinet.tilt_cleared"} <= set(seen["events"])
        record = terminal.last_record
        assert record["cards_dealt"] == ["Qs", "2d", "3h", "Ah", "Td", "6c"] and record["net"] == -20
        entries = ledger.round_entries(record["round_id"])
        assert [e["trigger"] for e in entries][:2] == ["deal", "showdown"]
        ledger.close()
    finally:
        rig.close()


def test_the_technician_clears_an_rng_tilt_only_by_passing_the_rng_tests_again(tmp_path, monkeypatch):
    class Failing(RngService):
        def randbelow(self, n):
            raise EntropyError("repetition count test failed")

    terminal, ledger = start(tmp_path, rng=Failing(RngService.seeded(1)._drbg))
    ledger.bill_in(2000)
    terminal.play()
    settle(terminal)
    assert terminal.cabinet.has_tilt("rng", "drbg")
    with pytest.raises(TerminalError, match="no tilt 'door:main' is active"):
        terminal.retest("door:main")
    import firmware.rng.power_up as power_up

    def broken(personalization="egm", **_):
        raise power_up.KnownAnswerFailure("HMAC_DRBG known-answer test failed")

    monkeypatch.setattr(power_up, "power_up_self_test", broken)
    with pytest.raises(TerminalError, match="rng:drbg stays: HMAC_DRBG known-answer test failed"):
        terminal.retest("rng:drbg")
    assert terminal.cabinet.state is S.TILT
    monkeypatch.undo()
    round_id = ledger.open_round.round_id
    terminal.retest("rng:drbg")
    assert terminal.cabinet.state is S.PLAYING and not isinstance(terminal.rng, Failing)
    settle(terminal)                                       # the interrupted round finishes first
    assert terminal.cabinet.state is S.IDLE and ledger.recall(1)[0]["round_id"] == round_id
    terminal.play()
    settle(terminal)
    assert terminal.rounds_played == 2 and accounting_difference(ledger.meters) == 0
    results = [e["result"] for e in ledger.events(50) if e["event"] == "tilt_retest"]
    assert results == ["passed", "failed"]
    ledger.close()


def test_the_validator_is_told_to_stack_for_good_only_after_the_credit_is_in_critical_memory(tmp_path):
    # ID-003: the VEND_VALID of a note is ACKed only once the ledger holds its credit, so a power
    # loss in between can never leave an uncredited note in the cash box.
    from drivers.id003.codec import Command
    from hal.registry import parse_spec
    from sim_hardware.id003_validator import State
    from sim_hardware.rig import SimRig

    rig = SimRig({"bill_validator": parse_spec("bill_validator", "sim:id003")})
    try:
        validator, sim = rig.device("bill_validator"), rig.simulator("bill_validator")
        ledger = Ledger.open(tmp_path)
        terminal = Terminal(config(), ledger, RngService.seeded(1), Devices(bill_validator=validator),
                            VoucherBook(ledger, terminal_id="T1"))
        terminal.power_up()
        assert validator.ack_on_record is True
        credit_at_ack: list[int] = []
        send = validator._send

        def watching(frame):
            if frame.code == Command.ACK:
                credit_at_ack.append(ledger.credits_cents)
            send(frame)

        validator._send = watching
        for _ in range(400):
            terminal.step(0.01)
            if terminal.status()["accepting_notes"] and sim.insert_note(20):
                break
        for _ in range(1000):
            terminal.step(0.01)
            if sim.state is State.IDLING and sim.cashbox:
                break
        assert ledger.credits_cents == 2000 and len(sim.cashbox) == 1
        assert credit_at_ack == [2000]                 # the one ACK came after the credit
        ledger.close()
    finally:
        rig.close()


def test_status_shows_the_seats_that_decided_while_others_still_wait(tmp_path):
    cfg = Config.model_validate({"games": {"enabled": ["three-card-poker"], "default": "three-card-poker",
                                           "seats": 2}})
    ledger = Ledger.open(tmp_path)
    terminal = Terminal(cfg, ledger, RngService.seeded(3), Devices(), VoucherBook(ledger, terminal_id="T1"))
    terminal.power_up()
    ledger.bill_in(2000)
    terminal.play({1: {"ante": 10}, 2: {"ante": 10}})
    terminal.step()
    status = terminal.status()["round"]
    assert [r["seat"] for r in status["pending"]] == [1, 2] and status["decided"] == []
    terminal.decide(1, "play")
    status = terminal.status()["round"]
    assert [r["seat"] for r in status["pending"]] == [2]
    assert status["decided"] == [{"seat": 1, "action": "play", "view": terminal.kernel.decision_view(1)}]
    assert len(status["decided"][0]["view"]["cards"]) == 3             # the cards it played on
    terminal.decide(2, "fold")
    terminal.step()
    assert terminal.status()["round"] is None
    ledger.close()


def _validator_terminal(tmp_path) -> tuple[Terminal, Ledger, str]:
    """A terminal whose ID-003 validator is configured on a port path nothing is at yet."""
    from drivers.id003.driver import Id003Validator

    port = str(tmp_path / "ttyVALIDATOR")
    validator = Id003Validator("bill_validator", port=port, timeout=0.3, poll_interval=0.02)
    ledger = Ledger.open(tmp_path / "state")
    cfg = Config.model_validate({"cabinet": {"reconnect_interval_s": 0.1}})
    terminal = Terminal(cfg, ledger, RngService.seeded(1), Devices(bill_validator=validator),
                        VoucherBook(ledger, terminal_id="T1"))
    return terminal, ledger, port


def _step_until(terminal: Terminal, predicate, what: str, steps: int = 600) -> None:
    for _ in range(steps):
        terminal.step(0.01)
        if predicate(terminal.status()):
            return
    raise AssertionError(f"no {what}: {terminal.status()}")


def test_a_validator_missing_at_power_up_is_a_device_tilt_naming_its_port_and_it_recovers_when_plugged_in(tmp_path):
    import os

    from sim_hardware.id003_validator import Id003Simulator
    from sim_hardware.pty_link import run_on_pty

    terminal, ledger, port = _validator_terminal(tmp_path)
    try:
        assert terminal.power_up() == {}                 # the self-test ends: no exception, no exit
        status = terminal.status()
        assert status["state"] == "TILT" and status["interrupted"] == "IDLE"
        (tilt,) = status["tilts"]
        assert tilt["tilt"] == "device_disconnected:bill_validator" and tilt["port"] == port
        assert tilt["reason"].startswith(f"bill_validator not connected ({port}): ")
        assert terminal.devices_not_connected() == {"bill_validator": f"not connected ({port})"}
        raised = [e for e in ledger.events(20) if e["event"] == "cabinet.tilt_raised"]
        assert raised and port in raised[0]["reason"]
        settle(terminal, 5)
        assert terminal.cabinet.state is S.TILT and not terminal.status()["accepting_notes"]
        simulator = Id003Simulator()
        with run_on_pty(simulator) as link:
            os.symlink(link.path, port)                  # the device appears at the configured port
            _step_until(terminal, lambda s: s["state"] == "IDLE" and s["accepting_notes"], "recovery")
            assert terminal.devices_not_connected() == {} and terminal.status()["tilts"] == []
            _step_until(terminal, lambda s: simulator.insert_note(20), "the note taken")
            _step_until(terminal, lambda s: s["credits_cents"] == 2000, "the note credited")
        cleared = [e for e in ledger.events(30) if e["event"] == "cabinet.tilt_cleared"]
        assert cleared and cleared[0]["tilt"] == "device_disconnected:bill_validator"
    finally:
        terminal.devices.bill_validator.close()
        ledger.close()


def test_a_validator_lost_while_running_tilts_naming_its_port_and_recovers_on_the_same_port(tmp_path):
    import os

    from sim_hardware.id003_validator import Id003Simulator
    from sim_hardware.pty_link import run_on_pty

    terminal, ledger, port = _validator_terminal(tmp_path)
    try:
        with run_on_pty(Id003Simulator()) as first:
            os.symlink(first.path, port)
            terminal.power_up()
            _step_until(terminal, lambda s: s["state"] == "IDLE" and s["accepting_notes"], "attract")
        # the cable is pulled: the pty is gone and nothing answers at the port any more
        _step_until(terminal, lambda s: s["state"] == "TILT", "the disconnection tilt")
        (tilt,) = terminal.status()["tilts"]
        assert tilt["tilt"] == "device_disconnected:bill_validator" and tilt["port"] == port
        assert tilt["reason"].startswith(f"bill_validator not connected ({port}): ")
        with run_on_pty(Id003Simulator()) as second:
            os.replace(port, port + ".old")
            os.symlink(second.path, port)                # plugged in again
            _step_until(terminal, lambda s: s["state"] == "IDLE" and s["accepting_notes"], "recovery")
    finally:
        terminal.devices.bill_validator.close()
        ledger.close()


def test_a_failed_self_test_cleared_by_the_technician_runs_again_and_reaches_idle(tmp_path):
    runs: list[int] = []

    def self_test(terminal: Terminal) -> dict[str, str]:
        runs.append(1)
        return {"critical_memory": "CRC mismatch in bank 2"} if len(runs) == 1 else {}

    ledger = Ledger.open(tmp_path)
    terminal = Terminal(config(), ledger, RngService.seeded(1), Devices(), VoucherBook(ledger, terminal_id="T1"),
                        self_test=self_test)
    terminal.power_up()
    assert terminal.cabinet.state is S.TILT and terminal.cabinet.interrupted_state is S.SELF_TEST
    terminal.retest("self_test:critical_memory")      # the check passes now: the tilt clears...
    assert len(runs) == 2 and terminal.cabinet.state is S.IDLE    # ...and the self-test runs again
    ledger.close()
