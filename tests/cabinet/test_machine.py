"""The cabinet state machine: every path of the table, the tilt bookkeeping, the precedence of
overlapping lockups, the events, refused triggers, random trigger sequences, and its diagram."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from transitions import MachineError

from firmware.cabinet.errors import CabinetError
from firmware.cabinet.machine import EVENT_KINDS, Cabinet
from firmware.cabinet.states import (
    GUARDS,
    INTERRUPTIBLE,
    OVERLAYS,
    SELF_TEST_CHECKS,
    TRANSITIONS,
    TRIGGERS,
    CabinetState,
    HandpayReason,
    TiltSource,
)
from firmware.cli import main
from firmware.errors import EgmError

S = CabinetState
LIMIT = 1000


class Log:
    """The ``on_event`` sink: every (kind, detail) in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def __call__(self, kind: str, detail: dict) -> None:
        self.events.append((kind, detail))

    def kinds(self) -> list[str]:
        return [k for k, _ in self.events]

    def moves(self) -> list[tuple[str, str, str]]:
        return [(d["trigger"], d["source"], d["dest"]) for k, d in self.events if k == "transition"]

    def clear(self) -> None:
        self.events.clear()


def cabinet(*, idle: bool = True) -> tuple[Cabinet, Log]:
    log = Log()
    ticks = itertools.count(1000)
    cab = Cabinet(handpay_limit=LIMIT, on_event=log, clock=lambda: float(next(ticks)))
    if idle:
        cab.begin_self_test()
        cab.self_test_passed()
        log.clear()
    return cab, log


def snapshot(cab: Cabinet) -> tuple:
    return (cab.state, cab.active_tilts, cab.interrupted_state, cab.disable_pending, cab.cashout_pending,
            cab.handpay_pending)


# --- power-up ----------------------------------------------------------------------------------------
def test_power_up_self_test_passes_to_idle():
    cab, log = cabinet(idle=False)
    assert cab.state is S.POWER_UP and not cab.can_accept_money and not cab.can_start_round
    cab.begin_self_test()
    assert cab.state is S.SELF_TEST and not cab.can_accept_money
    cab.self_test_passed()
    assert cab.state is S.IDLE and cab.can_accept_money and cab.can_start_round
    assert log.moves() == [("begin_self_test", "POWER_UP", "SELF_TEST"), ("self_test_passed", "SELF_TEST", "IDLE")]


def test_self_test_failure_tilts_with_every_reason_and_a_cleared_failure_runs_the_self_test_again():
    cab, log = cabinet(idle=False)
    cab.begin_self_test()
    log.clear()
    cab.self_test_failed({"critical_memory": "CRC mismatch in bank 2", "doors_while_off": "main door opened"})
    assert cab.state is S.TILT and cab.interrupted_state is S.SELF_TEST
    assert [(t.source, t.name, t.reason) for t in cab.active_tilts] == [
        (TiltSource.SELF_TEST, "critical_memory", "CRC mismatch in bank 2"),
        (TiltSource.SELF_TEST, "doors_while_off", "main door opened"),
    ]
    assert log.kinds() == ["tilt_raised", "tilt_raised", "transition"]
    assert log.events[2][1] == {"trigger": "self_test_failed", "source": "SELF_TEST", "dest": "TILT",
                                "failed": ["critical_memory", "doors_while_off"]}
    cab.clear_tilt(TiltSource.SELF_TEST, "doors_while_off")
    assert cab.state is S.TILT
    cab.clear_tilt("self_test", "critical_memory")
    assert cab.state is S.SELF_TEST and cab.interrupted_state is None     # run it again
    cab.self_test_passed()
    assert cab.state is S.IDLE


def test_a_device_missing_at_power_up_tilts_and_the_cabinet_goes_to_idle_when_it_answers():
    cab, log = cabinet(idle=False)
    cab.begin_self_test()
    cab.tilt(TiltSource.DEVICE_DISCONNECTED, "bill_validator", "bill_validator not connected (/dev/ttyUSB0)")
    assert cab.state is S.TILT and cab.interrupted_state is S.SELF_TEST
    log.clear()
    cab.self_test_passed()                       # the self-test ends; the missing device holds the cabinet
    assert cab.state is S.TILT and cab.interrupted_state is S.IDLE and not cab.can_accept_money
    assert log.events == [("resume_changed", {"trigger": "self_test_passed", "state": "TILT",
                                              "from": "SELF_TEST", "to": "IDLE"})]
    assert [t.reason for t in cab.active_tilts] == ["bill_validator not connected (/dev/ttyUSB0)"]
    cab.clear_tilt(TiltSource.DEVICE_DISCONNECTED, "bill_validator")      # plugged in: it answers
    assert cab.state is S.IDLE and cab.interrupted_state is None
    assert log.moves() == [("clear_tilt", "TILT", "IDLE")]


