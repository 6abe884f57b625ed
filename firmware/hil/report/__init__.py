"""The run's reports, drawn from its :class:`~firmware.hil.record.RunRecord`: ``run.json`` (the
record itself, :mod:`.json_report`), ``junit.xml`` for CI (:mod:`.junit`) and ``report.html`` for
the lab engineer who reads and signs it (:mod:`.html`)."""

from __future__ import annotations

from pathlib import Path

from firmware.hil.record import RunRecord


def write_reports(run: RunRecord, folder: Path) -> dict[str, Path]:
    """Write the three reports into ``folder``; their paths by kind."""
    from firmware.hil.report.html import write_html
    from firmware.hil.report.json_report import write_json
    from firmware.hil.report.junit import write_junit

    return {"json": write_json(run, folder), "junit": write_junit(run, folder), "html": write_html(run, folder)}
