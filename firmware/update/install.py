"""``egm update install``: a checked bundle written into the inactive slot, to be booted on trial.

Order (docs/update.md): the bundle is copied to a private work directory; RAUC verifies its
signature against the casino CA (:func:`firmware.update.bundle.check`); the version must be newer
than the running one; the payload is extracted, its SHA-256 checked and unpacked into a staging
directory. Only then is the inactive slot replaced (``installing`` -> ``trial``) and made primary
with the boot counter set. A refusal at any step before that leaves both slots as they were and
is recorded as ``software.update_refused``.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from firmware.update import bundle as rauc_bundle
from firmware.update.errors import UpdateError, UpdateRefused
from firmware.update.slots import SlotStore, UpdateState
from firmware.update.tree import clear, unpack
from firmware.update.version import check_newer

#: Boot attempts a trial slot gets before the boot step falls back (RAUC/barebox's default is 3).
DEFAULT_ATTEMPTS = 3


@dataclass(frozen=True)
class Installed:
    slot: str
    version: str
    previous: str | None
    attempts: int
    signer: str


def install(store: SlotStore, bundle: Path, keyring: Path, *, attempts: int = DEFAULT_ATTEMPTS,
            crl: Path | None = None) -> Installed:
    """Install ``bundle`` into the inactive slot; :class:`UpdateRefused` (recorded) if refused.
    With ``crl`` a signer the casino CA revoked is refused."""
    if attempts < 1:
        raise UpdateError("the boot attempts must be at least 1")
    bundle = Path(bundle)
    if not bundle.is_file():
        raise UpdateError(f"{bundle} is not a file")
    refused: UpdateRefused | None = None
    with store.locked() as state:
        try:
            return _install(store, state, bundle, Path(keyring), attempts, crl)
        except UpdateRefused as exc:
            state.record("software.update_refused", reason=exc.reason, detail=str(exc)[:200],
                         bundle=bundle.name[:80])
            refused = exc
    raise refused


def running_version(state: UpdateState) -> str | None:
    """The version of the slot that runs now (before the first boot: the primary's)."""
    return state.slots[state.booted or state.primary].version


def _install(store: SlotStore, state: UpdateState, bundle: Path, keyring: Path, attempts: int,
             crl: Path | None) -> Installed:
    active = state.booted or state.primary
    if state.slots[active].state == "trial":
        raise UpdateError(f"slot {active} runs on trial: commit or roll it back before another update")
    target = state.other(active)
    previous = running_version(state)
    state.record("software.update_started", bundle=bundle.name[:80], previous=previous, slot=target)
    work = store.dir / "work"
    clear(work)
    try:
        private = Path(tempfile.mkdtemp(prefix="bundle-", dir=work))
        copy = private / "update.raucb"
        shutil.copyfile(bundle, copy)                  # RAUC reads our copy, which nobody else writes
        info = rauc_bundle.check(copy, keyring, crl=crl)
        check_newer(info.version, previous)
        payload = rauc_bundle.extract(copy, keyring, private / "content", info, crl=crl)
        staging = work / "staging"
        unpack(payload, staging)
        state.move(target, "install_begin")
        store.save(state)                              # a power cut from here leaves it installing
        slot_dir = store.slot_dir(target)
        if slot_dir.exists():
            shutil.rmtree(slot_dir)
        staging.rename(slot_dir)
        state.slots[target].version = info.version
        state.move(target, "install_done")
        state.primary = target
        state.attempts = attempts
        state.record("software.update_trial", version=info.version, slot=target, attempts=attempts,
                     signer=info.signer[:120])
        return Installed(target, info.version, previous, attempts, info.signer)
    finally:
        shutil.rmtree(work, ignore_errors=True)