def test_a_disable_while_a_device_tilt_holds_the_self_test_applies_when_it_passes():
    cab, _ = cabinet(idle=False)
    cab.begin_self_test()
    cab.tilt(TiltSource.DEVICE_DISCONNECTED, "printer", "printer not connected (/dev/ttyUSB1)")
    cab.disable()
    assert cab.disable_pending
    cab.self_test_passed()
    assert cab.state is S.TILT and cab.interrupted_state is S.DISABLED and not cab.disable_pending
    cab.clear_tilt(TiltSource.DEVICE_DISCONNECTED, "printer")
    assert cab.state is S.DISABLED


def test_a_self_test_failing_under_a_device_tilt_adds_its_conditions_and_runs_again_once_all_clear():
    cab, log = cabinet(idle=False)
    cab.begin_self_test()
    cab.tilt(TiltSource.DEVICE_DISCONNECTED, "bill_validator", "bill_validator not connected (/dev/ttyUSB0)")
    cab.self_test_failed({"critical_memory": "CRC mismatch in bank 2"})
    assert cab.state is S.TILT and cab.interrupted_state is S.SELF_TEST
    assert [t.key for t in cab.active_tilts] == ["device_disconnected:bill_validator", "self_test:critical_memory"]
    cab.clear_tilt(TiltSource.DEVICE_DISCONNECTED, "bill_validator")
    cab.clear_tilt(TiltSource.SELF_TEST, "critical_memory")
    assert cab.state is S.SELF_TEST
    cab.self_test_passed()
    assert cab.state is S.IDLE


@pytest.mark.parametrize("outcome", [lambda c: c.self_test_passed(), lambda c: c.self_test_failed({"devices": "x"})],
                         ids=["passed", "failed"])
def test_a_self_test_outcome_in_a_tilt_over_anything_but_the_self_test_is_refused(outcome):
    cab, log = reach(S.TILT)                    # over IDLE
    before = snapshot(cab)
    with pytest.raises(CabinetError, match="no self-test is running"):
        outcome(cab)
    assert snapshot(cab) == before and not log.events


@pytest.mark.parametrize("failures", [{}, {"flux_capacitor": "gone"}, {"devices": ""}, ["devices"]])
def test_self_test_failure_needs_known_checks_with_reasons(failures):
    cab, log = cabinet(idle=False)
    cab.begin_self_test()
    log.clear()
    with pytest.raises(CabinetError):
        cab.self_test_failed(failures)
    assert cab.state is S.SELF_TEST and not cab.active_tilts and not log.events


# --- play, cashout, handpay ----------------------------------------------------------------------------
def test_idle_to_playing_and_back():
    cab, log = cabinet()
    cab.start_round()
    assert cab.state is S.PLAYING and cab.round_in_progress and cab.can_continue_round
    assert cab.can_accept_money and not cab.can_start_round
    cab.complete_round()
    assert cab.state is S.IDLE and not cab.round_in_progress
    assert log.moves() == [("start_round", "IDLE", "PLAYING"), ("complete_round", "PLAYING", "IDLE")]


def test_cashout_from_idle_prints_a_ticket_below_the_limit():
    cab, log = cabinet()
    cab.cashout()
    assert cab.state is S.CASHOUT and not cab.can_accept_money and not cab.can_start_round
    assert not cab.requires_handpay(LIMIT - 1) and cab.requires_handpay(LIMIT)
    with pytest.raises(CabinetError, match="must be a handpay"):
        cab.ticket_printed(LIMIT)
    assert cab.state is S.CASHOUT
    cab.ticket_printed(LIMIT - 1)
    assert cab.state is S.IDLE
    assert log.events[-1] == ("transition", {"trigger": "ticket_printed", "source": "CASHOUT", "dest": "IDLE",
                                             "amount": LIMIT - 1})


@pytest.mark.parametrize(("amount", "reason"), [(LIMIT, HandpayReason.LIMIT), (LIMIT * 5, "limit"),
                                                (1, HandpayReason.PRINTER), (LIMIT + 1, "printer")])
