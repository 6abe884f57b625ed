"""The SAS exception queue, kept in critical memory.

What the host reads with general polls: the priority exceptions first, highest first, each one
pending at most once (as SAS 6.02 section 2.2.1 ranks them, :data:`PRIORITY`), then the others
first in, first out, at most :data:`QUEUE_SIZE` of them. An exception arriving with that many
waiting is dropped and 0x70 (buffer overflow) is raised instead, so the host knows it missed some.

Power cuts lose none, and the queue writes nothing when an exception is raised: every exception
comes from a ledger record (:func:`firmware.sas.events.exceptions_for`) that is in critical memory
before the terminal acts on it, so the record *is* the queued exception, committed in the same
transaction as the event. The queue keeps, as the ``sas.exceptions`` setting, its contents and the
last record it had read (the cursor) each time the host takes an exception (the implied ACK of
:class:`~firmware.sas.responder.SasMachine`). Opening rebuilds it from that setting and the records
after the cursor, the same function as the live feed, so the queue after a power cut is exactly the
one before it. Limit: opening reads the records since the last take (or :meth:`save`); the
terminal should save now and then while no host takes exceptions.

Each exception waiting keeps its real-time event (``firmware/sas/rte.py``): the code and the data
read from the record that raised it, with the meters as they stood right after that record
(opening rewinds critical memory's meters over the records after the cursor to get them). The
setting keeps an exception without data as its code, one with data as ``[code, "event hex"]``; a
setting written before events were kept (codes only) still opens (:func:`~firmware.sas.rte.
without_record`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from drivers.sas.exceptions import ExceptionCode as X
from firmware.ledger.ledger import Ledger
from firmware.sas.events import exceptions_for
from firmware.sas.rte import EventContext, EventMeters, event_of, without_record

#: Non-priority exceptions the queue holds (SAS asks for at least 20 as recalled, not confirmed by
#: a public source; the Aristocrat Monaco platform's SAS client keeps 25, docs/protocols/sas.md).
QUEUE_SIZE = 25

#: The priority exceptions, highest first (SAS 6.02 section 2.2.1, as the Monaco client lists it).
PRIORITY: tuple[X, ...] = (
    X.SYSTEM_VALIDATION_REQUEST, X.TICKET_INSERTED, X.TICKET_TRANSFER_COMPLETE,
    X.VALIDATION_ID_NOT_CONFIGURED, X.GAME_LOCKED, X.CASHOUT_TICKET_PRINTED, X.HANDPAY_VALIDATED,
    X.AFT_TRANSFER_COMPLETE, X.HANDPAY_PENDING, X.HANDPAY_RESET, X.EXCEPTION_BUFFER_OVERFLOW,
)
_RANK: dict[int, int] = {int(code): rank for rank, code in enumerate(PRIORITY)}

#: The setting that holds the queue in critical memory.
SETTING = "sas.exceptions"

#: The record kinds that can raise an exception (opening reads only their bodies).
RAISING_KINDS = frozenset({"bill", "ticket_out", "ticket_in", "voucher", "round.deal", "round.complete",
                           "event", "transfer_in", "transfer_out"})


class Waiting(NamedTuple):
    """A non-priority exception waiting, with its real-time event (code and data)."""

    code: int
    event: bytes


def _opened(entry: int | list[Any]) -> Waiting:
    """A waiting exception as the setting keeps it: a code, or ``[code, "event hex"]``."""
    if isinstance(entry, int):
        return Waiting(entry, without_record(entry))
    code, event = entry
    return Waiting(int(code), bytes.fromhex(event))


def _kept(entry: Waiting) -> int | list[Any]:
    return entry.code if entry.event == bytes((entry.code,)) else [entry.code, entry.event.hex()]


class ExceptionQueue:
    """The exception queue of one terminal, fed by its ledger's records; ``context`` is what the
    events' data needs besides the records (default: the ledger's denomination, country 0)."""

    def __init__(self, ledger: Ledger, *, size: int = QUEUE_SIZE, context: EventContext | None = None) -> None:
        self._ledger = ledger
        self.size = size
        self._context = context if context is not None else EventContext(ledger.denom_cents)
        self._cursor = 0
        self._priority: set[int] = set()
        self._fifo: list[Waiting] = []
        #: Records read since the queue was last kept (opening reads them again): the terminal
        #: saves when they pile up while no host takes exceptions (firmware/sas/link.py).
        self.unsaved = 0
        saved = ledger.setting(SETTING)
        if saved is not None:
            self._cursor = saved["cursor"]
            self._priority = set(saved["priority"])
            self._fifo = [_opened(entry) for entry in saved["fifo"]]
        unread = [(seq, kind, ledger.log_record(seq)["body"] if kind in RAISING_KINDS else {})
                  for seq, kind, _ref in ledger.log_index(after=self._cursor)]
        self._meters = EventMeters(ledger.meters)
        for _seq, kind, body in reversed(unread):
            self._meters.rewind(kind, body)
        for seq, kind, body in unread:
            self.feed(seq, kind, body)
        ledger.listeners.append(self._on_record)

    def _on_record(self, seq: int, kind: str, _ref: str | None, _time: str, body: dict[str, Any]) -> None:
        self.feed(seq, kind, body)

    def feed(self, seq: int, kind: str, body: Mapping[str, Any]) -> None:
        """Queue what ledger record ``seq`` raises (a record already read changes nothing)."""
        if seq <= self._cursor:
            return
        self._cursor = seq
        self.unsaved += 1
        self._meters.advance(kind, body)
        for code in exceptions_for(kind, body):
            self._add(code, kind, body)

    def _add(self, code: int, kind: str, body: Mapping[str, Any]) -> None:
        if code in _RANK:
            self._priority.add(code)
        elif len(self._fifo) >= self.size:
            self._priority.add(X.EXCEPTION_BUFFER_OVERFLOW)
        else:
            self._fifo.append(Waiting(code, event_of(code, kind, body, self._meters, self._context)))

    def peek(self) -> int:
        """The exception a general poll reports now (0x00: none)."""
        if self._priority:
            return min(self._priority, key=_RANK.__getitem__)
        return self._fifo[0].code if self._fifo else X.NO_ACTIVITY

    def peek_event(self) -> bytes:
        """The real-time event of :meth:`peek`'s exception: its code and data (a priority exception
        carries none; 0x00: none waiting)."""
        if self._priority or not self._fifo:
            return bytes((self.peek(),))
        return self._fifo[0].event

    def take(self, code: int) -> None:
        """The host has taken ``code`` (the implied ACK of the reply that carried it): remove it and
        keep the queue in critical memory. ``code`` was the head when it was sent; a priority
        exception raised since then is ahead of it now, so it is found by its code."""
        if code in self._priority:
            self._priority.discard(code)
        elif self._fifo and self._fifo[0].code == code:
            self._fifo.pop(0)
        else:
            return
        self.save()

    def save(self) -> None:
        """Keep the queue and its cursor as the ``sas.exceptions`` setting."""
        self._ledger.store_setting(SETTING, {"cursor": self._cursor, "priority": sorted(self._priority),
                                             "fifo": [_kept(entry) for entry in self._fifo]})
        self.unsaved = 0               # the setting's own record is read again at opening: one record

    def pending(self) -> list[int]:
        """Every exception waiting, in the order the host will read them."""
        return sorted(self._priority, key=_RANK.__getitem__) + [entry.code for entry in self._fifo]

    def pending_events(self) -> list[bytes]:
        """The real-time event of each exception waiting, in the order of :meth:`pending`."""
        return [bytes((code,)) for code in sorted(self._priority, key=_RANK.__getitem__)] + [
            entry.event for entry in self._fifo]

    def __len__(self) -> int:
        return len(self._priority) + len(self._fifo)
