"""Doors and tilts (GLI-11): each door opened stops play with a tilt, is recorded with the door and
counted on its door meter, and closing it clears the tilt (docs/cabinet.md, "Tilts"); a door opened
while the power was off is found at power-up; a device fault tilt clears when the fault is fixed,
and an RNG failure tilt only by the technician (``clear-tilt rng:drbg`` with the key on).

Outcomes are read from the terminal (status, the service meters and events); the physical steps go
through ``operator.do`` (the simulators on ``--target sim``).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from firmware.hil.errors import TargetError
from hal.events import Door

DOOR_REQUIREMENT = (
    "Opening any door of the gaming device that gives access to its money, logic or internals must "
    "stop play with a tilt (door open) shown until it closes, be recorded in the event log with "
    "which door it was, and be counted on that door's meter. (Section titles: 'Door Monitoring' / "
    "'Error Conditions'; numbers approximate.)")

DOOR_NAMES = {Door.MAIN: "main door", Door.CASH_BOX: "cash box (drop) door", Door.LOGIC: "logic area door"}


def _tilts(status: dict[str, Any]) -> list[str]:
    return [str(t.get("tilt")) for t in status.get("tilts", [])]


def _events_since(cabinet: Any, seq: int) -> list[dict[str, Any]]:
    """Events logged after ``seq``, oldest first."""
    return list(reversed([e for e in cabinet.events(200) if e.get("seq", 0) > seq]))


def _last_seq(cabinet: Any) -> int:
    events = cabinet.events(1)
    return int(events[0]["seq"]) if events else 0


def _play_refused(cabinet: Any) -> str:
    """The terminal's refusal of DEAL, or "" if it accepted (then the round is played out)."""
    try:
        cabinet.play()
    except TargetError as exc:
        return str(exc)
    cabinet.wait("IDLE", timeout=60)
    return ""


def _credit_for_deal(cabinet: Any, record: Any) -> None:
    """Credits on the meter, so that a refused DEAL is refused for the tilt and not for want of credits."""
    if cabinet.status()["credits_cents"] < 1000:
        record.step("a $10 note, so that DEAL would be accepted but for the tilt")
        cabinet.insert_note(10)


def _cash_out(cabinet: Any, record: Any) -> None:
    record.step("cash out: the cabinet as the test found it")
    cabinet.cashout()
    record.measure("credits at the end", cabinet.status()["credits_cents"], equals=0, unit="cents")


def _deal_refused(cabinet: Any, record: Any, when: str) -> None:
    refusal = _play_refused(cabinet)
    record.note(f"DEAL{' ' + when if when else ''}: {refusal or 'accepted'}")
    record.measure(f"DEAL refused{' ' + when if when else ''}", bool(refusal), equals=True)


def _meters(cabinet: Any) -> dict[str, Any]:
    meters: dict[str, Any] = cabinet.meters()["meters"]
    return meters


def _door_test(door: Door, cabinet: Any, record: Any, operator: Any) -> None:
    name = DOOR_NAMES[door]
    tilt = f"door:{door.value}"
    _credit_for_deal(cabinet, record)
    before = _meters(cabinet)
    seq = _last_seq(cabinet)

    record.step(f"open the {name}")
    operator.do(f"open the {name}", sim=f"door open {door.value}",
                verify=lambda: tilt in _tilts(cabinet.status()))
    status = cabinet.status()
    record.attach("status-door-open", status, "json")
    record.measure("cabinet state with the door open", status["state"], equals="TILT")
    record.measure(f"the {tilt} tilt is active", tilt in _tilts(status), equals=True)
    record.measure("notes accepted with the door open", status.get("accepting_notes"), equals=False)
    _deal_refused(cabinet, record, "with the door open")
    after_open = _meters(cabinet)
    record.measure(f"door_open.{door.value} meter moved by the opening",
                   after_open[f"door_open.{door.value}"] - before[f"door_open.{door.value}"], equals=1)
    record.measure("door_open meter moved by the opening", after_open["door_open"] - before["door_open"], equals=1)
    record.measure("games played while the door was open", after_open["games_played"] - before["games_played"],
                   equals=0)

    record.step(f"close the {name}")
    operator.do(f"close the {name}", sim=f"door close {door.value}",
                verify=lambda: tilt not in _tilts(cabinet.status()))
    status = cabinet.wait("IDLE", timeout=30)
    record.measure("cabinet state after the door closed", status["state"], equals="IDLE")
    events = _events_since(cabinet, seq)
    record.attach("door-events", events, "json")
    record.measure("door_open events naming the door",
                   sum(1 for e in events if e.get("event") == "door_open" and e.get("door") == door.value), equals=1)
    record.measure("door_close events naming the door",
                   sum(1 for e in events if e.get("event") == "door_close" and e.get("door") == door.value), equals=1)
    record.measure(f"{tilt} tilt raised (events)",
                   sum(1 for e in events if e.get("event") == "cabinet.tilt_raised" and e.get("tilt") == tilt), equals=1)
    record.measure(f"{tilt} tilt cleared (events)",
                   sum(1 for e in events if e.get("event") == "cabinet.tilt_cleared" and e.get("tilt") == tilt), equals=1)
    record.step("DEAL again: play goes on")
    played = cabinet.status()["rounds_played"]
    cabinet.play_rounds(1)
    record.measure("rounds played after the door closed", cabinet.status()["rounds_played"] - played, equals=1)
    _cash_out(cabinet, record)


