"""The epochs of a terminal's critical memory, on the caller's connection: a terminal numbers its
reports 1, 2, 3... within the life of its critical memory (its epoch, a random id made with its
ledger; a RAM clear starts a new one), so the host keys what it stores by (terminal, epoch, number).

The tables keep one integer ``seq`` per message: the report number plus ``idx * EPOCH_SPAN``, where
``idx`` is the epoch's place among the terminal's epochs (0 for the first the host heard of). So the
duplicate check stays the (terminal, seq) key, an old epoch's records stay as they were, and every
"newer by seq" rule (tilts, power-up, disabled, the newest hello) orders a RAM-cleared terminal's new
reports after its old ones. docs/protocols/host-session.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from host.store_engine import upsert
from host.store_errors import HostStoreError
from host.store_schema import messages, terminal_epochs

#: report numbers of one epoch are below this (2^40: a report a second for 34,000 years)
EPOCH_SPAN = 2**40
#: the epoch of a message recorded without one (a caller that predates epochs)
NO_EPOCH = ""

_ADD_TRIES = 5
_LOOKUP_CHUNK = 1000       #: terminals per look-up query of indexes()


def index(conn: Connection, terminal: str, epoch: str, now: datetime | None) -> int | None:
    """The place of ``terminal``'s ``epoch`` among its epochs. One not heard of before is given
    the next place, first seen ``now``; with ``now`` None it is not added (None)."""
    te = terminal_epochs.c
    for _ in range(_ADD_TRIES):   # another server may add an epoch of the same terminal at once
        idx = conn.execute(select(te.idx).where(te.terminal == terminal, te.epoch == epoch)).scalar()
        if idx is not None or now is None:
            return idx
        top = conn.execute(select(func.max(te.idx)).where(te.terminal == terminal)).scalar()
        conn.execute(upsert(conn, terminal_epochs).values(
            terminal=terminal, epoch=epoch, idx=0 if top is None else top + 1, first_seen=now,
        ).on_conflict_do_nothing())
    raise HostStoreError(f"no epoch index for {terminal} after {_ADD_TRIES} tries")


def indexes(conn: Connection, pairs: Iterable[tuple[str, str]], now: datetime) -> dict[tuple[str, str], int]:
    """:func:`index` of every (terminal, epoch) in ``pairs``: the known ones with one query (a
    batch's terminals), each one not heard of before added as :func:`index` adds it."""
    wanted = sorted(set(pairs))
    found: dict[tuple[str, str], int] = {}
    te = terminal_epochs.c
    names = sorted({terminal for terminal, _epoch in wanted})
    for k in range(0, len(names), _LOOKUP_CHUNK):
        for row in conn.execute(select(te.terminal, te.epoch, te.idx).where(
                te.terminal.in_(names[k:k + _LOOKUP_CHUNK]))):
            found[(row.terminal, row.epoch)] = row.idx
    out = {}
    for terminal, epoch in wanted:
        idx = found.get((terminal, epoch))
        if idx is None:
            idx = index(conn, terminal, epoch, now)
            assert idx is not None
        out[(terminal, epoch)] = idx
    return out


def key(idx: int, number: int) -> int:
    """The stored ``seq`` of report ``number`` of the epoch at place ``idx``."""
    if not 0 <= number < EPOCH_SPAN:
        raise HostStoreError(f"report number {number} is outside 0..2^40-1")
    return idx * EPOCH_SPAN + number


def split(seq: int) -> tuple[int, int]:
    """(epoch place, report number) of a stored ``seq``."""
    return divmod(seq, EPOCH_SPAN)


def held(conn: Connection, terminal: str, epoch: str) -> int:
    """The highest report number stored for ``terminal`` in ``epoch`` (0: none)."""
    idx = index(conn, terminal, epoch, None)
    if idx is None:
        return 0
    m = messages.c
    top = conn.execute(select(func.max(m.seq)).where(
        m.terminal == terminal, m.seq >= idx * EPOCH_SPAN, m.seq < (idx + 1) * EPOCH_SPAN)).scalar()
    return 0 if top is None else split(top)[1]
