"""The field update on a partitioned cabinet: the same flow and events as the directory backend,
with RAUC keeping the slots (``[update] backend = "rauc"``, docs/update.md).

RAUC's bootloader knows good and bad, not *trial*, and GRUB's boot counter leaves every booted
slot not-good until ``rauc status mark-good`` (at every boot). So: a booted slot is on **trial**
when the bootloader does not hold it good and it is not the slot and version last committed
(:mod:`.rauc_state`); the committed one booting again is told good without an event. The moves
are checked against the same table (:data:`firmware.update.machine.TRANSITIONS`); RAUC is told
``mark-good`` (commit), ``mark-bad`` (the self-test failed; the technician's rollback of a booted
trial) or ``mark-active`` (the technician's rollback of an installed update not yet booted).
"""

from __future__ import annotations

from pathlib import Path

from firmware.update import bundle as rauc_bundle
from firmware.update import rauc_system
from firmware.update.errors import UpdateError, UpdateRefused
from firmware.update.install import Installed
from firmware.update.machine import next_state
from firmware.update.rauc_state import RaucState, RaucStateFile
from firmware.update.rauc_system import RaucSlot, RaucStatus
from firmware.update.version import check_newer

COMMITTED = "attract reached with the self-tests passed"


def _is_committed(state: RaucState, slot: RaucSlot) -> bool:
    return state.committed == {"slot": slot.bootname, "version": slot.version}


def state_of(state: RaucState, status: RaucStatus, slot: RaucSlot) -> str:
    """The slot's state in the table's words. Booted: good if it is the committed version (or
    nothing was ever committed: the factory install), else trial. Not booted: trial if it is the
    primary, good to the bootloader and not committed (installed, tried at the next boot); else
    the bootloader's good or bad."""
    booted = slot.bootname == status.booted
    if _is_committed(state, slot) or (booted and state.committed is None):
        return "good"
    if booted or (slot.good and status.primary == slot.bootname):
        return "trial"
    return "good" if slot.good else "bad"


def _fall_back(log: RaucState, status: RaucStatus, failed: RaucSlot, reason: str) -> str:
    other = status.other(failed.bootname)
    log.record("software.update_rolled_back", version=failed.version, slot=failed.bootname, reason=reason,
               to_version=other.version, to_slot=other.bootname)
    return other.bootname


def _commit(log: RaucState, slot: RaucSlot, why: str) -> None:
    next_state("trial", "commit")
    rauc_system.mark("good", "booted")
    log.committed = {"slot": slot.bootname, "version": slot.version}
    log.record("software.update_committed", version=slot.version, slot=slot.bootname, why=why)


def power_up_report(file: RaucStateFile, *, self_test_passed: bool, at_attract: bool) -> str:
    """As :func:`firmware.update.boot.power_up_report`, with RAUC told good or bad. The committed
    version is told good at every power-up (GRUB's counter); the first power-up ever takes the
    booted slot as the committed (factory) one."""
    status = rauc_system.status()
    slot = status.booted_slot
    with file.locked() as log:
        state = state_of(log, status, slot)
        log.record("software.installed", version=slot.version, slot=slot.bootname, state=state)
        if state == "good":
            if log.committed is None:
                log.committed = {"slot": slot.bootname, "version": slot.version}
            if not slot.good:
                rauc_system.mark("good", "booted")
            return "running"
        if not self_test_passed:
            next_state(state, "selftest_failed")
            rauc_system.mark("bad", "booted")
            _fall_back(log, status, slot, "self-test failed")
            return "rolled_back"
        if not at_attract:
            return "trial"
        _commit(log, slot, COMMITTED)
        return "committed"


def attract_reached(file: RaucStateFile) -> bool:
    status = rauc_system.status()
    with file.locked() as log:
        if state_of(log, status, status.booted_slot) != "trial":
            return False
        _commit(log, status.booted_slot, COMMITTED)
    return True


def commit(file: RaucStateFile) -> str:
    """The technician's commit of the booted trial."""
    status = rauc_system.status()
    with file.locked() as log:
        if state_of(log, status, status.booted_slot) != "trial":
            raise UpdateError("no trial slot runs now: nothing to commit")
        _commit(log, status.booted_slot, "technician")
    return status.booted


def rollback(file: RaucStateFile) -> str:
    """The technician's rollback: a booted trial is marked bad; an installed update not yet booted
    (the other slot primary) gives way to the booted slot. Returns the slot the next boot runs."""
    status = rauc_system.status()
    booted, other = status.booted_slot, status.other(status.booted)
    with file.locked() as log:
        if state_of(log, status, booted) == "trial":
            next_state("trial", "rollback")
            rauc_system.mark("bad", "booted")
            return _fall_back(log, status, booted, "technician")
        if status.primary != other.bootname:
            raise UpdateError("no slot is on trial: nothing to roll back (a committed version is "
                              "replaced only by a newer bundle)")
        next_state("trial", "rollback")         # installed, made primary, not booted yet
        rauc_system.mark("active", "booted")
        rauc_system.mark("bad", "other")
        log.record("software.update_rolled_back", version=other.version, slot=other.bootname,
                   reason="technician", to_version=booted.version, to_slot=booted.bootname)
        return booted.bootname


def install(file: RaucStateFile, bundle: Path, keyring: Path, *, crl: Path | None) -> Installed:
    """Our checks (signature and CRL, compatible, strictly newer than the booted version), then
    ``rauc install``; a refusal is recorded and leaves RAUC's slots untouched."""
    bundle = Path(bundle)
    if not bundle.is_file():
        raise UpdateError(f"{bundle} is not a file")
    status = rauc_system.status()
    booted = status.booted_slot
    with file.locked() as log:
        if state_of(log, status, booted) == "trial":
            raise UpdateError(f"slot {booted.bootname} runs on trial: commit or roll it back before another update")
        target = status.other(booted.bootname)
        log.record("software.update_started", bundle=bundle.name[:80], previous=booted.version,
                   slot=target.bootname)
    refusal: UpdateRefused | None = None
    try:
        info = rauc_bundle.check(bundle, keyring, crl=crl)
        check_newer(info.version, booted.version)
        rauc_system.install(bundle)
    except UpdateRefused as exc:
        refusal = exc
    except UpdateError as exc:
        refusal = UpdateRefused("install-failed", str(exc))
    with file.locked() as log:
        if refusal is not None:
            log.record("software.update_refused", reason=refusal.reason, detail=str(refusal)[:200],
                       bundle=bundle.name[:80])
        else:
            log.record("software.update_trial", version=info.version, slot=target.bootname, attempts=None,
                       signer=info.signer[:120])
    if refusal is not None:
        raise refusal
    return Installed(target.bootname, info.version, booted.version, 0, info.signer)
