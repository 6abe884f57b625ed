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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from host import store_commands, store_epochs
from host import store_queries as q
from host.store_engine import create_store_engine, normalise_url, shown, upsert, writer
from host.store_errors import HostStoreError
from host.store_ingest import Incoming, ingest, is_validation
from host.store_schema import (
    SCHEMA_VERSION,
    TERMINAL_ID_MAX,
    TYPE_MAX,
    command_queue,
    commands,
    host_meta,
    metadata,
    rejections,
)
from host.store_vouchers import Redemption, authorize, release

__all__ = ["HostStore", "HostStoreError", "Recorded", "Redemption"]

log = logging.getLogger(__name__)

T = TypeVar("T")

SEQ_MAX = 2**63 - 1
#: PostgreSQL SQLSTATEs worth running the whole transaction again for (serialization, deadlock).
_RETRY_SQLSTATES = frozenset({"40001", "40P01"})
_RETRIES = 5


@dataclass(frozen=True)
class Recorded:
    """The outcome of :meth:`HostStore.record`."""

    stored: bool        #: False when (terminal, seq) was already stored: a duplicate, nothing changed
    seq: int            #: the stored seq: the report number within its epoch (host/store_epochs.py)
    #: a duplicate whose content differs from the message stored under its (terminal, epoch,
    #: number): not a resend or a replay, the terminal numbered two reports alike (its critical
    #: memory went back)
    conflict: bool = False
    #: the answer to a ``voucher_redeem_request`` stored just now (decided in the same transaction)
    redemption: Redemption | None = None


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
        _check_terminal(terminal_id)
        if not (isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < store_epochs.EPOCH_SPAN):
            raise HostStoreError(f"message seq must be an integer in 0..2^40-1, got {seq!r}")
        if not isinstance(epoch, str) or len(epoch) > TYPE_MAX:
            raise HostStoreError(f"epoch must be a string of at most {TYPE_MAX} characters, got {epoch!r}")
        if not isinstance(type, str) or not 0 < len(type) <= TYPE_MAX:
            raise HostStoreError(f"message type must be a non-empty string, got {type!r}")
        _check_time(sent_at, "sent_at")
        if not isinstance(body, Mapping):
            raise HostStoreError(f"message body must be a JSON object, got {body.__class__.__name__}")
        received_at = self._now()

        def work(conn: Connection) -> Recorded:
            idx = store_epochs.index(conn, terminal_id, epoch, received_at)
            assert idx is not None
            key = store_epochs.key(idx, seq)
            return self._ingest(conn, Incoming(terminal_id, key, type, sent_at, received_at, body))

        return self._run(work, write=True)

    def held(self, terminal_id: str, epoch: str) -> int:
        """The highest report number stored for ``terminal_id`` in ``epoch`` (0: none): the
        host's witness of how far that critical memory got (docs/critical-memory.md)."""
        return self._read(lambda conn: store_epochs.held(conn, terminal_id, epoch))

    def _ingest(self, conn: Connection, msg: Incoming) -> Recorded:
        outcome = ingest(conn, msg)
        if outcome != "stored":
            return Recorded(stored=False, seq=msg.seq, conflict=outcome == "conflict")
        if msg.type != "voucher_redeem_request":
            return Recorded(stored=True, seq=msg.seq)
        validation = msg.body.get("validation")
        answer = (authorize(conn, validation, msg.terminal, self._now) if is_validation(validation)
                  else Redemption(False, 0, "invalid validation number"))
        return Recorded(stored=True, seq=msg.seq, redemption=answer)

    def log_rejection(self, terminal_id: str | None, reason: str, detail: str, size: int) -> None:
        """Log an envelope the host refused (``terminal_id`` None when the sender is unknown)."""
        row = {"at": self._now(), "terminal": None if terminal_id is None else str(terminal_id)[:64],
               "reason": str(reason)[:TYPE_MAX], "detail": str(detail), "size": int(size)}
        self._run(lambda conn: conn.execute(rejections.insert().values(**row)), write=True)

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
        _check_terminal(terminal_id)
        if not is_validation(validation):
            return Redemption(False, 0, "invalid validation number")
        return self._run(lambda conn: authorize(conn, validation, terminal_id, self._now), write=True)


    def release_redemption(self, validation: str, terminal_id: str) -> bool:
        """The terminal gave the voucher back: ``authorised`` -> ``issued`` again, only if held by
        ``terminal_id``. True if it was released."""
        _check_terminal(terminal_id)
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
        _check_terminal(terminal_id)
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
        _check_terminal(terminal_id)
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
        _check_terminal(terminal_id)
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
            for terminal, type_, body in store_commands.claim_queued(conn, n, now):
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
        _check_time(now, "clock()")
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
    with writer(engine).begin() as conn:
        for key, value in (("schema_version", SCHEMA_VERSION), ("command_seq", 0)):
            conn.execute(upsert(conn, host_meta).values(key=key, value=value)
                         .on_conflict_do_nothing(index_elements=["key"]))
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


def _check_terminal(terminal_id: Any) -> None:
    if not isinstance(terminal_id, str) or not 0 < len(terminal_id) <= TERMINAL_ID_MAX:
        raise HostStoreError(f"terminal id must be a non-empty string of at most "
                             f"{TERMINAL_ID_MAX} characters, got {terminal_id!r}")


def _check_time(t: Any, what: str) -> None:
    if not isinstance(t, datetime) or t.tzinfo is None or t.utcoffset() is None:
        raise HostStoreError(f"{what} must be a timezone-aware datetime, got {t!r}")


def _count(n: Any, what: str) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise HostStoreError(f"{what} must be a non-negative integer, got {n!r}")
    return n
