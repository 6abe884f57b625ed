"""The update's events into critical memory: at least once, in order.

The update tools run while the terminal may hold critical memory, so they keep their events in the
update state (``pending``); the terminal (or ``egm update ... --state-dir``) hands each to the
ledger's ``event`` and only then forgets them. A power cut between the two records one again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Protocol


class _HasPending(Protocol):
    pending: list[dict[str, Any]]


class EventStore(Protocol):
    """Where pending events wait: the directory backend's :class:`~firmware.update.slots.SlotStore`
    or the rauc backend's :class:`~firmware.update.pending.PendingFile`."""

    def locked(self) -> contextlib.AbstractContextManager[_HasPending]: ...


def flush(store: EventStore, event: Callable[..., Any]) -> int:
    """Call ``event(name, **data)`` for every pending event, oldest first; returns how many."""
    with store.locked() as state:
        pending = list(state.pending)
        for entry in pending:
            data = dict(entry)
            event(data.pop("event"), **data)
        state.pending.clear()
        return len(pending)
