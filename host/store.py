"""The reference casino host's data layer: :class:`HostStore`, one schema on SQLite or PostgreSQL.

The host hands it verified terminal messages (decrypted and signature-checked elsewhere) and asks
it about the floor. Every method is one short transaction on one shared :class:`Engine`, so a
``HostStore`` may be used from several threads, and several ``HostStore`` objects (processes) may
share one database. What it guarantees, and why, is in docs/host-store.md; in short:

* :meth:`record` stores a message and everything derived from it, or nothing; a (terminal, epoch,
  seq) already stored is a duplicate that changes nothing (``Recorded(stored=False)``). What a
  report does to a voucher (a request authorises it, a return or an abandonment releases it) is part
  of that transaction.
* :meth:`authorize_redemption` lets exactly one terminal redeem a voucher, however many race.
* :meth:`next_command_seq` never hands out the same number twice.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from host import store_batch, store_commands, store_epochs, store_hostseq
from host import store_queries as q
from host.store_batch import Recorded, Report, check_report, check_terminal, check_time, record_in
from host.store_engine import create_store_engine, normalise_url, shown, upsert, writer
from host.store_errors import HostStoreError
from host.store_ingest import is_validation
from host.store_schema import (
    SCHEMA_VERSION,
    TYPE_MAX,
    add_missing_columns,
    command_queue,
    commands,
    host_meta,
    metadata,
    rejections,
    terminals,
)
from host.store_vouchers import Redemption, authorize, release

__all__ = ["HostStore", "HostStoreError", "Recorded", "Redemption", "Report"]

log = logging.getLogger(__name__)

T = TypeVar("T")

SEQ_MAX = 2**63 - 1
#: PostgreSQL SQLSTATEs worth running the whole transaction again for (serialization, deadlock).
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
_RETRIES = 5


class HostStore:
    """The host database. Open with :meth:`open`; :meth:`close` when done."""

    def __init__(self, engine: Engine, url_shown: str,
                 clock: Callable[[], datetime] | None = None) -> None:
        """Use :meth:`open`; this takes an engine that already has the schema."""
        self._engine = engine
        self._writer = writer(engine)
        self._url = url_shown
        self._clock = clock or (lambda: datetime.now(UTC))
        self._closed = False
        self._host_seqs = store_hostseq.HostSeqs(engine.dialect.name, lambda w: self._run(w, write=True))

    # --- lifecycle ----------------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str | os.PathLike[str], *,
             clock: Callable[[], datetime] | None = None) -> HostStore:
        """Open (and create if missing) the host database at ``url``.

        ``url``: ``sqlite:////abs/path/host.db``, a path ending ``.db``, or ``postgresql://...``
        (run on psycopg 3). ``clock`` (optional) gives the received-at time, timezone-aware.
        :class:`HostStoreError` if the URL is not one of those or the database cannot be opened.
        """
        parsed = normalise_url(url)
        where = shown(parsed)
        try:
            engine = create_store_engine(parsed)
        except ImportError as exc:
            raise HostStoreError(f"cannot open host database {where}: the driver is not "
                                 f"installed ({exc}); for PostgreSQL install "
                                 "egm-terminal[postgres]") from exc
        try:
            _create_schema(engine)
        except HostStoreError:
            engine.dispose()
            raise
        except SQLAlchemyError as exc:
            engine.dispose()
            raise HostStoreError(f"cannot open host database {where}: {_reason(exc)}") from exc
        return cls(engine, where, clock)

    def close(self) -> None:
        """Close every pooled connection; the store cannot be used afterwards."""
        self._closed = True
        self._engine.dispose()

    def __enter__(self) -> HostStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"HostStore({self._url!r})"

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return self._engine.dialect.name

    # --- ingest -------------------------------------------------------------------------------------

    def record(self, terminal_id: str, seq: int, type: str, sent_at: datetime,
               body: Mapping[str, Any], *, epoch: str = store_epochs.NO_EPOCH) -> Recorded:
        """Store one verified terminal message (report number ``seq`` of the terminal's critical
        memory ``epoch``) and what it implies, in one transaction."""
        report = Report(terminal_id, seq, type, sent_at, body, epoch)
        check_report(report)
        received_at = self._now()
        return self._run(lambda conn: record_in(conn, [report], received_at, self._now)[0], write=True)

    def record_batch(self, reports: Sequence[Report]) -> list[Recorded]:
        """Store many verified messages in one transaction, each exactly as :meth:`record` would;
        one :class:`Recorded` per report, in order. A report the database refuses does not block
        the others (they are then stored one by one); it comes back with ``error`` set, as does a
        report with bad fields (host/store_batch.py)."""
        return store_batch.record_batch(reports, lambda work: self._run(work, write=True), self._now)

    def held(self, terminal_id: str, epoch: str) -> int:
        """The highest report number stored for ``terminal_id`` in ``epoch`` (0: none): the
        host's witness of how far that critical memory got (docs/critical-memory.md)."""
        return self._read(lambda conn: store_epochs.held(conn, terminal_id, epoch))

    def log_rejection(self, terminal_id: str | None, reason: str, detail: str, size: int) -> None:
        """Log an envelope the host refused (``terminal_id`` None when the sender is unknown)."""
        self.log_rejections([(terminal_id, reason, detail, size)])

    def log_rejections(self, rows: Sequence[tuple[str | None, str, str, int]]) -> None:
        """Log many refusals ``(terminal_id, reason, detail, size)`` in one transaction."""
        now = self._now()
        values = [{"at": now, "terminal": None if t is None else str(t)[:64], "reason": str(r)[:TYPE_MAX],
                   "detail": str(d), "size": int(n)} for t, r, d, n in rows]
        if values:
            self._run(lambda conn: conn.execute(rejections.insert(), values), write=True)

    def terminal_key(self, terminal_id: str) -> str | None:
        """The key to seal to for ``terminal_id``: its newest (highest seq) hello's ``kem_public``
        as stored by any worker, or None before its first hello."""
        def work(conn: Connection) -> str | None:
            key = conn.execute(select(terminals.c.kem_public)
                               .where(terminals.c.terminal == terminal_id)).scalar()
            if key is None:                   # a terminal last heard of before the column existed
                hello = q.latest(conn, terminal_id, "hello")
                key = None if hello is None else hello.get("kem_public")
            return key if isinstance(key, str) else None

        return self._read(work)

    def host_seqs(self, n: int) -> list[int]:
        """``n`` new host -> terminal sequence numbers, rising, never handed out before, and (on
        PostgreSQL) rising across every process on the database (host/store_hostseq.py)."""
        return self._host_seqs.take(_count(n, "n"))

    # --- vouchers -----------------------------------------------------------------------------------

    def authorize_redemption(self, validation: str, terminal_id: str) -> Redemption:
        """Approve paying voucher ``validation`` at ``terminal_id``, for exactly one terminal.

        One conditional UPDATE decides: ``issued`` -> ``authorised`` held by this terminal, or
        already ``authorised`` by this same terminal (a retry, approved again). Anything else is
        refused with the reason. A terminal other than the issuer is approved only if the issuer's
        ``issued`` record is stored and says it will not pay the voucher offline
        (``voucher_terms``): a voucher its issuer may pay without the host is approved nowhere
        else, so it cannot be paid twice whatever the link does.
        """
        check_terminal(terminal_id)
        if not is_validation(validation):
            return Redemption(False, 0, "invalid validation number")
        return self._run(lambda conn: authorize(conn, validation, terminal_id, self._now), write=True)


    def release_redemption(self, validation: str, terminal_id: str) -> bool:
        """The terminal gave the voucher back: ``authorised`` -> ``issued`` again, only if held by
        ``terminal_id``. True if it was released."""
        check_terminal(terminal_id)
        if not is_validation(validation):
            return False
        return self._run(lambda conn: release(conn, validation, terminal_id), write=True)

    # --- host -> terminal commands -------------------------------------------------------------------

    def next_command_seq(self) -> int:
        """The next host command sequence number: 1, 2, 3, ... for the life of the database."""
        stmt = (update(host_meta).where(host_meta.c.key == "command_seq")
                .values(value=host_meta.c.value + 1).returning(host_meta.c.value))
        return self._run(lambda conn: conn.execute(stmt).scalar_one(), write=True)

    def record_command(self, terminal_id: str, seq: int, type: str, body: Mapping[str, Any]) -> None:
        """Store a command sent to ``terminal_id`` under host seq ``seq`` (from
        :meth:`next_command_seq`). Recording the same command again is a no-op; a different
        command under a seq already used is a :class:`HostStoreError`."""
        check_terminal(terminal_id)
        if not (isinstance(seq, int) and not isinstance(seq, bool) and 0 < seq <= SEQ_MAX):
            raise HostStoreError(f"command seq must be a positive integer, got {seq!r}")
        if not isinstance(type, str) or not 0 < len(type) <= TYPE_MAX:
            raise HostStoreError(f"command type must be a non-empty string, got {type!r}")
        if not isinstance(body, Mapping):
            raise HostStoreError("command body must be a JSON object")
        row = {"seq": seq, "terminal": terminal_id, "type": type, "body": dict(body),
               "created_at": self._now()}

        def work(conn: Connection) -> None:
            done = conn.execute(upsert(conn, commands).values(**row)
                                .on_conflict_do_nothing(index_elements=["seq"])
                                .returning(commands.c.seq))
            if done.first() is not None:
                return
            old = conn.execute(select(commands.c.terminal, commands.c.type, commands.c.body)
                               .where(commands.c.seq == seq)).one()
            if (old.terminal, old.type, old.body) != (terminal_id, type, row["body"]):
                raise HostStoreError(f"host command seq {seq} is already recorded for another "
                                     f"command ({old.type} to {old.terminal})")

        self._run(work, write=True)

    def queue_command(self, terminal_id: str, type: str, body: Mapping[str, Any]) -> int:
        """Queue a command for the running host to send to ``terminal_id`` (``egm host disable``
        and friends); returns its queue id. :meth:`take_commands` hands it out once."""
        check_terminal(terminal_id)
        if not isinstance(type, str) or not 0 < len(type) <= TYPE_MAX:
            raise HostStoreError(f"command type must be a non-empty string, got {type!r}")
        if not isinstance(body, Mapping):
            raise HostStoreError("command body must be a JSON object")
        stmt = (command_queue.insert()
                .values(terminal=terminal_id, type=type, body=dict(body), queued_at=self._now())
                .returning(command_queue.c.id))
        return self._run(lambda conn: conn.execute(stmt).scalar_one(), write=True)

    def take_commands(self, limit: int = 100) -> list[tuple[str, str, dict[str, Any]]]:
        """The queued commands not taken yet, oldest first, as ``(terminal, type, body)``; each is
        marked taken, so two servers polling the same database never both get one."""
        n = _count(limit, "limit")
        return self._run(lambda conn: store_commands.claim_queued(conn, n, self._now()), write=True)

    # --- commands delivered at least once, applied exactly once (host/store_commands.py) ------------

    def add_command(self, terminal_id: str, type: str, body: Mapping[str, Any]) -> int:
        """A command for ``terminal_id``, pending until the terminal confirms it; its number
        (1, 2, 3... per terminal)."""
        check_terminal(terminal_id)
        if not isinstance(type, str) or not 0 < len(type) <= TYPE_MAX:
            raise HostStoreError(f"command type must be a non-empty string, got {type!r}")
        if not isinstance(body, Mapping):
            raise HostStoreError("command body must be a JSON object")
        return self._run(lambda conn: store_commands.add(conn, terminal_id, type, body, self._now()),
                         write=True)

    def adopt_queued_commands(self, limit: int = 100,
                              refuse: Callable[[str, Mapping[str, Any]], str | None] | None = None) -> list[str]:
        """Take the operator's queued commands and make each a pending command of its terminal, in
        one transaction (a host that dies in between loses none); the terminals concerned.
        ``refuse(type, body)`` says why a command can never be sent (it is taken and logged,
        not adopted), or None."""
        n = _count(limit, "limit")

        def work(conn: Connection) -> list[str]:
            now = self._now()
            adopted = []
            # by terminal (each terminal's in queue order): every poller takes the terminals'
            # command numbers in the same order, so two pollers never deadlock on them
            claimed = store_commands.claim_queued(conn, n, now)
            for terminal, type_, body in sorted(claimed, key=lambda c: c[0]):
                why = None if refuse is None else refuse(type_, body)
                if why is not None:
                    log.warning("queued %s for %s dropped: %s", type_, terminal, why)
                    continue
                store_commands.add(conn, terminal, type_, body, now)
                adopted.append(terminal)
            return adopted

        return self._run(work, write=True)

    def pending_commands(self, terminal_id: str | None = None) -> list[dict[str, Any]]:
        """``[{"terminal", "cmd", "type", "body", "sent_at", "sends"}, ...]`` not confirmed yet, by
        terminal and number."""
        return self._read(lambda c: store_commands.pending(c, terminal_id))

    def confirmed_command(self, terminal_id: str) -> int:
        """The highest command number ``terminal_id`` confirmed applied (all below it too), or 0."""
        return self._read(lambda c: store_commands.confirmed(c, terminal_id))

    def command_sent(self, terminal_id: str, cmd: int) -> None:
        """Command ``cmd`` of ``terminal_id`` went out (once more) now."""
        self._run(lambda conn: store_commands.sent(conn, terminal_id, cmd, self._now()), write=True)

    # --- queries ------------------------------------------------------------------------------------

    def meters(self, terminal_id: str | None = None) -> dict[str, dict[str, Any]]:
        """{terminal: body of its newest ``meters`` message (highest seq)}, exactly as received."""
        return self._read(lambda c: q.meters(c, terminal_id))

    def latest(self, terminal_id: str, type: str) -> dict[str, Any] | None:
        """The body of ``terminal_id``'s newest (highest seq) message of ``type``, or None."""
        return self._read(lambda c: q.latest(c, terminal_id, type))

    def meter_history(self, terminal_id: str, last: int = 100) -> list[dict[str, Any]]:
        """``[{"seq", "sent_at", "meters": body}, ...]`` newest (highest seq) first."""
        n = _count(last, "last")
        return self._read(lambda c: q.meter_history(c, terminal_id, n))

    def events(self, terminal_id: str | None = None, last: int = 100) -> list[dict[str, Any]]:
        """``[{"terminal", "seq", "name", "time", "data"}, ...]`` newest first (by seq for one
        terminal; by sent time, then terminal and seq, across terminals)."""
        n = _count(last, "last")
        return self._read(lambda c: q.events_(c, terminal_id, n))

    def rounds(self, terminal_id: str | None = None, last: int = 100) -> list[dict[str, Any]]:
        """``[{"terminal", "seq", "record"}, ...]`` newest first (ordered like :meth:`events`)."""
        n = _count(last, "last")
        return self._read(lambda c: q.rounds_(c, terminal_id, n))

    def sequence(self, terminal_id: str) -> dict[str, Any]:
        """``{"count", "first", "last", "gaps": [[a, b], ...]}``: the stored seqs of a terminal and
        the missing inclusive ranges between first and last (first/last None if none stored)."""
        return self._read(lambda c: q.sequence(c, terminal_id))

    def messages(self, terminal_id: str, after: int = -1, limit: int = 1000) -> list[dict[str, Any]]:
        """``[{"seq", "type", "sent_at", "received_at", "body"}, ...]`` with seq > ``after``,
        ascending, at most ``limit``."""
        n = _count(limit, "limit")
        return self._read(lambda c: q.messages_(c, terminal_id, int(after), n))

    def rejections(self, last: int = 100) -> list[dict[str, Any]]:
        """``[{"id", "at", "terminal", "reason", "detail", "size"}, ...]`` newest first."""
        n = _count(last, "last")
        return self._read(lambda c: q.rejections_(c, n))

    def vouchers(self, terminal_id: str | None = None) -> list[dict[str, Any]]:
        """``[{"validation", "amount_cents", "issued_by", "state", "held_by", "redeemed_by"}]``,
        newest first; with ``terminal_id``, those it issued, holds or redeemed."""
        return self._read(lambda c: q.vouchers_(c, terminal_id))

    def commands(self, terminal_id: str | None = None, last: int = 100) -> list[dict[str, Any]]:
        """``[{"seq", "terminal", "type", "body", "created_at"}, ...]`` newest (highest seq) first."""
        n = _count(last, "last")
        return self._read(lambda c: q.commands_(c, terminal_id, n))

    def terminals(self) -> list[dict[str, Any]]:
        """The floor: ``[{"terminal", "last_seq", "last_seen", "messages", "credits",
        "open_tilts", "disabled"}, ...]`` by terminal id."""
        return self._read(q.floor)

    def transaction(self, work: Callable[[Connection], T], *, write: bool = False) -> T:
        """``work(conn)`` in one transaction of this store, for the modules that bring their own
        statements (host/store_operators.py, host/store_floor.py)."""
        return self._run(work, write=write)

    # --- plumbing -----------------------------------------------------------------------------------

    def _now(self) -> datetime:
        now = self._clock()
        check_time(now, "clock()")
        return now

    def _read(self, work: Callable[[Connection], T]) -> T:
        return self._run(work, write=False)

    def _run(self, work: Callable[[Connection], T], *, write: bool) -> T:
        """Run ``work`` in one transaction (again, on a PostgreSQL deadlock or serialization
        failure); database errors become :class:`HostStoreError`."""
        if self._closed:
            raise HostStoreError(f"the host store {self._url} is closed")
        engine = self._writer if write else self._engine
        for attempt in range(_RETRIES):
            try:
                with engine.begin() as conn:
                    return work(conn)
            except DBAPIError as exc:
                sqlstate = getattr(exc.orig, "sqlstate", None)
                if sqlstate in _RETRY_SQLSTATES and attempt + 1 < _RETRIES:
                    log.info("host database %s: retrying after %s", self._url, sqlstate)
                    time.sleep(0.01 * (attempt + 1))
                    continue
                raise HostStoreError(f"host database {self._url}: {_reason(exc)}") from exc
            except SQLAlchemyError as exc:
                raise HostStoreError(f"host database {self._url}: {_reason(exc)}") from exc
        raise AssertionError("unreachable")


