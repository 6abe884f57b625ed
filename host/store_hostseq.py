"""Host -> terminal sequence numbers (docs/protocols/host-session.md, "Host sequence numbers").

A terminal refuses any host message whose number is not above the last one it accepted, so the
numbers must rise across everything the host sends, whichever worker sends it:

* **PostgreSQL** (several workers, maybe on several machines): one database ``SEQUENCE``
  (:data:`SEQUENCE`), ``nextval`` for every message (``n`` at a time for a batch). Numbers from two
  workers interleave in the order they were taken, so they are nearly monotonic on the wire; a
  message overtaken by a higher one is refused by its terminal and repaired by the protocol (the
  report is sent again, is a duplicate, and is acknowledged again with a new number). At every
  open the sequence is raised to a floor: microseconds since the Unix epoch (and above every
  number the block scheme below handed out), so a database restored from a backup, or a new one,
  still numbers above anything sent before (unless a million messages a second were sent).
* **SQLite** (one process): blocks of :data:`SEQ_BLOCK` reserved from the ``command_seq`` counter,
  so a restart never reuses a number.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.engine import Connection

from host.store_schema import host_meta

SEQ_BLOCK = 1000
SEQUENCE = "host_seq"


def create_sequence(conn: Connection) -> None:
    """Create :data:`SEQUENCE` if missing and raise it to the floor (PostgreSQL only)."""
    conn.execute(text(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE} AS BIGINT MINVALUE 1"))
    blocks = conn.execute(select(host_meta.c.value).where(host_meta.c.key == "command_seq")).scalar() or 0
    floor = max(time.time_ns() // 1000, (blocks + 1) * SEQ_BLOCK)
    # GREATEST with its own last value: a floor never moves the sequence back
    conn.execute(text(f"SELECT setval('{SEQUENCE}', GREATEST((SELECT last_value FROM {SEQUENCE}), :f))"),
                 {"f": floor})


def block(conn: Connection) -> int:
    """The next block number of the ``command_seq`` counter (1, 2, 3...)."""
    stmt = (update(host_meta).where(host_meta.c.key == "command_seq")
            .values(value=host_meta.c.value + 1).returning(host_meta.c.value))
    return int(conn.execute(stmt).scalar_one())


class HostSeqs:
    """Hands out host sequence numbers for one ``HostStore`` (thread-safe)."""

    def __init__(self, dialect: str, run: Callable[[Callable[[Connection], Any]], Any]) -> None:
        self._dialect = dialect
        self._run = run
        self._lock = threading.Lock()
        self._next = 0
        self._end = 0

    def take(self, n: int) -> list[int]:
        """``n`` new numbers, rising."""
        if n <= 0:
            return []
        if self._dialect == "postgresql":
            stmt = text(f"SELECT nextval('{SEQUENCE}') FROM generate_series(1, :n)")
            return sorted(self._run(lambda conn: list(conn.execute(stmt, {"n": n}).scalars())))
        out: list[int] = []
        with self._lock:
            while len(out) < n:
                if self._next >= self._end:
                    top = self._run(block)               # block N covers N*SEQ_BLOCK .. +SEQ_BLOCK-1
                    self._next, self._end = top * SEQ_BLOCK, (top + 1) * SEQ_BLOCK
                out.append(self._next)
                self._next += 1
        return out