def test_handpay_at_the_limit_or_when_the_printer_cannot_print_ends_only_with_the_attendant_key(amount, reason):
    cab, log = cabinet()
    cab.cashout()
    cab.handpay(amount, reason)
    assert cab.state is S.HANDPAY and cab.handpay_pending == (amount, HandpayReason(reason))
    for refused in (cab.start_round, cab.cashout, cab.complete_round, cab.service_key_on, cab.self_test_passed):
        with pytest.raises(CabinetError):
            refused()
    assert cab.state is S.HANDPAY and not cab.can_accept_money
    cab.handpay_key_off()
    assert cab.state is S.IDLE and cab.handpay_pending is None
    assert log.events[-1] == ("transition", {"trigger": "handpay_key_off", "source": "HANDPAY", "dest": "IDLE",
                                             "amount": amount, "reason": HandpayReason(reason).value})


def test_a_printer_handpay_can_go_back_to_the_printer_and_a_limit_handpay_cannot():
    cab, log = cabinet()
    cab.cashout()
    cab.handpay(7, "printer")
    cab.retry_ticket()
    assert cab.state is S.CASHOUT and cab.handpay_pending is None
    assert log.events[-1] == ("transition", {"trigger": "retry_ticket", "source": "HANDPAY", "dest": "CASHOUT",
                                             "amount": 7})
    cab.handpay(LIMIT, "limit")
    with pytest.raises(CabinetError, match="only a printer handpay goes back to the printer"):
        cab.retry_ticket()
    assert cab.state is S.HANDPAY and cab.handpay_pending == (LIMIT, HandpayReason.LIMIT)


def test_a_cashout_with_nothing_left_to_pay_ends_at_once():
    cab, log = cabinet()
    cab.start_round()
    cab.cashout()
    cab.complete_round()
    assert cab.state is S.CASHOUT
    cab.cashout_empty()
    assert cab.state is S.IDLE
    cab.start_round()
    cab.cashout()
    cab.disable()
    cab.complete_round()
    cab.cashout_empty()
    assert cab.state is S.DISABLED


@pytest.mark.parametrize(("amount", "reason"), [(LIMIT - 1, "limit"), (0, "printer"), (-5, "printer"),
                                                (True, "printer"), (10.0, "printer"), (LIMIT, "whim")])
def test_handpay_refuses_what_is_not_a_handpay(amount, reason):
    cab, log = cabinet()
    cab.cashout()
    log.clear()
    with pytest.raises(CabinetError):
        cab.handpay(amount, reason)
    assert cab.state is S.CASHOUT and cab.handpay_pending is None and not log.events


def test_cashout_during_a_round_waits_for_the_round_to_complete():
    cab, log = cabinet()
    cab.start_round()
    cab.cashout()
    assert cab.state is S.PLAYING and cab.cashout_pending and cab.can_continue_round
    assert not cab.can_accept_money                     # the player is leaving
    cab.cashout()                                       # asked twice: still one request
    cab.complete_round()
    assert cab.state is S.CASHOUT and not cab.cashout_pending
    assert log.kinds() == ["transition", "request_pending", "transition"]
    assert log.events[1] == ("request_pending", {"request": "cashout", "state": "PLAYING"})


# --- tilts -----------------------------------------------------------------------------------------
def test_a_tilt_during_a_round_stops_play_and_the_round_resumes_when_it_clears():
    cab, log = cabinet()
    cab.start_round()
    cab.tilt(TiltSource.DOOR, "main", "main door opened")
    assert cab.state is S.TILT and cab.interrupted_state is S.PLAYING
    assert cab.round_in_progress and not cab.can_continue_round
    assert not cab.can_accept_money and not cab.can_start_round
    with pytest.raises(CabinetError, match="not allowed in TILT"):
        cab.start_round()
    with pytest.raises(CabinetError):
        cab.complete_round()                            # the round cannot finish while tilted
    cab.clear_tilt(TiltSource.DOOR, "main")
    assert cab.state is S.PLAYING and cab.can_continue_round and cab.interrupted_state is None
    cab.complete_round()
    assert cab.state is S.IDLE


@pytest.mark.parametrize("first", [0, 1])
def test_two_tilts_clear_in_either_order_and_only_the_last_one_resumes(first):
    cab, log = cabinet()
    cab.start_round()
    conditions = [(TiltSource.DEVICE_DISCONNECTED, "bill_validator"), (TiltSource.RNG, "entropy")]
    cab.tilt(*conditions[0], "no answer for 2 s")
    cab.tilt(*conditions[1], "repetition count test failed")
    assert [t.key for t in cab.active_tilts] == ["device_disconnected:bill_validator", "rng:entropy"]
    assert [t.since for t in cab.active_tilts] == [1000.0, 1001.0]
    cab.clear_tilt(*conditions[first])
    assert cab.state is S.TILT and len(cab.active_tilts) == 1
    assert not cab.has_tilt(*conditions[first]) and cab.has_tilt(*conditions[1 - first])
    cab.clear_tilt(*conditions[1 - first])
    assert cab.state is S.PLAYING and cab.active_tilts == ()
    assert log.kinds() == ["transition", "tilt_raised", "transition", "tilt_raised",
                           "tilt_cleared", "tilt_cleared", "transition"]


