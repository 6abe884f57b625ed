"""The update's events into critical memory: at least once, in order.

The update tools run while the terminal may hold critical memory, so they keep their events in the
update state (``pending``); the terminal (or ``egm update ... --state-dir``) hands each to the
ledger's ``event`` and only then forgets them. A power cut between the two records one again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from firmware.update.slots import SlotStore


def flush(store: SlotStore, event: Callable[..., Any]) -> int:
    """Call ``event(name, **data)`` for every pending event, oldest first; returns how many."""
    with store.locked() as state:
        pending = list(state.pending)
        for entry in pending:
            data = dict(entry)
            event(data.pop("event"), **data)
        state.pending.clear()
        return len(pending)
