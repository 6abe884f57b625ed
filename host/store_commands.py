"""Host commands delivered at least once and applied exactly once: the host's half, on the caller's
connection (``HostStore`` owns the transactions; docs/protocols/host-session.md).

A command to a terminal gets the next number of that terminal (1, 2, 3...) when it is added, and
keeps it however often it is sent. It stays pending until the terminal confirms it: the terminal
applies its commands in number order, each in one critical-memory write with a ``host.command``
event, and that event, reported like every record, confirms every command up to its number.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.engine import Connection

from host.store_engine import upsert
from host.store_schema import command_queue, terminal_commands

#: the event a terminal records with each command it applied (firmware.hostlink.link.COMMAND_EVENT)
COMMAND_EVENT = "host.command"

_ADD_TRIES = 100     # each failed try is another server having taken a number: progress


def add(conn: Connection, terminal: str, type_: str, body: Mapping[str, Any], now: datetime) -> int:
    """Add a command for ``terminal`` under its next number; the number."""
    tc = terminal_commands.c
    for _ in range(_ADD_TRIES):       # another server may take the same number at the same moment
        top = conn.execute(select(func.max(tc.cmd)).where(tc.terminal == terminal)).scalar()
        cmd = (top or 0) + 1
        done = conn.execute(upsert(conn, terminal_commands).values(
            terminal=terminal, cmd=cmd, type=type_, body=dict(body), queued_at=now, sends=0,
        ).on_conflict_do_nothing(index_elements=["terminal", "cmd"]).returning(tc.cmd)).first()
        if done is not None:
            return cmd
    raise RuntimeError(f"no command number for {terminal} after {_ADD_TRIES} tries")


def confirmed(conn: Connection, terminal: str) -> int:
    """The highest number ``terminal`` confirmed (every command up to it is applied), or 0."""
    tc = terminal_commands.c
    top = conn.execute(select(func.max(tc.cmd))
                       .where(tc.terminal == terminal, tc.confirmed_seq.is_not(None))).scalar()
    return top or 0


def pending(conn: Connection, terminal: str | None) -> list[dict[str, Any]]:
    """Unconfirmed commands (of one terminal, or of all), by terminal then number."""
    tc = terminal_commands.c
    q = select(tc.terminal, tc.cmd, tc.type, tc.body, tc.sent_at, tc.sends).where(tc.confirmed_seq.is_(None))
    if terminal is not None:
        q = q.where(tc.terminal == terminal)
    return [{"terminal": r.terminal, "cmd": r.cmd, "type": r.type, "body": r.body, "sent_at": r.sent_at,
             "sends": r.sends} for r in conn.execute(q.order_by(tc.terminal, tc.cmd))]


def sent(conn: Connection, terminal: str, cmd: int, now: datetime) -> None:
    tc = terminal_commands.c
    conn.execute(update(terminal_commands).where(tc.terminal == terminal, tc.cmd == cmd)
                 .values(sent_at=now, sends=tc.sends + 1))


def confirm(conn: Connection, terminal: str, upto: int, seq: int, at: datetime) -> None:
    """The terminal's report ``seq`` says every command up to ``upto`` is applied."""
    tc = terminal_commands.c
    conn.execute(update(terminal_commands)
                 .where(tc.terminal == terminal, tc.cmd <= upto, tc.confirmed_seq.is_(None))
                 .values(confirmed_seq=seq, confirmed_at=at))


def claim_queued(conn: Connection, limit: int, now: datetime) -> list[tuple[str, str, dict[str, Any]]]:
    """The operator's queued commands not taken yet, oldest first, each marked taken. Several
    servers may poll one database: on PostgreSQL the rows are locked ``FOR UPDATE SKIP LOCKED``
    (a second poller takes the next ones instead of waiting), and the UPDATE is conditional
    (``taken_at IS NULL``), so no command is ever handed out twice (SQLite: one writer at a time)."""
    qc = command_queue.c
    ids = conn.execute(select(qc.id).where(qc.taken_at.is_(None)).order_by(qc.id).limit(limit)
                       .with_for_update(skip_locked=True)).scalars().all()
    if not ids:
        return []
    rows = conn.execute(update(command_queue).where(qc.id.in_(ids), qc.taken_at.is_(None))
                        .values(taken_at=now).returning(qc.id, qc.terminal, qc.type, qc.body)).all()
    return [(r.terminal, r.type, r.body) for r in sorted(rows, key=lambda r: r.id)]