def test_tilt_events_carry_the_reason_and_times_in_order():
    cab, log = cabinet()
    cab.tilt("critical_memory", "ledger", "write failed: disk full")
    cab.clear_tilt("critical_memory", "ledger")
    assert log.events == [
        ("tilt_raised", {"tilt": "critical_memory:ledger", "reason": "write failed: disk full", "time": 1000.0,
                         "state": "IDLE", "active": 1}),
        ("transition", {"trigger": "tilt", "source": "IDLE", "dest": "TILT", "tilt": "critical_memory:ledger",
                        "reason": "write failed: disk full"}),
        ("tilt_cleared", {"tilt": "critical_memory:ledger", "reason": "write failed: disk full",
                          "raised_at": 1000.0, "time": 1001.0, "state": "TILT", "active": 0}),
        ("transition", {"trigger": "clear_tilt", "source": "TILT", "dest": "IDLE", "tilt": "critical_memory:ledger"}),
    ]


def test_a_tilt_raised_again_changes_nothing_and_clearing_an_inactive_one_is_refused():
    cab, log = cabinet()
    cab.tilt("door", "main", "opened")
    log.clear()
    cab.tilt("door", "main", "opened again")
    assert [t.reason for t in cab.active_tilts] == ["opened"] and not log.events
    with pytest.raises(CabinetError, match="no tilt door:logic is active"):
        cab.clear_tilt("door", "logic")
    with pytest.raises(CabinetError, match="unknown tilt source"):
        cab.tilt("gremlins", "main", "x")
    with pytest.raises(CabinetError):
        cab.tilt("door", "", "x")
    with pytest.raises(CabinetError):
        cab.tilt("door", "cash_box", " ")
    assert cab.state is S.TILT and [t.key for t in cab.active_tilts] == ["door:main"] and not log.events


@pytest.mark.parametrize("state", INTERRUPTIBLE)
def test_any_state_tilts_and_comes_back(state):
    cab, _ = reach(state)
    cab.tilt(TiltSource.DEVICE_FAULT, "printer", "paper jam")
    assert cab.state is S.TILT and cab.interrupted_state is state
    cab.clear_tilt(TiltSource.DEVICE_FAULT, "printer")
    assert cab.state is state


def test_handpay_then_door_open_tilts_above_the_handpay_and_returns_to_it():
    cab, log = cabinet()
    cab.cashout()
    cab.handpay(LIMIT * 2, "limit")
    cab.tilt("door", "main", "attendant opened the main door")
    assert cab.state is S.TILT and cab.interrupted_state is S.HANDPAY
    with pytest.raises(CabinetError):
        cab.handpay_key_off()                           # TILT first
    cab.clear_tilt("door", "main")
    assert cab.state is S.HANDPAY and cab.handpay_pending == (LIMIT * 2, HandpayReason.LIMIT)
    cab.handpay_key_off()
    assert cab.state is S.IDLE


# --- the host ------------------------------------------------------------------------------------------
def test_disable_and_enable_from_idle():
    cab, log = cabinet()
    cab.disable()
    assert cab.state is S.DISABLED and not cab.can_start_round and not cab.can_accept_money
    cab.disable()                                       # the host repeats itself: nothing happens
    cab.enable()
    assert cab.state is S.IDLE
    cab.enable()
    assert cab.state is S.IDLE
    assert log.moves() == [("disable", "IDLE", "DISABLED"), ("enable", "DISABLED", "IDLE")]


def test_disable_during_a_round_is_pending_until_the_round_completes():
    cab, log = cabinet()
    cab.start_round()
    cab.disable()
    assert cab.state is S.PLAYING and cab.disable_pending and cab.can_continue_round
    assert not cab.can_accept_money
    cab.tilt("door", "main", "opened")                  # a tilt in between does not lose either
    cab.clear_tilt("door", "main")
    assert cab.state is S.PLAYING and cab.disable_pending
    cab.complete_round()
    assert cab.state is S.DISABLED and not cab.disable_pending
    assert ("request_pending", {"request": "disable", "state": "PLAYING"}) in log.events


def test_enable_cancels_a_pending_disable():
    cab, log = cabinet()
    cab.start_round()
    cab.disable()
    cab.enable()
    assert not cab.disable_pending
    cab.complete_round()
    assert cab.state is S.IDLE
    assert log.kinds() == ["transition", "request_pending", "request_cancelled", "transition"]


