"""A terminal's state on the floor page, from what the host stored (docs/floor-web.md, "States").

In order, the first that holds: **offline** (no report for longer than the offline threshold),
**disabled** (the terminal reported ``host.disabled``: it applied the host's disable), **tilt** (an
open tilt), **playing** (a round record received within the playing window), else **idle**.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

STATES = ("playing", "idle", "tilt", "disabled", "offline")


@dataclass(frozen=True)
class Thresholds:
    #: seconds without any report after which a terminal is offline (the terminals report their
    #: meters every ``[host] meter_interval_s``, 300 s by default: two of those missed, and a minute)
    offline_after_s: float = 660.0
    #: a round received within this many seconds: the terminal is being played
    playing_within_s: float = 30.0


def _age(now: datetime, when: str | None) -> float | None:
    if not when:
        return None
    return max(0.0, (now - datetime.fromisoformat(when)).total_seconds())


def classify(row: dict[str, Any], last_round: str | None, now: datetime, limits: Thresholds) -> dict[str, Any]:
    """``row`` (one of :meth:`HostStore.terminals`) with ``state``, ``age_s`` (seconds since its
    last report) and ``round_age_s`` added."""
    age = _age(now, row.get("last_seen"))
    round_age = _age(now, last_round)
    if age is None or age > limits.offline_after_s:
        state = "offline"
    elif row.get("disabled"):
        state = "disabled"
    elif row.get("open_tilts"):
        state = "tilt"
    elif round_age is not None and round_age <= limits.playing_within_s:
        state = "playing"
    else:
        state = "idle"
    return {**row, "state": state, "age_s": age, "round_age_s": round_age}


def age_text(seconds: float | None) -> str:
    """``4 s``, ``3 min``, ``2 h 5 min``, ``3 d``; ``never`` for None."""
    if seconds is None:
        return "never"
    s = int(seconds)
    if s < 90:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d"


def money(cents: int | None) -> str:
    """Integer cents as dollars: ``$1,234.05``; ``-`` for None."""
    if cents is None:
        return "-"
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(int(cents)), 100)
    return f"{sign}${whole:,}.{part:02d}"
