"""Shared test fixtures.

The suite reads nothing outside the repository: the facts it checks against (the NIST CAVP vectors,
golden device frames, the game rules) are copied into it (``firmware/rng/vectors/``,
``docs/protocols/frames.md``, ``docs/games/rules/``); ``tests/test_self_contained.py`` keeps it so.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import settings

#: The repository's root (the tests read its docs, never anything beside it).
ROOT = Path(__file__).resolve().parent.parent



# No timing assertion in the default suite (hypothesis's 200 ms deadline is one: a property test
# failed under load on a 2-core machine with "Unreliable test timings"). Tests that set their own
# settings keep them; this is the default for the rest.
settings.register_profile("egm", deadline=None)
settings.load_profile("egm")
