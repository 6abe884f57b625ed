"""Turn a host database URL into a configured SQLAlchemy :class:`Engine`.

Accepted: ``sqlite:////abs/path/host.db`` (or ``sqlite:///relative.db``), a bare path ending ``.db``
(SQLite), and ``postgresql://``, ``postgres://`` or ``postgresql+psycopg://`` (always run on the
psycopg 3 driver). Anything else is a :class:`HostStoreError` saying what is accepted.

SQLite connections get WAL, ``foreign_keys=ON``, a busy timeout and ``synchronous=FULL``; the
driver's own transaction handling is switched off so that the ``begin`` event issues the ``BEGIN``:
``BEGIN IMMEDIATE`` on the writer engine (the write lock is taken up front, so a writer never fails
halfway on a lock upgrade) and a plain ``BEGIN`` for readers. PostgreSQL runs READ COMMITTED.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Table, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError

from host.store_errors import HostStoreError

SQLITE_BUSY_TIMEOUT_MS = 30_000
POSTGRES_CONNECT_TIMEOUT_S = 10

_ACCEPTED = "sqlite:////abs/path/host.db, a path ending .db, or postgresql://user@host/db"


def normalise_url(url: str | os.PathLike[str]) -> URL:
    """The SQLAlchemy URL for ``url``, on a supported dialect and driver; :class:`HostStoreError`
    for anything else."""
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    if not isinstance(url, str) or not url.strip():
        raise HostStoreError(f"invalid host database URL {url!r}: expected {_ACCEPTED}")
    text = url.strip()
    if "://" not in text:
        if text.endswith(".db"):
            path = Path(text).expanduser().resolve()
            return URL.create("sqlite", database=str(path))
        raise HostStoreError(f"invalid host database URL {text!r}: expected {_ACCEPTED}")
    try:
        parsed = make_url(text)
    except ArgumentError as exc:
        raise HostStoreError(f"invalid host database URL {text!r}: {exc}; expected {_ACCEPTED}") from None
    if parsed.drivername in ("postgres", "postgresql", "postgresql+psycopg"):
        if not parsed.database:
            raise HostStoreError(f"host database URL {shown(parsed)} names no database")
        return parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        database = parsed.database or ""
        if database in ("", ":memory:") or "mode=memory" in str(parsed.query):
            raise HostStoreError(
                f"in-memory SQLite ({text!r}) is not supported: each connection would see its own "
                "database; give a file, e.g. sqlite:////var/lib/egm-host/host.db")
        return parsed.set(drivername="sqlite")
    raise HostStoreError(
        f"unsupported host database URL {shown(parsed)} (driver {parsed.drivername!r}): expected {_ACCEPTED}")


def shown(url: URL) -> str:
    """``url`` for messages and logs: the password masked."""
    return url.render_as_string(hide_password=True)


def create_store_engine(url: URL) -> Engine:
    """An engine for a URL from :func:`normalise_url` (lazy: nothing is connected yet)."""
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_S
    return create_engine(url, isolation_level="READ COMMITTED", pool_pre_ping=True,
                         connect_args=connect_args)


def writer(engine: Engine) -> Engine:
    """The engine to run write transactions on (``BEGIN IMMEDIATE`` on SQLite; the same elsewhere)."""
    if engine.dialect.name == "sqlite":
        return engine.execution_options(sqlite_begin="IMMEDIATE")
    return engine


def _sqlite_engine(url: URL) -> Engine:
    engine = create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
                                              "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None     # we issue BEGIN ourselves (the begin event)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = FULL")
            cursor.execute("PRAGMA foreign_keys = ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")

    return engine


def upsert(conn: Connection, table: Table) -> Any:
    """The dialect's INSERT (with ``on_conflict_do_nothing`` / ``on_conflict_do_update``)."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