def test_two_disablers_each_lift_only_their_own_disable_also_while_it_is_pending():
    cab, _ = cabinet()
    cab.start_round()
    cab.disable("sas")
    cab.enable()                                  # the host lifts a disable it never gave
    assert cab.disable_pending and cab.disabled_by == {"sas"}
    cab.disable()                                 # the host's own
    cab.complete_round()
    assert cab.state is S.DISABLED and cab.disabled_by == {"host", "sas"}
    cab.enable("sas")
    assert cab.state is S.DISABLED and cab.disabled_by == {"host"}
    cab.enable()
    assert cab.state is S.IDLE and cab.disabled_by == set()


def test_cashout_then_disable_pays_the_player_first():
    cab, _ = cabinet()
    cab.start_round()
    cab.cashout()
    cab.disable()
    cab.complete_round()
    assert cab.state is S.CASHOUT and cab.disable_pending
    cab.ticket_printed(10)
    assert cab.state is S.DISABLED


def test_a_disabled_cabinet_still_pays_the_player_out_and_stays_disabled():
    cab, _ = cabinet()
    cab.disable()
    cab.cashout()
    assert cab.state is S.CASHOUT and cab.disable_pending
    cab.handpay(5, "printer")
    cab.handpay_key_off()
    assert cab.state is S.DISABLED


def test_disable_and_enable_under_a_tilt_change_where_it_returns():
    cab, log = cabinet()
    cab.tilt("door", "main", "opened")
    cab.disable()
    assert cab.interrupted_state is S.DISABLED and not cab.disable_pending
    cab.enable()
    assert cab.interrupted_state is S.IDLE
    cab.disable()
    cab.clear_tilt("door", "main")
    assert cab.state is S.DISABLED
    assert [d for k, d in log.events if k == "resume_changed"] == [
        {"trigger": "disable", "state": "TILT", "from": "IDLE", "to": "DISABLED"},
        {"trigger": "enable", "state": "TILT", "from": "DISABLED", "to": "IDLE"},
        {"trigger": "disable", "state": "TILT", "from": "IDLE", "to": "DISABLED"},
    ]


def test_disable_during_power_up_applies_when_the_self_test_passes():
    cab, _ = cabinet(idle=False)
    cab.disable()
    cab.begin_self_test()
    cab.self_test_passed()
    assert cab.state is S.DISABLED


# --- service -------------------------------------------------------------------------------------------
def test_service_from_idle_and_back():
    cab, log = cabinet()
    cab.service_key_on()
    assert cab.state is S.SERVICE and cab.interrupted_state is S.IDLE
    assert not cab.can_start_round and not cab.can_accept_money
    cab.service_key_off()
    assert cab.state is S.IDLE
    assert log.moves() == [("service_key_on", "IDLE", "SERVICE"), ("service_key_off", "SERVICE", "IDLE")]


def test_service_from_tilt_goes_back_to_the_tilt_while_a_condition_is_active():
    cab, _ = cabinet()
    cab.start_round()
    cab.tilt("device_fault", "bill_validator", "stacker jam")
    cab.service_key_on()
    assert cab.state is S.SERVICE and cab.interrupted_state is S.PLAYING and cab.round_in_progress
    cab.service_key_off()
    assert cab.state is S.TILT and cab.interrupted_state is S.PLAYING
    cab.clear_tilt("device_fault", "bill_validator")
    assert cab.state is S.PLAYING


def test_tilts_cleared_in_service_return_past_the_tilt_to_the_round():
    cab, _ = cabinet()
    cab.start_round()
    cab.tilt("device_fault", "bill_validator", "stacker jam")
    cab.service_key_on()
    cab.clear_tilt("device_fault", "bill_validator")     # the technician fixed it
    assert cab.state is S.SERVICE
    cab.service_key_off()
    assert cab.state is S.PLAYING


def test_a_tilt_in_service_is_recorded_and_waits_for_the_key_off():
    cab, log = cabinet()
    cab.service_key_on()
    cab.tilt("door", "logic", "logic door opened")
    assert cab.state is S.SERVICE and cab.has_tilt("door", "logic")
    cab.service_key_off()
    assert cab.state is S.TILT and cab.interrupted_state is S.IDLE
    cab.clear_tilt("door", "logic")
    assert cab.state is S.IDLE


def test_service_from_disabled_returns_to_disabled():
    cab, _ = cabinet()
    cab.disable()
    cab.service_key_on()
    cab.service_key_off()
    assert cab.state is S.DISABLED


