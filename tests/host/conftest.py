"""Fixtures of the host tests: a PostgreSQL server of our own (``own_postgres``) for the session."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from host.local.postgres import LocalPostgres, LocalPostgresError, find_binaries


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
