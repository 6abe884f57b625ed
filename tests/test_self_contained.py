"""The repository stands alone: no code, test, build file or document reaches outside it.

A clone with nothing beside it must pass ``make test`` (``.ci/run`` proves that by cloning into an
empty folder); this test names the offending line at once, on any machine, even one that happens to
have a ``shared`` folder beside the clone.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A path that climbs out of the repository into the reference folder beside it.
OUTSIDE = re.compile(r"\.\./(\.\./)*shared\b|parent\s*/\s*[\"']shared[\"']")


def _tracked_files() -> list[Path]:
    listing = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [ROOT / name for name in listing.split("\0") if name]


def test_nothing_refers_to_the_folder_beside_the_repository() -> None:
    offending = []
    for path in _tracked_files():
        if path.suffix not in {".py", ".md", ".toml", ".cfg", ".txt", ""} or not path.is_file():
            continue
        if path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if OUTSIDE.search(line):
                offending.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offending == []


def test_the_guard_catches_a_reference() -> None:
    folder = "sha" + "red"              # spelt in two parts, so this file holds no reference itself
    assert OUTSIDE.search(f"egm rng kat ../{folder}/vectors/hmac_drbg_sha256.json")
    assert OUTSIDE.search(f'SHARED = ROOT.parent / "{folder}"')
    assert not OUTSIDE.search("copied from the reference folder's shared/rules/baccarat-war.md")
