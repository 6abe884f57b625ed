"""The station record of a run: what ``run.json`` holds and the reports are drawn from.

One :class:`RunRecord` per run (its identity: the software signature, the configuration hash, the
cabinet, the operator, the target, the host) with one :class:`TestRecord` per test that reached a
verdict: its clause, the steps it took, its :class:`Measurement` s with their limits, its notes and
its :class:`Evidence` files (paths relative to the report folder). ``run.json`` is rewritten after
every test (:meth:`RunRecord.save`, atomically), so an interrupted run can be resumed.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

#: The verdicts, best first. ERROR: the test itself broke; BLOCKED: it could not be carried out.
VERDICTS: tuple[str, ...] = ("PASS", "FAIL", "ERROR", "BLOCKED", "SKIPPED")
Verdict = Literal["PASS", "FAIL", "ERROR", "BLOCKED", "SKIPPED"]
RUN_FILE = "run.json"
SCHEMA = "egm-hil-run/1"


def now_iso() -> str:
    """The time now, UTC, ISO 8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Measurement(BaseModel):
    """One measured value, its limits, and whether it was within them."""

    name: str
    value: Any
    low: float | None = None
    high: float | None = None
    equals: Any = None
    unit: str = ""
    soft: bool = False
    passed: bool
    limits: str = ""
    time: str = Field(default_factory=now_iso)


class Step(BaseModel):
    """What the test did, in order."""

    text: str
    time: str = Field(default_factory=now_iso)


class Evidence(BaseModel):
    """A file in ``evidence/<test-id>/``: ``path`` is relative to the report folder."""

    name: str
    path: str
    kind: Literal["text", "json", "png"] = "text"


class TestRecord(BaseModel):
    """One test's record: what it evidences, what it did and found, and its verdict."""

    __test__ = False  # not a pytest test class

    id: str
    nodeid: str = ""
    title: str = ""
    standard: str = ""
    clause: str = ""
    requirement: str = ""
    operator: bool = False
    duration_s: float = 0
    targets: list[str] = Field(default_factory=list)
    verdict: Verdict = "ERROR"
    reason: str = ""
    started: str = ""
    finished: str = ""
    elapsed_s: float = 0.0
    steps: list[Step] = Field(default_factory=list)
    measurements: list[Measurement] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)


class RunRecord(BaseModel):
    """A whole run: its identity and its tests' records (in the order they ran)."""

    schema_: str = Field(default=SCHEMA, alias="schema")
    run_id: str
    started: str = Field(default_factory=now_iso)
    finished: str = ""
    target: str
    target_kind: str
    report_dir: str = ""
    operator: str = ""
    software: dict[str, Any] = Field(default_factory=dict)
    config_sha256: str = ""
    cabinet_id: str = ""
    python: str = ""
    host: str = ""
    egm_version: str = ""
    only: list[str] = Field(default_factory=list)
    planned: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    tests: list[TestRecord] = Field(default_factory=list)

    model_config = {"populate_by_name": True}

    def counts(self) -> dict[str, int]:
        """How many tests got each verdict (every verdict listed, zeros included)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for t in self.tests:
            counts[t.verdict] += 1
        return counts

    def test(self, test_id: str) -> TestRecord | None:
        return next((t for t in self.tests if t.id == test_id), None)

    def put(self, record: TestRecord) -> None:
        """Add ``record``, replacing an earlier record of the same test."""
        self.tests = [t for t in self.tests if t.id != record.id] + [record]

    def exit_status(self) -> int:
        """0: every applicable test passed; 1: any failed or broke; 2: none failed, some blocked."""
        counts = self.counts()
        if counts["FAIL"] or counts["ERROR"] or self.problems:
            return 1
        if counts["BLOCKED"]:
            return 2
        return 0

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        doc["counts"] = self.counts()
        return doc

    def save(self, folder: Path) -> Path:
        """Write ``folder/run.json`` atomically (a reader never sees half a file)."""
        path = folder / RUN_FILE
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, folder: Path) -> RunRecord:
        from firmware.hil.errors import HilError, read_text

        path = folder / RUN_FILE
        text = read_text(path, "the run record", f"does not exist: {folder} is not a run to resume")
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise HilError(f"{path}: not JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise HilError(f"{path}: not a run record")
        doc.pop("counts", None)
        try:
            return cls.model_validate(doc)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            raise HilError(f"{path}: not a run record ({first})") from None
