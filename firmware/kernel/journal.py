"""The hook through which critical memory journals every round transition (write-ahead).

The kernel calls :meth:`RoundJournal.transition` *before* a transition takes effect, with every card
and decision consumed since the previous entry; only after it returns does the round move on and
may the terminal show or pay anything. The ledger (critical memory) supplies the durable journal;
:class:`NullJournal` is for simulation and tests, :class:`MemoryJournal` keeps entries in a list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class JournalEntry:
    round_id: str
    seq: int                          #: 0, 1, 2... within the round
    trigger: str
    source: str                       #: state left
    dest: str                         #: state entered
    cards: tuple[str, ...] = ()       #: cards consumed since the previous entry, in order
    decisions: tuple[tuple[int, str], ...] = ()
    data: dict[str, Any] = field(default_factory=dict)   #: e.g. wagers and dice on "deal"


class RoundJournal(Protocol):
    def transition(self, entry: JournalEntry) -> None: ...


class NullJournal:
    """Keeps nothing (simulation, PAR Monte Carlo)."""

    def transition(self, entry: JournalEntry) -> None:
        return None


class MemoryJournal:
    """Keeps every entry in memory (tests, the recall of a round in progress)."""

    def __init__(self) -> None:
        self.entries: list[JournalEntry] = []

    def transition(self, entry: JournalEntry) -> None:
        self.entries.append(entry)