def _create_schema(engine: Engine) -> None:
    """Create missing tables, seed ``host_meta``, and refuse a database of another schema version."""
    try:
        metadata.create_all(engine)
    except SQLAlchemyError:
        # another process created the tables at the same moment (PostgreSQL): they exist now
        metadata.create_all(engine)
    add_missing_columns(engine)
    with writer(engine).begin() as conn:
        for key, value in (("schema_version", SCHEMA_VERSION), ("command_seq", 0)):
            conn.execute(upsert(conn, host_meta).values(key=key, value=value)
                         .on_conflict_do_nothing(index_elements=["key"]))
        if conn.dialect.name == "postgresql":
            store_hostseq.create_sequence(conn)
        version = conn.execute(select(host_meta.c.value)
                               .where(host_meta.c.key == "schema_version")).scalar_one()
    if version != SCHEMA_VERSION:
        raise HostStoreError(f"host database {shown(engine.url)} has schema version {version}; "
                             f"this host speaks version {SCHEMA_VERSION}")


def _reason(exc: SQLAlchemyError) -> str:
    """The driver's own message, first line, without SQLAlchemy's boilerplate."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else exc.__class__.__name__


def _count(n: Any, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise HostStoreError(f"{what} must be a non-negative integer, got {n!r}")
    return n
