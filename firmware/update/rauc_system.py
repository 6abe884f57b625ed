"""RAUC on a partitioned cabinet, through its command line (``rauc status``, ``mark-*``, ``install``).

``rauc`` talks to ``rauc service`` (Debian's ``rauc-service``, D-Bus activated) on the system bus;
the service asks the bootloader (GRUB's boot counter on a cabinet, ``deploy/update/system.conf``)
which slot was booted, which is primary and which are good. The slot's installed version is from
RAUC's status file (``bundle.version``, written by ``rauc install``).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from firmware.update.bundle import rauc, rauc_error
from firmware.update.errors import UpdateError

TIMEOUT_S = 60
INSTALL_TIMEOUT_S = 1800


@dataclass(frozen=True)
class RaucSlot:
    name: str              #: RAUC's slot name, e.g. appfs.0
    bootname: str          #: the bootloader's name, A or B
    version: str | None    #: the bundle version installed in it (None: not known to RAUC)
    good: bool             #: the bootloader's good/bad for it


@dataclass(frozen=True)
class RaucStatus:
    booted: str                      #: the booted slot's bootname
    primary: str | None              #: the bootname the next boot tries first
    slots: dict[str, RaucSlot]       #: by bootname

    @property
    def booted_slot(self) -> RaucSlot:
        return self.slots[self.booted]

    def other(self, bootname: str) -> RaucSlot:
        others = [s for name, s in self.slots.items() if name != bootname]
        if len(others) != 1:
            raise UpdateError(f"RAUC shows {len(self.slots)} bootable slots; an A/B pair has 2")
        return others[0]


def _rauc(*args: str, timeout: float = TIMEOUT_S) -> str:
    try:
        done = subprocess.run([rauc(), *args], capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise UpdateError(f"rauc {args[0]} did not finish in {timeout:.0f} s") from None
    if done.returncode != 0:
        raise UpdateError(f"rauc {' '.join(args[:2])}: {rauc_error(done.stderr)}")
    return done.stdout


def parse_status(text: str) -> RaucStatus:
    """``rauc status --detailed --output-format=json`` as a :class:`RaucStatus`."""
    try:
        doc = json.loads(text)
        slots: dict[str, RaucSlot] = {}
        primary = None
        for entry in doc["slots"]:
            for name, slot in entry.items():
                bootname = slot.get("bootname")
                if not bootname:
                    continue
                bundle = (slot.get("slot_status") or {}).get("bundle") or {}
                version = bundle.get("version")
                slots[bootname] = RaucSlot(name, bootname, str(version) if version else None,
                                           slot.get("boot_status") == "good")
                if name == doc.get("boot_primary"):
                    primary = bootname
        booted = str(doc["booted"])
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UpdateError("rauc status: not the JSON it should print") from None
    if booted not in slots:
        raise UpdateError(f"RAUC booted {booted!r}, not one of the A/B slots {sorted(slots)}")
    return RaucStatus(booted, primary, slots)


def status() -> RaucStatus:
    return parse_status(_rauc("status", "--detailed", "--output-format=json"))


def mark(verdict: str, which: str = "booted") -> None:
    """``rauc status mark-good|mark-bad|mark-active booted|other``."""
    if verdict not in ("good", "bad", "active") or which not in ("booted", "other"):
        raise UpdateError(f"cannot mark {which} {verdict}")
    _rauc("status", f"mark-{verdict}", which)


def install(bundle: Path) -> None:
    """``rauc install``: RAUC writes the other slot and makes it primary (its own checks again)."""
    _rauc("install", str(Path(bundle).resolve()), timeout=INSTALL_TIMEOUT_S)