@pytest.mark.hil(id="doors.main", standard="gli-11", clause="4.3 Door Monitoring (approx.)",
                 requirement=DOOR_REQUIREMENT, title="Main door: tilt, event, meter; clears when closed",
                 operator=True, duration=5, targets=("sim", "cabinet"))
def test_main_door(cabinet, record, operator):
    _door_test(Door.MAIN, cabinet, record, operator)


@pytest.mark.hil(id="doors.cash-box", standard="gli-11", clause="4.3 Door Monitoring (approx.)",
                 requirement=DOOR_REQUIREMENT, title="Cash box door: tilt, event, meter; clears when closed",
                 operator=True, duration=5, targets=("sim", "cabinet"))
def test_cash_box_door(cabinet, record, operator):
    _door_test(Door.CASH_BOX, cabinet, record, operator)


@pytest.mark.hil(id="doors.logic", standard="gli-11", clause="4.3 Door Monitoring (approx.)",
                 requirement=DOOR_REQUIREMENT, title="Logic door: tilt, event, meter; clears when closed",
                 operator=True, duration=5, targets=("sim", "cabinet"))
def test_logic_door(cabinet, record, operator):
    _door_test(Door.LOGIC, cabinet, record, operator)


POWER_OFF_REQUIREMENT = (
    "A door opened while the gaming device had no power must be detected when the power returns: "
    "the device tilts as for any open door and records the opening, marked as having happened "
    "while the power was off. (Section title: 'Door Monitoring' with power off; number approximate.)")


@pytest.mark.hil(id="doors.power-off", standard="gli-11", clause="4.3 Door Monitoring (approx.)",
                 requirement=POWER_OFF_REQUIREMENT, title="A door opened while the power was off is found at power-up",
                 operator=True, duration=10, targets=("sim", "cabinet"))
def test_door_opened_while_off(cabinet, record, operator):
    before = _meters(cabinet)
    seq = _last_seq(cabinet)
    record.step("cut the power")
    cabinet.power_cut()

    def door_open_at_power_up() -> None:              # the simulated I/O board starts with it open
        cabinet.start_extra("--sim-door-open", Door.MAIN.value)

    operator.do("with the power off, open the main door; then switch the cabinet on", sim=door_open_at_power_up,
                verify=cabinet.is_up, timeout=90)
    status = cabinet.wait(timeout=10)
    deadline = time.monotonic() + 30
    while status.get("starting") and time.monotonic() < deadline:
        time.sleep(0.2)
        status = cabinet.status()
    record.attach("status-power-up", status, "json")
    record.measure("cabinet state at power-up", status["state"], equals="TILT")
    record.measure("the door:main tilt is active", "door:main" in _tilts(status), equals=True)
    _deal_refused(cabinet, record, "")
    events = _events_since(cabinet, seq)
    record.attach("power-up-events", events, "json")
    record.measure("door_open events of the main door marked while_power_off",
                   sum(1 for e in events if e.get("event") == "door_open" and e.get("door") == "main"
                       and e.get("while_power_off") is True), equals=1)
    after = _meters(cabinet)
    record.measure("door_open.main meter moved", after["door_open.main"] - before["door_open.main"], equals=1)
    record.step("close the main door")
    operator.do("close the main door", sim="door close main", verify=lambda: "door:main" not in _tilts(cabinet.status()))
    record.measure("cabinet state after the door closed", cabinet.wait("IDLE", timeout=30)["state"], equals="IDLE")


FAULT_REQUIREMENT = (
    "A device fault (a note jammed in the bill validator) must stop play with a tilt naming the "
    "fault, and the tilt must clear once the fault is fixed. (Section title: 'Error Conditions'; "
    "number approximate.)")
