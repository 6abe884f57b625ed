"""The ``hil`` marker: what each suite test evidences, checked when the suite is collected.

``@pytest.mark.hil(id=, standard=, clause=, requirement=, title=, operator=, duration=, targets=)``,
one per test (see docs/hil.md). :func:`test_meta` reads and checks it; a missing or malformed
marker is one clear problem line naming the test.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

STANDARDS: dict[str, str] = {
    "gli-11": "GLI-11 v3.0 Gaming Devices",
    "gli-16": "GLI-16 v3.0 Cashless Systems and Technologies (TITO)",
    "gli-24": "GLI-24 v1.3 Electronic Table Game Systems",
}
TARGET_KINDS: tuple[str, ...] = ("sim", "cabinet")
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*\Z")
REQUIRED = ("id", "standard", "clause", "requirement", "title")
KNOWN = {*REQUIRED, "operator", "duration", "targets"}


class MetaError(ValueError):
    """A test's ``hil`` marker is missing or malformed."""


def check_meta(kwargs: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The catalogue entry of a marker's keyword arguments; MetaError naming ``where``."""
    unknown = set(kwargs) - KNOWN
    if unknown:
        raise MetaError(f"{where}: unknown hil marker argument(s): {', '.join(sorted(unknown))}")
    for key in REQUIRED:
        if not isinstance(kwargs.get(key), str) or not kwargs[key].strip():
            raise MetaError(f"{where}: the hil marker needs {key}= (a non-empty string)")
    test_id = kwargs["id"]
    if not ID_PATTERN.match(test_id):
        raise MetaError(f"{where}: id {test_id!r} is lower-case words separated by dots (e.g. rng.kat)")
    if kwargs["standard"] not in STANDARDS:
        raise MetaError(f"{where}: standard {kwargs['standard']!r} is one of {', '.join(STANDARDS)}")
    operator = kwargs.get("operator", False)
    if not isinstance(operator, bool):
        raise MetaError(f"{where}: operator= is True or False")
    duration = kwargs.get("duration", 1)
    if isinstance(duration, bool) or not isinstance(duration, int | float) or duration <= 0:
        raise MetaError(f"{where}: duration= is the expected seconds, a positive number")
    targets = kwargs.get("targets", TARGET_KINDS)
    if isinstance(targets, str) or not targets or not set(targets) <= set(TARGET_KINDS):
        raise MetaError(f"{where}: targets= is a tuple of {', '.join(TARGET_KINDS)}")
    return {"id": test_id, "standard": kwargs["standard"], "clause": kwargs["clause"].strip(),
            "title": kwargs["title"].strip(), "requirement": " ".join(kwargs["requirement"].split()),
            "operator": operator, "duration_s": duration, "targets": [t for t in TARGET_KINDS if t in targets]}


def test_meta(item: Any) -> dict[str, Any]:
    """The checked ``hil`` marker of a collected pytest item (with its ``nodeid`` and ``file``)."""
    marks = list(item.iter_markers(name="hil"))
    if len(marks) != 1:
        raise MetaError(f"{item.nodeid}: every suite test has exactly one @pytest.mark.hil(...) "
                        f"(found {len(marks)})")
    mark = marks[0]
    if mark.args:
        raise MetaError(f"{item.nodeid}: the hil marker takes keyword arguments only")
    meta = check_meta(mark.kwargs, item.nodeid)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        meta["id"] = f"{meta['id']}[{callspec.id}]"
    meta["nodeid"] = item.nodeid
    meta["file"] = item.path.name
    return meta


test_meta.__test__ = False  # type: ignore[attr-defined]
