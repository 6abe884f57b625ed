"""The boot step and the commit: RAUC's bootloader contract (primary, good/bad, boot attempts).

:func:`boot` runs before the terminal (``egm update boot``, ``ExecStartPre=`` of the terminal's
unit): it picks the slot to run, uses one attempt of a trial slot, and falls back to the other
slot when the attempts are spent (the trial never reached attract: a crash, a hang, a watchdog
reset). :func:`power_up_report` runs in the terminal after its self-test: it records the version
that runs, commits a trial slot that reached attract with the self-tests passed, and rolls back one
that failed them. :func:`commit` and :func:`rollback` are the technician's.
"""

from __future__ import annotations

from dataclasses import dataclass

from firmware.update.errors import UpdateError
from firmware.update.slots import SlotStore, UpdateState


@dataclass(frozen=True)
class Booted:
    slot: str
    version: str | None
    state: str
    attempts_left: int
    rolled_back: bool


def _fall_back(state: UpdateState, failed: str, reason: str) -> str:
    """Make the other slot primary after ``failed`` went bad; record the rollback."""
    other = state.other(failed)
    if state.slots[other].state != "good":
        raise UpdateError(f"slot {failed} failed ({reason}) and slot {other} is {state.slots[other].state}: "
                          "no slot to boot")
    state.primary = other
    state.attempts = 0
    state.record("software.update_rolled_back", version=state.slots[failed].version, slot=failed,
                 reason=reason, to_version=state.slots[other].version, to_slot=other)
    return other


def boot(store: SlotStore) -> Booted:
    """Choose the slot this boot runs and point ``current`` at it."""
    rolled_back = False
    with store.locked() as state:
        primary = state.primary
        slot = state.slots[primary]
        if slot.state == "trial":
            if state.attempts > 0:
                state.attempts -= 1
                state.move(primary, "boot_trial")
                chosen = primary
            else:
                state.move(primary, "attempts_exhausted")
                chosen = _fall_back(state, primary, "did not reach attract")
                rolled_back = True
        elif slot.state == "good":
            chosen = primary
        else:
            chosen = _fall_back(state, primary, f"slot is {slot.state}")
            rolled_back = True
        state.booted = chosen
        store.point_current(chosen)
        return Booted(chosen, state.slots[chosen].version, state.slots[chosen].state, state.attempts,
                      rolled_back)


def power_up_report(store: SlotStore, *, self_test_passed: bool, at_attract: bool) -> str:
    """Record the running version; commit or roll back a trial. Returns what happened in a word:
    ``committed``, ``rolled_back`` (reboot to run the old slot), ``trial`` (not at attract yet) or
    ``running``."""
    with store.locked() as state:
        slot = state.booted
        if slot is None:
            raise UpdateError("no slot was booted (egm update boot runs before the terminal)")
        info = state.slots[slot]
        state.record("software.installed", version=info.version, slot=slot, state=info.state)
        if info.state != "trial":
            return "running"
        if not self_test_passed:
            state.move(slot, "selftest_failed")
            _fall_back(state, slot, "self-test failed")
            return "rolled_back"
        if not at_attract:
            return "trial"
        _commit(state, slot, "attract reached with the self-tests passed")
        return "committed"


def attract_reached(store: SlotStore) -> bool:
    """The terminal reached attract later than power-up (a tilt cleared) with its self-tests
    passed: commit the trial that runs. Returns whether one was committed."""
    with store.locked() as state:
        slot = state.booted
        if slot is None or state.slots[slot].state != "trial":
            return False
        _commit(state, slot, "attract reached with the self-tests passed")
        return True


def _commit(state: UpdateState, slot: str, why: str) -> None:
    state.move(slot, "commit")
    state.primary = slot
    state.attempts = 0
    state.record("software.update_committed", version=state.slots[slot].version, slot=slot, why=why)


def commit(store: SlotStore) -> str:
    """The technician's commit of the trial slot that runs now. Returns the slot."""
    with store.locked() as state:
        slot = state.booted
        if slot is None or state.slots[slot].state != "trial":
            raise UpdateError("no trial slot runs now: nothing to commit")
        _commit(state, slot, "technician")
        return slot


def rollback(store: SlotStore) -> str:
    """The technician's rollback of a trial (installed or running): the next boot runs the other
    slot. Returns the slot the next boot runs."""
    with store.locked() as state:
        trial = next((name for name, s in state.slots.items() if s.state == "trial"), None)
        if trial is None:
            raise UpdateError("no slot is on trial: nothing to roll back (a committed version is "
                              "replaced only by a newer bundle)")
        state.move(trial, "rollback")
        return _fall_back(state, trial, "technician")
