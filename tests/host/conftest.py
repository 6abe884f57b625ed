"""Fixtures of the host tests: a PostgreSQL server of our own (``own_postgres``) for the session."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine

from host.local.postgres import LocalPostgres, LocalPostgresError, find_binaries
from host.store import HostStore
from host.store_schema import metadata

T0 = datetime(2025, 6, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def own_postgres() -> Iterator[LocalPostgres]:
    """A PostgreSQL server started for this test session (fsync off: these tests measure
    nothing); skips with the reason when PostgreSQL is not installed."""
    if find_binaries() is None:
        pytest.skip("PostgreSQL is not installed (no initdb/postgres on PATH or in /usr/lib/postgresql/*/bin)")
    pg = LocalPostgres(durable=False)
    try:
        pg.start()
    except LocalPostgresError as exc:
        pg.stop()
        pytest.fail(f"could not start a local PostgreSQL: {exc}")
    yield pg
    pg.stop()


@pytest.fixture(scope="session")
def pg_url(own_postgres: LocalPostgres) -> Iterator[str]:
    """A fresh database on :func:`own_postgres` for the session."""
    name = f"egm_host_test_{uuid.uuid4().hex[:12]}"
    yield own_postgres.create_database(name)
    own_postgres.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """The URL of an empty host database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'host.db'}"
        return
    url = request.getfixturevalue("pg_url")
    yield url
    engine = create_engine(url)
    try:
        metadata.drop_all(engine)
    finally:
        engine.dispose()


class Clock:
    """A settable clock for ``received_at``."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float = 1) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def open_store(db_url: str, clock: Clock) -> Iterator[Callable[[], HostStore]]:
    """Open more stores on the same database (all closed at the end)."""
    opened: list[HostStore] = []

    def make() -> HostStore:
        s = HostStore.open(db_url, clock=clock)
        opened.append(s)
        return s

    yield make
    for s in opened:
        s.close()


@pytest.fixture
def store(open_store: Callable[[], HostStore]) -> HostStore:
    return open_store()
