"""No class in ``firmware/`` is above 400 lines (issue 23): a class that big has more than one job.

A class's lines run from its ``class`` line (its decorators included) to its last line, as ``ast``
reports them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400

#: Classes still larger (``path:Class``), each with why; the list must stay true: a class on it
#: that is no longer above the limit fails the test too (take it off).
EXEMPT: dict[str, str] = {}


def class_sizes(path: Path) -> list[tuple[str, int]]:
    """Every class in ``path`` (nested ones too), with its number of lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    sizes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            sizes.append((node.name, node.end_lineno - first + 1))
    return sizes


def oversized(root: Path, limit: int = LIMIT) -> list[str]:
    """``path:Class (n lines)`` for every class under ``root/firmware`` above ``limit`` lines."""
    found = []
    for path in sorted((root / "firmware").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        found += [f"{name}:{cls} ({lines} lines)" for cls, lines in class_sizes(path) if lines > limit]
    return found


def test_no_class_in_the_firmware_is_above_400_lines() -> None:
    found = oversized(ROOT)
    new = [f for f in found if f.rpartition(" (")[0] not in EXEMPT]
    assert not new, f"classes above {LIMIT} lines (split them):\n" + "\n".join(new)
    still = {f.rpartition(" (")[0] for f in found}
    assert set(EXEMPT) <= still, f"no longer above {LIMIT} lines, take off EXEMPT: {sorted(set(EXEMPT) - still)}"


def test_a_class_above_the_limit_is_reported(tmp_path: Path) -> None:
    module = tmp_path / "firmware" / "big.py"
    module.parent.mkdir()
    body = "\n".join(f"    def m{i}(self):\n        return {i}" for i in range(201))
    module.write_text(f"class Big:\n{body}\n\n\nclass Small:\n    pass\n")
    assert oversized(tmp_path) == ["firmware/big.py:Big (403 lines)"]
