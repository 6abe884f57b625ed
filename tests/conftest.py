"""Shared test fixtures.

The suite reads nothing outside the repository: the facts it checks against (the NIST CAVP vectors,
golden device frames, the game rules) are copied into it (``firmware/rng/vectors/``,
``docs/protocols/frames.md``, ``docs/games/rules/``); ``tests/test_self_contained.py`` keeps it so.
"""

from __future__ import annotations

from pathlib import Path

#: The repository's root (the tests read its docs, never anything beside it).
ROOT = Path(__file__).resolve().parent.parent
