"""A simulated cabinet with one thing broken on purpose, for showing that a HIL test can fail.

:func:`broken_copy` copies the installed packages (the files ``egm software verify`` covers) into a
folder and makes exact text replacements in them, each of which must match exactly once (so a
change to the product that moves the code breaks the demonstration loudly instead of silently
testing nothing). :func:`run_hil` runs ``egm hil run --target sim`` from such a copy (``PYTHONPATH``
and the working directory are the copy, so the runner and the terminal it starts are both the broken
software; the copy runs in development mode, which re-signs whatever is in its tree) and returns the
exit code and the run record (``run.json``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from firmware.cabinet.software import DEFAULT_PACKAGES, default_root


def broken_copy(tmp_path: Path, edits: dict[str, tuple[str, str]]) -> Path:
    """A copy of the installed packages under ``tmp_path/software`` with ``edits`` applied:
    ``{"firmware/ledger/meters.py": (old, new)}``; each ``old`` must occur exactly once."""
    software = tmp_path / "software"
    for package in DEFAULT_PACKAGES:
        shutil.copytree(default_root() / package, software / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for relative, (old, new) in edits.items():
        path = software / relative
        text = path.read_text()
        count = text.count(old)
        assert count == 1, f"{relative}: the text to break occurs {count} times, not once: {old!r}"
        path.write_text(text.replace(old, new))
    return software


def run_hil(software: Path | None, tmp_path: Path, *only: str, timeout: float = 600) -> tuple[int, dict[str, Any]]:
    """``egm hil run --target sim --only ONLY... --report tmp_path/report`` from ``software`` (None:
    this checkout); (exit code, run.json)."""
    report = tmp_path / "report"
    env = dict(os.environ)
    if software is not None:
        env["PYTHONPATH"] = str(software)
    done = subprocess.run([sys.executable, "-m", "firmware.cli", "hil", "run", "--target", "sim",
                           "--report", str(report), "--only", *only],
                          capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=software if software is not None else None)
    run_json = report / "run.json"
    assert run_json.exists(), f"no run.json (exit {done.returncode}): {done.stdout[-2000:]}{done.stderr[-2000:]}"
    record = json.loads(run_json.read_text())
    for test in record["tests"]:          # shown by pytest when the calling test fails
        print(f"{test['id']}: {test['verdict']} {test.get('reason') or ''}")
    return done.returncode, record


def verdicts(record: dict[str, Any]) -> dict[str, str]:
    """Test id -> verdict, from a run record."""
    return {test["id"]: test["verdict"] for test in record["tests"]}