# --- refused triggers ----------------------------------------------------------------------------------
def reach(state: CabinetState) -> tuple[Cabinet, Log]:
    """A cabinet in ``state`` by the table's own triggers (TILT and SERVICE over IDLE)."""
    cab, log = cabinet(idle=state not in (S.POWER_UP, S.SELF_TEST))
    steps = {
        S.POWER_UP: [], S.SELF_TEST: [cab.begin_self_test], S.IDLE: [], S.PLAYING: [cab.start_round],
        S.CASHOUT: [cab.cashout], S.HANDPAY: [cab.cashout, lambda: cab.handpay(LIMIT, "limit")],
        S.TILT: [lambda: cab.tilt("door", "main", "opened")], S.SERVICE: [cab.service_key_on],
        S.DISABLED: [cab.disable],
    }[state]
    for step in steps:
        step()
    assert cab.state is state
    log.clear()
    return cab, log


CALLS = {
    "begin_self_test": lambda c: c.begin_self_test(),
    "self_test_passed": lambda c: c.self_test_passed(),
    "self_test_failed": lambda c: c.self_test_failed({"devices": "printer missing"}),
    "start_round": lambda c: c.start_round(),
    "complete_round": lambda c: c.complete_round(),
    "cashout": lambda c: c.cashout(),
    "ticket_printed": lambda c: c.ticket_printed(5),
    "handpay": lambda c: c.handpay(5, "printer"),
    "handpay_key_off": lambda c: c.handpay_key_off(),
    "cashout_empty": lambda c: c.cashout_empty(),
    "retry_ticket": lambda c: c.retry_ticket(),
    "tilt": lambda c: c.tilt("door", "cash_box", "opened"),
    "clear_tilt": lambda c: c.clear_tilt("door", "main"),
    "service_key_on": lambda c: c.service_key_on(),
    "service_key_off": lambda c: c.service_key_off(),
    "disable": lambda c: c.disable(),
    "enable": lambda c: c.enable(),
}

REFUSED = [(state, trigger) for state in CabinetState for trigger in TRIGGERS
           if not any(row.trigger == trigger and state in row.sources for row in TRANSITIONS)]


def test_every_trigger_has_a_call():
    assert set(CALLS) == set(TRIGGERS)
    assert len(REFUSED) > 60


@pytest.mark.parametrize(("state", "trigger"), REFUSED, ids=[f"{s.name}-{t}" for s, t in REFUSED])
def test_triggers_the_table_has_no_row_for_are_refused_and_change_nothing(state, trigger):
    cab, log = reach(state)
    before = snapshot(cab)
    with pytest.raises(CabinetError, match=f"{trigger} is not allowed in {state.name}") as info:
        CALLS[trigger](cab)
    assert isinstance(info.value, EgmError) and isinstance(info.value.__cause__, MachineError)
    assert snapshot(cab) == before and not log.events
    assert trigger not in cab.allowed_triggers()


def test_an_on_event_failure_undoes_the_trigger():
    cab, log = cabinet()
    cab.start_round()

    failing: set[str] = set()

    def broken(kind, detail):
        if kind in failing:
            raise OSError("event log unwritable")

    cab._on_event = broken
    before = snapshot(cab)
    for kinds in ({"tilt_raised"}, {"transition"}, {"request_pending"}):   # first, second, internal
        failing.clear()
        failing.update(kinds)
        with pytest.raises(OSError):
            cab.disable() if "request_pending" in kinds else cab.tilt("door", "main", "opened")
        assert snapshot(cab) == before
    failing.clear()
    cab.disable()
    assert cab.disable_pending


def test_a_trigger_fired_from_on_event_is_refused():
    cab, _ = cabinet()

    def reentrant(kind, detail):
        cab.disable()

    cab._on_event = reentrant
    with pytest.raises(CabinetError, match="inside on_event"):
        cab.start_round()
    assert cab.state is S.IDLE


def test_handpay_limit_must_be_positive():
    with pytest.raises(CabinetError):
        Cabinet(handpay_limit=0)
    assert Cabinet(handpay_limit=1).state is S.POWER_UP


