"""A small udev rules matcher for the tests (udev(7)): enough of the language to run
deploy/cabinet/udev/60-egm.rules against a simulated device's properties, as
``udevadm info --attribute-walk`` / ``--query=property`` would show them for a device that is not
plugged into this machine.

Understood: ``==``, ``!=`` (match; shell-glob patterns with ``|`` alternatives), ``=``, ``+=``,
``:=`` (assign) on ACTION, SUBSYSTEM, KERNEL, DRIVER, ATTR{x}, ATTRS{x} (every ATTRS of one rule on
the same device of the parent chain, as udev requires), ENV{x}, SYMLINK, MODE, GROUP, OWNER, TAG,
GOTO, LABEL, line continuations and comments. Any other key, or text that is not a key/value pair,
is a :class:`RulesError` naming the line."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_PAIR = re.compile(r'\s*([A-Z_]+)(?:\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
MATCH_KEYS = {"ACTION", "SUBSYSTEM", "KERNEL", "DRIVER", "ATTR", "ATTRS", "ENV"}
ASSIGN_KEYS = {"SYMLINK", "MODE", "GROUP", "OWNER", "TAG", "ENV", "GOTO", "LABEL"}


class RulesError(ValueError):
    pass


@dataclass
class Rule:
    line: int
    pairs: list[tuple[str, str | None, str, str]]


@dataclass
class Result:
    symlinks: list[str] = field(default_factory=list)
    mode: str | None = None
    group: str | None = None
    owner: str | None = None
    tags: list[str] = field(default_factory=list)


def parse(text: str) -> list[Rule]:
    rules: list[Rule] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pairs, pos = [], 0
        while pos < len(line):
            if not line[pos:].strip():
                break
            m = _PAIR.match(line, pos)
            if m is None:
                raise RulesError(f"line {start}: not a key/value pair: {line[pos:].strip()[:40]!r}")
            key, attr, op, value, _ = m.groups()
            assign = op not in ("==", "!=")
            if (assign and key not in ASSIGN_KEYS) or (not assign and key not in MATCH_KEYS):
                raise RulesError(f"line {start}: {key}{'{' + attr + '}' if attr else ''}{op} is not understood")
            if (key in ("ATTR", "ATTRS", "ENV")) != (attr is not None):
                raise RulesError(f"line {start}: {key} {'needs' if attr is None else 'takes no'} {{attribute}}")
            pairs.append((key, attr, op, value))
            pos = m.end()
        rules.append(Rule(start, pairs))
    return rules


def _glob(value: str, pattern: str) -> bool:
    return any(fnmatch.fnmatchcase(value, p) for p in pattern.split("|"))


def _matches(rule: Rule, device: dict[str, Any]) -> bool:
    attrs_wanted = []
    for key, attr, op, pattern in rule.pairs:
        if op not in ("==", "!="):
            continue
        if key == "ATTRS":
            attrs_wanted.append((attr, op, pattern))
            continue
        if key == "ENV":
            value = device.get("ENV", {}).get(attr)
        elif key == "ATTR":
            value = device.get("ATTR", {}).get(attr)
        else:
            value = device.get(key)
        hit = value is not None and _glob(value, pattern)
        if hit != (op == "=="):
            return False
    if not attrs_wanted:
        return True
    chain = [device.get("ATTR", {})] + [p.get("ATTRS", {}) for p in device.get("parents", [])]
    return any(all((a in level and _glob(level[a], pat)) == (op == "==") for a, op, pat in attrs_wanted)
               for level in chain)


def apply(rules: list[Rule], device: dict[str, Any]) -> Result:
    """What the rules assign to ``device`` (a dict of ACTION, SUBSYSTEM, KERNEL, ENV{}, ATTR{} and
    ``parents``: the attribute-walk's parents, each with its ATTRS)."""
    result = Result()
    labels = {pair[3]: i for i, r in enumerate(rules) for pair in r.pairs if pair[0] == "LABEL"}
    final: set[str] = set()
    i = 0
    while i < len(rules):
        rule = rules[i]
        i += 1
        if not _matches(rule, device):
            continue
        for key, _attr, op, value in rule.pairs:
            if op in ("==", "!=") or key == "LABEL" or key in final:
                continue
            if key == "GOTO":
                if value not in labels:
                    raise RulesError(f"line {rule.line}: GOTO {value!r} has no LABEL")
                i = labels[value]
            elif key in ("SYMLINK", "TAG"):
                target = result.symlinks if key == "SYMLINK" else result.tags
                if op in ("=", ":="):
                    target.clear()
                target.extend(value.split())
            elif key in ("MODE", "GROUP", "OWNER"):
                setattr(result, key.lower(), value)
            if op == ":=":
                final.add(key)
    return result


def load(path: Path) -> list[Rule]:
    return parse(path.read_text())
