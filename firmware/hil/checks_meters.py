"""Meter checks of the lab suite (areas ``meters``, ``memory``, ``doors``): the terminal's meters
answer (the service ``meters`` / ``egm meters --json`` document) as flat numbers, the accounting
identity the product defines (docs/critical-memory.md, "Meters"), computed by the ledger's one
function :func:`firmware.ledger.ledger.accounting_difference` (credits a live table's open bet holds,
``table_held``, included: no second copy of the identity to fall behind), a pairwise "no meter went
back" comparison, and the meter snapshots a run has already recorded as evidence.

A meter may go back only where the product documents it (docs/critical-memory.md, "Meters"): the
two "games since" meters (:data:`firmware.ledger.meters.RESETTABLE`) return to zero by definition,
and a report shows every meter as a 10-digit counter (:data:`firmware.ledger.meters.ROLLOVER`), so a
meter that passes 9,999,999,999 shows a small number again. A drop of more than half the counter's
range is taken as that roll-over; any other drop is a meter that went back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from firmware.ledger.ledger import accounting_difference
from firmware.ledger.meters import RESETTABLE, ROLLOVER

#: The name of a snapshot :class:`MeterLog` attached (``meters-NN-LABEL``).
_TAKEN = re.compile(r"meters-\d\d-.+")

#: A snapshot: (where it was taken, the flat meters).
Snapshot = tuple[str, dict[str, int]]


def flat(answer: Mapping[str, Any]) -> dict[str, int]:
    """The meters answer as ``{dotted name: integer}``: every meter (nested ones such as
    ``bills_in_by_denom.2000`` or ``games.baccarat-war.coin_in`` joined with dots) and ``credits``
    (cents)."""
    out: dict[str, int] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, int) and not isinstance(value, bool):
            out[prefix] = value

    walk("", answer.get("meters", {}))
    if isinstance(answer.get("credits"), int):
        out["credits"] = answer["credits"]
    return out


def identity_difference(answer: Mapping[str, Any]) -> int:
    """Cents by which the credit meter is not explained by the money meters (0: the identity holds),
    by the ledger's :func:`~firmware.ledger.ledger.accounting_difference` on the flat answer."""
    return accounting_difference(flat(answer))


def rolled_over(before: int, after: int) -> bool:
    """Whether ``before`` -> ``after`` is a 10-digit counter passing its top (see the module)."""
    return after < before and before - after > ROLLOVER // 2


def decreases(before: Mapping[str, int], after: Mapping[str, int]) -> list[str]:
    """Each meter lower in ``after`` than in ``before`` (not a resettable one, not a roll-over),
    as ``name: before -> after``. ``credits`` is a balance, not a meter, and may fall."""
    out = []
    for name, old in sorted(before.items()):
        if name == "credits" or name in RESETTABLE:
            continue
        new = after.get(name, 0)
        if new < old and not rolled_over(old, new):
            out.append(f"{name}: {old} -> {new}")
    return out


def pairwise_decreases(snapshots: Iterable[Snapshot]) -> list[str]:
    """Every decrease between consecutive snapshots, as ``from -> to: name: before -> after``."""
    found: list[str] = []
    previous: Snapshot | None = None
    for snap in snapshots:
        if previous is not None:
            found += [f"{previous[0]} -> {snap[0]}: {d}" for d in decreases(previous[1], snap[1])]
        previous = snap
    return found


def run_snapshots(report_dir: Path) -> list[list[Snapshot]]:
    """The meter snapshots the tests of this run (``run.json``, in the order they ran) kept as
    evidence (``meters-before``, ``meters-*.json`` they attached, ``meters-after``), in series: a
    test whose events hold a RAM clear (``ram_clear``) starts a new series, since the memory before
    it is gone by design."""
    try:
        run = json.loads((report_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    series: list[list[Snapshot]] = [[]]
    for test in run.get("tests", []):
        evidence = {e.get("name"): e.get("path") for e in test.get("evidence", []) if e.get("kind") == "json"}
        names = ["meters-before", *sorted(n for n in evidence if _TAKEN.fullmatch(str(n))), "meters-after"]
        if any(e.get("event") == "ram_clear" for e in _load(report_dir, evidence.get("events")) or []):
            series.append([])
        for name in names:
            answer = _load(report_dir, evidence.get(name))
            if isinstance(answer, Mapping) and "meters" in answer:
                series[-1].append((f"{test.get('id')}:{name}", flat(answer)))
    return [s for s in series if s]


def _load(report_dir: Path, rel: str | None) -> Any:
    if not rel:
        return None
    try:
        return json.loads((report_dir / rel).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


class MeterLog:
    """The meter snapshots one test takes (``take``): each attached as evidence
    (``meters-NN-LABEL.json``, so :func:`run_snapshots` finds them in order), its accounting identity
    measured, and kept for a pairwise comparison at the end (``snapshots``)."""

    def __init__(self, cabinet: Any, record: Any) -> None:
        self.cabinet = cabinet
        self.record = record
        self.snapshots: list[Snapshot] = []

    def take(self, label: str) -> dict[str, int]:
        """The meters now (flat), with the identity measured as ``identity after LABEL``."""
        answer = self.cabinet.meters()
        self.record.attach(f"meters-{len(self.snapshots) + 1:02d}-{label}", answer, "json")
        self.record.measure(f"accounting identity after {label} (credits minus what the meters explain)",
                            identity_difference(answer), equals=0, unit="cents")
        meters = flat(answer)
        self.snapshots.append((label, meters))
        return meters
