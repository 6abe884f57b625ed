"""Recording terminal messages, one or many to a transaction (``HostStore.record`` and
``HostStore.record_batch``; docs/host-store.md, "Batch ingest").

A batch is stored in one transaction, its messages in (terminal, epoch, seq) order so that
concurrent workers take the per-terminal row locks in the same order. Each message goes through
the same code as a single ``record`` (:func:`record_in`, ``store_ingest.ingest_many``), so a batch
stores what the same messages stored one by one, in that order, would. A deadlock or serialization failure reruns the whole batch
(``HostStore._run``); if the batch still fails (one message the database refuses), every message
is stored again in a transaction of its own, so one bad report never blocks the others: the bad one
comes back with ``error`` set and nothing stored for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from host import store_epochs
from host.store_errors import HostStoreError
from host.store_ingest import Incoming, ingest_many
from host.store_schema import TERMINAL_ID_MAX, TYPE_MAX
from host.store_vouchers import Redemption

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Recorded:
    """The outcome of :meth:`HostStore.record` (one per message of :meth:`HostStore.record_batch`)."""

    stored: bool        #: False when (terminal, seq) was already stored: a duplicate, nothing changed
    seq: int            #: the stored seq: the report number within its epoch (host/store_epochs.py)
    #: a duplicate whose content differs from the message stored under its (terminal, epoch,
    #: number): not a resend or a replay, the terminal numbered two reports alike (its critical
    #: memory went back)
    conflict: bool = False
    #: the answer to a ``voucher_redeem_request`` stored just now (decided in the same transaction)
    redemption: Redemption | None = None
    #: the terminal's key to seal to as of this transaction: its newest (highest seq) hello's
    #: ``kem_public`` (base64), None before the host has one
    kem_public: str | None = None
    #: record_batch only: why this message was not stored (bad input, or the database refused it
    #: even alone); nothing of it is stored and it is neither new nor a duplicate
    error: str | None = None


@dataclass(frozen=True)
class Report:
    """One verified terminal message for :meth:`HostStore.record_batch`."""

    terminal: str
    seq: int            #: the report number within ``epoch``: 0 .. 2^40-1
    type: str
    sent_at: datetime
    body: Mapping[str, Any]
    epoch: str = store_epochs.NO_EPOCH


def check_report(r: Report) -> None:
    """:class:`HostStoreError` saying what is wrong with ``r``, if anything."""
    check_terminal(r.terminal)
    if not (isinstance(r.seq, int) and not isinstance(r.seq, bool) and 0 <= r.seq < store_epochs.EPOCH_SPAN):
        raise HostStoreError(f"message seq must be an integer in 0..2^40-1, got {r.seq!r}")
    if not isinstance(r.epoch, str) or len(r.epoch) > TYPE_MAX:
        raise HostStoreError(f"epoch must be a string of at most {TYPE_MAX} characters, got {r.epoch!r}")
    if not isinstance(r.type, str) or not 0 < len(r.type) <= TYPE_MAX:
        raise HostStoreError(f"message type must be a non-empty string, got {r.type!r}")
    check_time(r.sent_at, "sent_at")
    if not isinstance(r.body, Mapping):
        raise HostStoreError(f"message body must be a JSON object, got {r.body.__class__.__name__}")


def record_in(conn: Connection, reports: Sequence[Report], received_at: datetime,
              now: Callable[[], datetime]) -> list[Recorded]:
    """Store checked ``reports`` (in the order given) and what they imply on the caller's
    transaction; one :class:`Recorded` each."""
    idx = store_epochs.indexes(conn, ((r.terminal, r.epoch) for r in reports), received_at)
    msgs = []
    for r in reports:
        msgs.append(Incoming(r.terminal, store_epochs.key(idx[(r.terminal, r.epoch)], r.seq), r.type,
                             r.sent_at, received_at, r.body))
    return [Recorded(stored=i.outcome == "stored", seq=m.seq, conflict=i.outcome == "conflict",
                     redemption=i.redemption, kem_public=i.kem_public)
            for m, i in zip(msgs, ingest_many(conn, msgs, now), strict=True)]


Run = Callable[[Callable[[Connection], Any]], Any]


def record_batch(reports: Sequence[Report], run: Run, now: Callable[[], datetime]) -> list[Recorded]:
    """Store ``reports`` in one transaction (``run``: ``HostStore``'s write transaction with its
    retries); one :class:`Recorded` per report, in the order given (see the module docstring)."""
    if isinstance(reports, (str, bytes)) or not isinstance(reports, Sequence):
        raise HostStoreError(f"record_batch takes a list of Report, got {reports.__class__.__name__}")
    results: list[Recorded | None] = [None] * len(reports)
    good: list[int] = []
    for i, r in enumerate(reports):
        try:
            if not isinstance(r, Report):
                raise HostStoreError(f"a batch item must be a Report, got {r.__class__.__name__}")
            check_report(r)
        except HostStoreError as exc:
            results[i] = Recorded(stored=False, seq=getattr(r, "seq", -1), error=str(exc))
            log.warning("batch item %d refused: %s", i, exc)
            continue
        good.append(i)
    good.sort(key=lambda i: (reports[i].terminal, reports[i].epoch, reports[i].seq))
    received_at = now()

    def work(conn: Connection) -> list[Recorded]:
        return record_in(conn, [reports[i] for i in good], received_at, now)

    try:
        for i, rec in zip(good, run(work), strict=True):
            results[i] = rec
    except Exception as exc:  # noqa: BLE001 - whatever one message did, the others go on alone
        if len(good) > 1:
            log.warning("a batch of %d messages failed (%s); storing them one by one", len(good), exc)
        for i in good:
            def one_work(conn: Connection, r: Report = reports[i]) -> Recorded:
                return record_in(conn, [r], received_at, now)[0]
            try:
                results[i] = run(one_work)
            except Exception as one:  # noqa: BLE001 - reported in its Recorded, logged
                log.error("%s seq %s not stored: %s", reports[i].terminal, reports[i].seq, one)
                results[i] = Recorded(stored=False, seq=reports[i].seq, error=str(one))
    return [r for r in results if r is not None]


def check_terminal(terminal_id: Any) -> None:
    if not isinstance(terminal_id, str) or not 0 < len(terminal_id) <= TERMINAL_ID_MAX:
        raise HostStoreError(f"terminal id must be a non-empty string of at most "
                             f"{TERMINAL_ID_MAX} characters, got {terminal_id!r}")


def check_time(t: Any, what: str) -> None:
    if not isinstance(t, datetime) or t.tzinfo is None or t.utcoffset() is None:
        raise HostStoreError(f"{what} must be a timezone-aware datetime, got {t!r}")