# --- the table -----------------------------------------------------------------------------------------
def test_the_table_is_well_formed_and_every_state_is_reachable():
    groups: dict[tuple[str, CabinetState], list] = {}
    for row in TRANSITIONS:
        assert row.guard is None or row.guard in GUARDS
        for src in row.sources:
            groups.setdefault((row.trigger, src), []).append(row)
    for (trigger, src), rows in groups.items():
        resumes = [r for r in rows if r.guard == "resume"]
        if resumes:     # the resume rows come last and cover every state TILT/SERVICE can return to
            assert src in OVERLAYS and rows[-len(resumes):] == resumes, (trigger, src)
            assert [r.dest for r in resumes] == list(INTERRUPTIBLE)
        else:           # otherwise the last row of a group has no guard: a trigger allowed always applies
            assert rows[-1].guard is None, (trigger, src)
    reached = {S.POWER_UP}
    changed = True
    while changed:
        changed = False
        for row in TRANSITIONS:
            if row.dest is not None and row.dest not in reached and reached & set(row.sources):
                reached.add(row.dest)
                changed = True
    assert reached == set(CabinetState)


def test_the_machine_runs_exactly_the_table():
    cab, _ = cabinet(idle=False)
    machine = cab._machine
    assert set(machine.events) == set(TRIGGERS)
    ran = {(name, src): [(t.dest, len(t.conditions)) for t in ts]
           for name, event in machine.events.items() for src, ts in event.transitions.items()}
    table: dict[tuple[str, str], list] = {}
    for row in TRANSITIONS:
        for src in row.sources:
            table.setdefault((row.trigger, src.name), []).append(
                (row.dest.name if row.dest else None, int(row.guard is not None)))
    assert ran == table         # same rows, same order within each group, guards where the table has them


# --- random trigger sequences ----------------------------------------------------------------------------
NAMES = st.sampled_from(["main", "logic", "bill_validator", "printer"])


