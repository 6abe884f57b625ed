"""The field update on a partitioned cabinet: the same flow and events as the directory backend,
with RAUC keeping the slots (``[update] backend = "rauc"``, docs/update.md).

RAUC's bootloader knows good and bad, not *trial*: a booted slot the bootloader does not hold good
is on trial (GRUB boots a slot on its boot counter until ``rauc status mark-good``). The moves
are checked against the same table (:data:`firmware.update.machine.TRANSITIONS`); RAUC is told
``mark-good`` (commit), ``mark-bad`` (the self-test failed, the technician's rollback) or
``mark-active`` (the technician's rollback of an installed, not yet booted update).
"""

from __future__ import annotations

from pathlib import Path

from firmware.update import bundle as rauc_bundle
from firmware.update import rauc_system
from firmware.update.errors import UpdateError, UpdateRefused
from firmware.update.install import Installed
from firmware.update.machine import next_state
from firmware.update.pending import Pending, PendingFile
from firmware.update.rauc_system import RaucSlot, RaucStatus
from firmware.update.version import check_newer

COMMITTED = "attract reached with the self-tests passed"


def state_of(slot: RaucSlot, booted: bool) -> str:
    """The slot's state in the table's words: good, trial (booted, not good yet) or bad."""
    if slot.good:
        return "good"
    return "trial" if booted else "bad"


def _fall_back(log: Pending, status: RaucStatus, failed: RaucSlot, reason: str) -> str:
    other = status.other(failed.bootname)
    log.record("software.update_rolled_back", version=failed.version, slot=failed.bootname, reason=reason,
               to_version=other.version, to_slot=other.bootname)
    return other.bootname


def _commit(log: Pending, slot: RaucSlot, why: str) -> None:
    next_state("trial", "commit")
    rauc_system.mark("good", "booted")
    log.record("software.update_committed", version=slot.version, slot=slot.bootname, why=why)


def power_up_report(events: PendingFile, *, self_test_passed: bool, at_attract: bool) -> str:
    """As :func:`firmware.update.boot.power_up_report`, with RAUC told good or bad."""
    status = rauc_system.status()
    slot = status.booted_slot
    state = state_of(slot, booted=True)
    with events.locked() as log:
        log.record("software.installed", version=slot.version, slot=slot.bootname, state=state)
        if state != "trial":
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


def attract_reached(events: PendingFile) -> bool:
    status = rauc_system.status()
    slot = status.booted_slot
    if state_of(slot, booted=True) != "trial":
        return False
    with events.locked() as log:
        _commit(log, slot, COMMITTED)
    return True


def commit(events: PendingFile) -> str:
    """The technician's commit of the booted trial."""
    slot = rauc_system.status().booted_slot
    if slot.good:
        raise UpdateError("no trial slot runs now: nothing to commit")
    with events.locked() as log:
        _commit(log, slot, "technician")
    return slot.bootname


def rollback(events: PendingFile) -> str:
    """The technician's rollback: a booted trial is marked bad; an installed update not yet booted
    (the other slot primary) gives way to the booted slot. Returns the slot the next boot runs."""
    status = rauc_system.status()
    booted, other = status.booted_slot, status.other(status.booted)
    with events.locked() as log:
        if not booted.good:
            next_state("trial", "rollback")
            rauc_system.mark("bad", "booted")
            return _fall_back(log, status, booted, "technician")
        if status.primary == other.bootname and other.good:
            raise UpdateError(f"slot {other.bootname} is committed: nothing to roll back "
                              "(a committed version is replaced only by a newer bundle)")
        if status.primary != other.bootname:
            raise UpdateError("no slot is on trial: nothing to roll back")
        next_state("trial", "rollback")
        rauc_system.mark("active", "booted")
        rauc_system.mark("bad", "other")
        log.record("software.update_rolled_back", version=other.version, slot=other.bootname,
                   reason="technician", to_version=booted.version, to_slot=booted.bootname)
        return booted.bootname


def install(events: PendingFile, bundle: Path, keyring: Path, *, crl: Path | None) -> Installed:
    """Our checks (signature and CRL, compatible, strictly newer than the booted version), then
    ``rauc install``; a refusal is recorded and leaves RAUC's slots untouched."""
    bundle = Path(bundle)
    if not bundle.is_file():
        raise UpdateError(f"{bundle} is not a file")
    status = rauc_system.status()
    booted = status.booted_slot
    if not booted.good:
        raise UpdateError(f"slot {booted.bootname} runs on trial: commit or roll it back before another update")
    target = status.other(booted.bootname)
    with events.locked() as log:
        log.record("software.update_started", bundle=bundle.name[:80], previous=booted.version,
                   slot=target.bootname)
    try:
        info = rauc_bundle.check(bundle, keyring, crl=crl)
        check_newer(info.version, booted.version)
    except UpdateRefused as exc:
        with events.locked() as log:
            log.record("software.update_refused", reason=exc.reason, detail=str(exc)[:200], bundle=bundle.name[:80])
        raise
    try:
        rauc_system.install(bundle)
    except UpdateError as exc:
        with events.locked() as log:
            log.record("software.update_refused", reason="install-failed", detail=str(exc)[:200],
                       bundle=bundle.name[:80])
        raise
    with events.locked() as log:
        log.record("software.update_trial", version=info.version, slot=target.bootname, attempts=None,
                   signer=info.signer[:120])
    return Installed(target.bootname, info.version, booted.version, 0, info.signer)
