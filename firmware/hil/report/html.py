"""``report.html``: the run as a lab engineer reads and signs it (a jinja2 template,
``templates/report.html.j2``). Every link and image points at a file the run wrote (evidence paths
relative to the report folder, checked to exist); a section with nothing to show says "none"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from firmware.hil.meta import STANDARDS
from firmware.hil.record import VERDICTS, RunRecord


def _env() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("firmware.hil.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"]),
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render_html(run: RunRecord, folder: Path) -> str:
    """The report's HTML; evidence files that do not exist in ``folder`` are listed as missing."""
    tests = []
    for t in run.tests:
        evidence = [{"name": e.name, "path": e.path, "kind": e.kind, "exists": (folder / e.path).is_file(),
                     "preview": _preview(folder / e.path) if e.kind == "text" else ""} for e in t.evidence]
        tests.append({"t": t, "evidence": evidence, "anchor": "t-" + t.id.replace(".", "-").replace("[", "-")
                      .replace("]", "")})
    not_run = [t for t in run.tests if t.verdict in ("SKIPPED", "BLOCKED")]
    return str(_env().get_template("report.html.j2").render(
        run=run, counts=run.counts(), verdicts=VERDICTS, tests=tests, not_run=not_run, standards=STANDARDS,
        pending=[i for i in run.planned if run.test(i) is None]))


#: A text evidence file is shown in the report up to this many lines (the rest behind its link).
PREVIEW_LINES = 30


def _preview(path: Path) -> str:
    """The first :data:`PREVIEW_LINES` lines of a text evidence file ("" if none or unreadable)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n") for _, line in zip(range(PREVIEW_LINES + 1), f, strict=False)]
    except OSError:
        return ""
    more = len(lines) > PREVIEW_LINES
    return "\n".join(lines[:PREVIEW_LINES]) + ("\n..." if more else "")


def write_html(run: RunRecord, folder: Path) -> Path:
    path = folder / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_html(run, folder), encoding="utf-8")
    os.replace(tmp, path)
    return path
