"""``run.json``: the run record as JSON (schema ``egm-hil-run/1``; docs/hil.md lists the fields)."""

from __future__ import annotations

from pathlib import Path

from firmware.hil.record import RunRecord


def write_json(run: RunRecord, folder: Path) -> Path:
    return run.save(folder)
