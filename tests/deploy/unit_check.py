"""``systemd-analyze verify`` on our unit files without the package installed: the units are
copied into a throw-away root (``--root``) holding the host's own units (the targets ours name),
an executable stand-in at every path an ``Exec*=`` line runs, and a stub for each unit ours depend
on that the host lacks (``seatd.service`` on a machine without seatd). Every line it prints is a
finding (it exits 0 on a misspelt key or a bad value, and only warns)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

SYSTEM_UNITS = Path("/usr/lib/systemd/system")
#: Units ours depend on that a build machine may not have, with a minimal stand-in.
STUB_UNITS = {"seatd.service": "[Unit]\nDescription=stand-in\n[Service]\nExecStart=/bin/true\n"}


def exec_paths(unit_text: str) -> set[str]:
    """The programs the unit's ``Exec*=`` lines run (their ``-@:+!`` prefixes dropped)."""
    paths = set()
    for line in unit_text.splitlines():
        m = re.match(r"\s*Exec\w*=\s*[-@:+!]*(\S+)", line)
        if m:
            paths.add(m.group(1))
    return paths


def verify(units: list[Path], root: Path) -> tuple[int, str]:
    """(exit status, what it printed) of ``systemd-analyze verify`` of ``units`` in a root at ``root``."""
    unit_dir = root / "usr/lib/systemd/system"
    shutil.copytree(SYSTEM_UNITS, unit_dir, symlinks=True, dirs_exist_ok=True)
    for name, text in STUB_UNITS.items():
        if not (unit_dir / name).exists():
            (unit_dir / name).write_text(text)
    for unit in units:
        shutil.copy(unit, unit_dir / unit.name)
        for program in exec_paths(unit.read_text()) | {"/bin/true"}:
            stand_in = root / program.lstrip("/")
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.write_text("#!/bin/sh\nexit 0\n")
            stand_in.chmod(0o755)
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", f"--root={root}", *[u.name for u in units]],
                          capture_output=True, text=True, timeout=60)
    return done.returncode, (done.stdout + done.stderr).strip()