class CabinetSequences(RuleBasedStateMachine):
    """Random triggers, valid or not; the invariants hold after each, refused ones change nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.log = Log()
        ticks = itertools.count()
        self.cab = Cabinet(handpay_limit=LIMIT, on_event=self.log, clock=lambda: float(next(ticks)))
        self.round_open = False
        self.seen = 0                       # events already checked
        self.state_from_events = S.POWER_UP
        self.tilts_from_events: set[str] = set()

    def attempt(self, trigger: str, call) -> bool:
        before, n = snapshot(self.cab), len(self.log.events)
        try:
            call()
        except CabinetError:
            assert snapshot(self.cab) == before and len(self.log.events) == n
            return False
        assert trigger in _allowed_in(before[0])
        return True

    @initialize(powered_up=st.booleans())
    def power_up(self, powered_up):
        if powered_up:                      # half the runs start in IDLE, to get further
            assert self.attempt("begin_self_test", self.cab.begin_self_test)
            assert self.attempt("self_test_passed", self.cab.self_test_passed)

    @rule()
    def begin_self_test(self):
        self.attempt("begin_self_test", self.cab.begin_self_test)

    @rule()
    def self_test_passed(self):
        self.attempt("self_test_passed", self.cab.self_test_passed)

    @rule()
    def cashout(self):
        self.attempt("cashout", self.cab.cashout)

    @rule()
    def handpay_key_off(self):
        self.attempt("handpay_key_off", self.cab.handpay_key_off)

    @rule(on=st.booleans())
    def service_key(self, on):
        if on:
            self.attempt("service_key_on", self.cab.service_key_on)
        else:
            self.attempt("service_key_off", self.cab.service_key_off)

    @rule(enable=st.booleans())
    def host(self, enable):
        if enable:
            self.attempt("enable", self.cab.enable)
        else:
            self.attempt("disable", self.cab.disable)

    @rule()
    def start_round(self):
        was = self.cab.state
        if self.attempt("start_round", self.cab.start_round):
            assert was is S.IDLE and not self.cab.active_tilts
            self.round_open = True
        else:
            assert was is not S.IDLE

    @rule()
    def complete_round(self):
        if self.attempt("complete_round", self.cab.complete_round):
            self.round_open = False

    @rule(failed=st.dictionaries(st.sampled_from(SELF_TEST_CHECKS), st.sampled_from(["bad", "missing"]),
                                 max_size=3))
    def self_test_failed(self, failed):
        self.attempt("self_test_failed", lambda: self.cab.self_test_failed(failed))

    @rule(amount=st.integers(-1, 2 * LIMIT))
    def ticket_printed(self, amount):
        self.attempt("ticket_printed", lambda: self.cab.ticket_printed(amount))

    @rule(amount=st.integers(0, 2 * LIMIT), reason=st.sampled_from(["limit", "printer"]))
    def handpay(self, amount, reason):
        self.attempt("handpay", lambda: self.cab.handpay(amount, reason))

    @precondition(lambda self: len(self.cab.active_tilts) < 2)
    @rule(source=st.sampled_from(TiltSource), name=NAMES)
    def tilt(self, source, name):
        self.attempt("tilt", lambda: self.cab.tilt(source, name, f"{source.value} {name} failed"))

    @rule(source=st.sampled_from(TiltSource), name=NAMES)
    def clear_any_tilt(self, source, name):
        self.attempt("clear_tilt", lambda: self.cab.clear_tilt(source, name))

    @precondition(lambda self: self.cab.active_tilts)
    @rule(data=st.data())
    def clear_an_active_tilt(self, data):
        tilt = data.draw(st.sampled_from(self.cab.active_tilts))
        assert self.attempt("clear_tilt", lambda: self.cab.clear_tilt(tilt.source, tilt.name))

    @invariant()
    def state_is_consistent(self):
        cab = self.cab
        assert cab.state in set(CabinetState)
        assert not (cab.state is S.PLAYING and cab.active_tilts)
        if cab.active_tilts:
            assert cab.state in OVERLAYS
        if cab.state is S.TILT:
            assert cab.active_tilts
        assert (cab.interrupted_state is not None) == (cab.state in OVERLAYS)
        assert cab.can_start_round == (cab.state is S.IDLE)
        if cab.can_start_round or cab.can_accept_money:
            assert not cab.active_tilts and cab.state not in (S.DISABLED, S.HANDPAY, S.TILT, S.SERVICE)
        assert cab.round_in_progress == self.round_open                # tilts never lose a round
        assert (cab.handpay_pending is not None) == (S.HANDPAY in (cab.state, cab.interrupted_state))
        if cab.cashout_pending:
            assert cab.round_in_progress

    @invariant()
    def events_replay_to_the_same_state_and_tilts(self):
        for kind, detail in self.log.events[self.seen:]:
            assert kind in EVENT_KINDS
            if kind == "transition":
                assert detail["source"] == self.state_from_events.name
                self.state_from_events = S[detail["dest"]]
            elif kind == "tilt_raised":
                assert detail["tilt"] not in self.tilts_from_events and detail["reason"]
                self.tilts_from_events.add(detail["tilt"])
                assert detail["active"] == len(self.tilts_from_events)
            elif kind == "tilt_cleared":
                self.tilts_from_events.remove(detail["tilt"])
                assert detail["active"] == len(self.tilts_from_events)
        self.seen = len(self.log.events)
        assert self.state_from_events is self.cab.state
        assert self.tilts_from_events == {t.key for t in self.cab.active_tilts}


def _allowed_in(state: CabinetState) -> set[str]:
    return {row.trigger for row in TRANSITIONS if state in row.sources}


CabinetSequences.TestCase.settings = settings(max_examples=150, stateful_step_count=50, deadline=None,
                                              suppress_health_check=[HealthCheck.too_slow])
TestCabinetSequences = CabinetSequences.TestCase


# --- egm diagram cabinet -------------------------------------------------------------------------------
def test_egm_diagram_cabinet_draws_every_state_and_trigger(capsys, tmp_path):
    assert main(["diagram", "cabinet"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "cabinet"') and "__start -> POWER_UP;" in dot
    for state in CabinetState:
        assert f'  {state.name} [label="{state.name}"];' in dot
    for trigger in TRIGGERS:
        assert f'[label="{trigger}' in dot, trigger
    assert 'PLAYING -> CASHOUT [label="complete_round [cashout_pending]"];' in dot
    assert 'TILT -> PLAYING [label="clear_tilt [resume]"];' in dot
    assert 'PLAYING -> PLAYING [label="disable (internal)"];' in dot

    assert main(["diagram", "cabinet", "--format", "mermaid"]) == 0
    mermaid = capsys.readouterr().out
    assert mermaid.startswith("stateDiagram-v2\n    [*] --> POWER_UP\n")
    assert "    HANDPAY --> TILT: tilt\n" in mermaid
    for trigger in TRIGGERS:
        assert f": {trigger}" in mermaid

    out = tmp_path / "cabinet.mmd"
    assert main(["diagram", "cabinet", "--format", "mermaid", "--out", str(out)]) == 0
    assert out.read_text() == mermaid and capsys.readouterr().out == ""


def test_docs_show_the_table_row_for_row():
    from tests.conftest import ROOT

    doc = (ROOT / "docs" / "cabinet.md").read_text("utf-8")
    lines = [line for line in doc.splitlines() if line.startswith("| `")]
    rows = [f"| `{row.trigger}` | {', '.join(s.name for s in row.sources)} | "
            f"{row.dest.name if row.dest else '(stays)'} | {row.guard or ''} |" for row in TRANSITIONS]
    assert [line.replace("|  |", "| |") for line in lines if line.split("`")[1] in TRIGGERS] == \
        [row.replace("|  |", "| |") for row in rows]
