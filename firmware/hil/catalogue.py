"""The suite's catalogue: every test's id, standard, clause, requirement, title, whether it needs an
operator, its expected duration and its targets, read from the ``hil`` markers by collecting the
suite (``pytest --collect-only`` in process, through the plugin). ``egm hil list`` prints it and
docs/hil.md's table is made from it (:func:`markdown_table`)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from firmware.hil.errors import HilError
from firmware.hil.meta import STANDARDS


def collect(suite: Path | None = None) -> list[dict[str, Any]]:
    """The catalogue entries of ``suite`` (default: the shipped suite), in collection order."""
    import pytest

    from firmware.hil.plugin import RunContext
    from firmware.hil.runner import SUITE_DIR, pytest_args

    suite = Path(suite) if suite is not None else SUITE_DIR
    ctx = RunContext()
    with tempfile.TemporaryDirectory(prefix="egm-hil-collect-") as tmp:
        pytest.main(pytest_args(suite, Path(tmp), ["--collect-only"]), plugins=[ctx])
    if ctx.problems:
        raise HilError("; ".join(ctx.problems))
    return [{k: v for k, v in entry.items() if k not in ("nodeid",)} for entry in ctx.catalogue]


def select(entries: list[dict[str, Any]], standard: str | None) -> list[dict[str, Any]]:
    if standard is None:
        return entries
    if standard not in STANDARDS:
        raise HilError(f"--standard is one of {', '.join(STANDARDS)}, not {standard!r}")
    return [e for e in entries if e["standard"] == standard]


def markdown_table(entries: list[dict[str, Any]]) -> str:
    """The catalogue as the Markdown table docs/hil.md holds."""
    lines = ["| id | standard | clause | title | operator | duration (s) | targets |",
             "|---|---|---|---|---|---|---|"]
    for e in entries:
        lines.append(f"| `{e['id']}` | {e['standard']} | {e['clause']} | {e['title']} | "
                     f"{'yes' if e['operator'] else 'no'} | {e['duration_s']} | {', '.join(e['targets'])} |")
    return "\n".join(lines) + "\n"
