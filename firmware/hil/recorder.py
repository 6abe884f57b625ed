"""The ``record`` fixture: a test's steps, measurements with limits, notes and evidence files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Literal, TypeVar

from firmware.hil.errors import MeasurementFailure
from firmware.hil.record import Evidence, Measurement, Step, TestRecord

T = TypeVar("T")
Kind = Literal["text", "json", "png"]
_SUFFIX = {"text": ".txt", "json": ".json", "png": ".png"}
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def limits_text(low: float | None, high: float | None, equals: Any, unit: str) -> str:
    """The limits as a person reads them: ``== True``, ``>= 22``, ``0 .. 10 s``, ``none``."""
    u = f" {unit}" if unit else ""
    if equals is not None:
        return f"== {equals!r}{u}" if isinstance(equals, str) else f"== {equals}{u}"
    if low is not None and high is not None:
        return f"{low} .. {high}{u}"
    if low is not None:
        return f">= {low}{u}"
    if high is not None:
        return f"<= {high}{u}"
    return "none (recorded)"


def within(value: Any, low: float | None, high: float | None, equals: Any) -> bool:
    if equals is not None and value != equals:
        return False
    try:
        if low is not None and not value >= low:
            return False
        if high is not None and not value <= high:
            return False
    except TypeError:
        return False
    return True


class Recorder:
    """What a test records (``record`` fixture); evidence goes to ``evidence_dir``."""

    __test__ = False

    def __init__(self, test: TestRecord, evidence_dir: Path, report_dir: Path) -> None:
        self.test = test
        self.evidence_dir = evidence_dir
        self.report_dir = report_dir

    def step(self, text: str) -> None:
        """What the test is doing now (the report lists the steps in order)."""
        self.test.steps.append(Step(text=text))

    def note(self, text: str) -> None:
        """A remark for the report (what could not be captured, a detail a reader needs)."""
        self.test.notes.append(text)

    def measure(self, name: str, value: T, *, low: float | None = None, high: float | None = None,
                equals: Any = None, unit: str = "", soft: bool = False) -> T:
        """Record ``value`` with its limits; outside them the test fails now (``soft``: at its end)."""
        ok = within(value, low, high, equals)
        limits = limits_text(low, high, equals, unit)
        self.test.measurements.append(Measurement(name=name, value=_jsonable(value), low=low, high=high,
                                                  equals=_jsonable(equals), unit=unit, soft=soft,
                                                  passed=ok, limits=limits))
        if not ok and not soft:
            raise MeasurementFailure(f"{name} = {value!r}{' ' + unit if unit else ''}, outside {limits}")
        return value

    def soft_failures(self) -> list[Measurement]:
        return [m for m in self.test.measurements if not m.passed]

    def attach(self, name: str, data_or_path: Any, kind: Kind = "text") -> Path:
        """Keep ``data_or_path`` (text, bytes, a JSON-shaped value, or a file) as evidence."""
        if kind not in _SUFFIX:
            raise ValueError(f"kind is text, json or png, not {kind!r}")
        filename = _SAFE.sub("_", name).strip("._") or "evidence"
        if not filename.endswith(_SUFFIX[kind]):
            filename += _SUFFIX[kind]
        self.evidence_dir.mkdir(parents=True, exist_ok=True)
        path = self.evidence_dir / filename
        if isinstance(data_or_path, Path):
            if data_or_path.resolve() != path.resolve():
                shutil.copyfile(data_or_path, path)
        elif isinstance(data_or_path, bytes):
            path.write_bytes(data_or_path)
        elif kind == "json":
            path.write_text(json.dumps(data_or_path, indent=1, default=str) + "\n", encoding="utf-8")
        else:
            path.write_text(str(data_or_path), encoding="utf-8")
        rel = path.relative_to(self.report_dir).as_posix()
        self.test.evidence = [e for e in self.test.evidence if e.path != rel]
        self.test.evidence.append(Evidence(name=name, path=rel, kind=kind))
        return path


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value
