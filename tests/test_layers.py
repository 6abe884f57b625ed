"""The import contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold, and a broken one is
reported naming the import that breaks it (docs/architecture.md, "Layers and what each package may
import").

``lint-imports`` runs in a child process with the tree under test first on its path, so the copy
with an upward import is the code it reads, not the one this test process imported.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("firmware", "hal", "drivers", "sim_hardware", "host", "egmproto")
#: import-linter's command (``lint-imports``), from this interpreter's environment.
LINT_IMPORTS = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo"], cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True,
                          timeout=600)


def test_the_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 5 kept, 0 broken." in result.stdout


def test_the_architecture_page_draws_the_layers_of_the_contract() -> None:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["id"] == "layers")
    page = (ROOT / "docs" / "architecture.md").read_text()
    picture = page.split("## Layers and what each package may import", 1)[1].split("```text", 1)[1]
    rows = picture.split("```", 1)[0].split("\n")
    drawn = [m.group(1) for row in rows[3:] if (m := re.match(r"  (\S+(?: \| \S+)*)  ", row))]
    assert drawn == layers


def test_an_import_that_points_up_or_across_is_reported(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with (tmp_path / "firmware" / "rng" / "health.py").open("a") as f:
        f.write("\nfrom firmware.cabinet import terminal  # noqa: E402 - the RNG reaching up\n")
    with (tmp_path / "host" / "store_queries.py").open("a") as f:
        f.write("\nfrom firmware.ledger import ledger  # noqa: E402 - the host reaching into the terminal\n")
    with (tmp_path / "egmproto" / "tls.py").open("a") as f:
        f.write("\nimport hal.errors  # noqa: E402 - the shared protocol reaching into the devices\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "The terminal's layers only import downward BROKEN" in out
    assert "firmware.rng.health -> firmware.cabinet.terminal" in out
    assert "The host and the terminal meet only in egmproto (and in the composition root) BROKEN" in out
    assert "host.store_queries -> firmware.ledger.ledger" in out
    assert "The shared protocol imports neither side nor the devices BROKEN" in out
    assert "egmproto.tls -> hal.errors" in out
    assert "Contracts: 2 kept, 3 broken." in out
