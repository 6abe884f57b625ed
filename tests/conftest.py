"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The project's ``../shared`` folder (rules, vectors); CI always has it beside the clone."""
    assert SHARED.is_dir(), f"../shared is missing beside the project root ({SHARED})"
    return SHARED
