"""LocalPostgres: a paused server stalls the store and a resumed one finishes the work; a server
that cannot start says why with its own log."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from host.local.postgres import LocalPostgres, LocalPostgresError, find_binaries
from host.store import HostStore, Report
from tests.host.conftest import T0


def test_a_paused_server_stalls_the_batch_and_a_resumed_one_finishes_it(own_postgres: LocalPostgres) -> None:
    name = f"egm_pause_{uuid.uuid4().hex[:8]}"
    with HostStore.open(own_postgres.create_database(name)) as store:
        store.record_batch([Report("T1", 1, "meters", T0, {"credits": 1})])
        done: list[list[bool]] = []
        own_postgres.pause()
        try:
            worker = threading.Thread(target=lambda: done.append(
                [r.stored for r in store.record_batch([Report("T1", n, "meters", T0, {"credits": n})
                                                       for n in range(2, 52)])]))
            worker.start()
            time.sleep(1.0)
            assert not done, "the batch finished against a stopped server"
        finally:
            own_postgres.resume()
        worker.join(timeout=30)
        assert done == [[True] * 50]
        assert store.sequence("T1") == {"count": 51, "first": 1, "last": 51, "gaps": []}
    own_postgres.drop_database(name)


def test_a_server_that_cannot_start_says_why() -> None:
    if find_binaries() is None:
        pytest.skip("PostgreSQL is not installed")
    pg = LocalPostgres(durable=False, settings={"shared_buffers": "not-a-size"})
    try:
        with pytest.raises(LocalPostgresError, match="shared_buffers"):
            pg.start()
    finally:
        pg.stop()
    assert pg.root is None


def test_a_database_name_is_checked(own_postgres: LocalPostgres) -> None:
    with pytest.raises(LocalPostgresError, match="letters, digits"):
        own_postgres.create_database('x"; DROP DATABASE postgres; --')


def test_a_paused_server_stops() -> None:
    if find_binaries() is None:
        pytest.skip("PostgreSQL is not installed")
    pg = LocalPostgres(durable=False).start()
    with HostStore.open(pg.create_database("x")) as store:      # a backend of its own to pause
        store.record("T1", 1, "meters", T0, {"credits": 1})
        pg.pause()
        began = time.monotonic()
        pg.stop()
        assert time.monotonic() - began < 10 and pg.root is None