RNG_REQUIREMENT = (
    "A failure of the random number generator must stop play, and play may only resume after the "
    "technician has had the generator tested again and it passed; fixing the cause alone does not "
    "resume play. (Section titles: 'Error Conditions' / RNG failure; numbers approximate.)")


@pytest.mark.hil(id="tilts.clear.device", standard="gli-11", clause="4.7 Error Conditions (approx.)",
                 requirement=FAULT_REQUIREMENT, title="A validator jam tilts and clears when fixed",
                 operator=True, duration=5, targets=("sim", "cabinet"))
def test_device_fault_tilt(cabinet, record, operator):
    tilt = "device_fault:bill_validator.jam"
    _credit_for_deal(cabinet, record)
    seq = _last_seq(cabinet)
    record.step("jam the bill validator")
    operator.do("put a jammed note in the bill validator (leave it stuck)", sim="validator jam",
                verify=lambda: tilt in _tilts(cabinet.status()))
    status = cabinet.status()
    record.attach("status-jam", status, "json")
    record.measure("cabinet state with the jam", status["state"], equals="TILT")
    record.measure(f"the {tilt} tilt is active", tilt in _tilts(status), equals=True)
    record.measure("notes accepted with the jam", status.get("accepting_notes"), equals=False)
    _deal_refused(cabinet, record, "")
    record.step("clear the jam")
    operator.do("clear the jam from the bill validator", sim="validator clear",
                verify=lambda: tilt not in _tilts(cabinet.status()))
    record.measure("cabinet state after the jam was cleared", cabinet.wait("IDLE", timeout=30)["state"], equals="IDLE")
    events = _events_since(cabinet, seq)
    record.attach("jam-events", events, "json")
    record.measure("tilt raised and cleared (events)",
                   [e["event"] for e in events if e.get("tilt") == tilt and e.get("event", "").startswith("cabinet.tilt_")],
                   equals=["cabinet.tilt_raised", "cabinet.tilt_cleared"])
    _cash_out(cabinet, record)


@pytest.mark.hil(id="tilts.clear.rng", standard="gli-11", clause="4.7 Error Conditions (approx.)",
                 requirement=RNG_REQUIREMENT, title="An RNG failure tilt clears only by the technician",
                 operator=False, duration=8, targets=("sim",))
def test_rng_tilt(cabinet, record):
    tilt = "rng:drbg"
    _credit_for_deal(cabinet, record)
    seq = _last_seq(cabinet)
    record.step("the simulated entropy source stuck, then a reseed: the health test fails")
    cabinet.sim("rng", "entropy", "stuck")
    try:
        cabinet.sim("rng", "reseed")
    finally:
        cabinet.sim("rng", "entropy", "ok")
    status = cabinet.status()
    record.attach("status-rng", status, "json")
    record.measure(f"the {tilt} tilt is active", tilt in _tilts(status), equals=True)
    record.measure("cabinet state", status["state"], equals="TILT")
    record.step("the entropy source is healthy again; wait 3 s: the tilt must stay")
    time.sleep(3)
    record.measure(f"the {tilt} tilt is still active with the source fixed", tilt in _tilts(cabinet.status()),
                   equals=True)
    _deal_refused(cabinet, record, "")
    record.step("the attendant tries clear-tilt: refused")
    try:
        cabinet.service("clear-tilt", tilt, role="attendant")
        attendant = ""
    except TargetError as exc:
        attendant = str(exc)
    record.note(f"attendant's clear-tilt: {attendant or 'accepted'}")
    record.measure("attendant's clear-tilt refused", bool(attendant), equals=True)
    record.step("the technician: key on, clear-tilt rng:drbg (a fresh instantiation must pass), key off")
    cabinet.sim("key", "audit", "on")
    try:
        cabinet.wait("SERVICE", timeout=10)
        cabinet.service("clear-tilt", tilt, role="technician")
    finally:
        cabinet.sim("key", "audit", "off")
    status = cabinet.wait("IDLE", timeout=30)
    record.measure("cabinet state after the technician's clear-tilt", status["state"], equals="IDLE")
    events = _events_since(cabinet, seq)
    record.attach("rng-events", events, "json")
    record.measure("rng_failure events", sum(1 for e in events if e.get("event") == "rng_failure"), low=1)
    record.measure(f"{tilt} tilt cleared (events)",
                   sum(1 for e in events if e.get("event") == "cabinet.tilt_cleared" and e.get("tilt") == tilt), equals=1)
    _cash_out(cabinet, record)
