"""What the floor page reads beyond :class:`HostStore`'s own queries: when each terminal last
played, a terminal's tilts and command deliveries, one voucher, one round (docs/floor-web.md).

Plain functions of a connection, run in one read transaction by :class:`FloorQueries`; every time
comes back as ISO 8601 with its offset, like host/store_queries.py.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from host.store import HostStore
from host.store_queries import iso
from host.store_schema import messages, rounds, terminal_commands, terminals, tilts, vouchers


def last_rounds(conn: Connection) -> dict[str, str]:
    """{terminal: when the host received its newest round record} (terminals with a round)."""
    newest = (select(func.max(rounds.c.seq)).where(rounds.c.terminal == terminals.c.terminal)
              .correlate(terminals).scalar_subquery())
    rows = conn.execute(select(terminals.c.terminal, messages.c.received_at)
                        .select_from(terminals)
                        .join(messages, (messages.c.terminal == terminals.c.terminal)
                              & (messages.c.seq == newest)))
    return {r.terminal: iso(r.received_at) or "" for r in rows}


def tilts_of(conn: Connection, terminal: str) -> list[dict[str, Any]]:
    """Every tilt the terminal ever had, open ones first, newest change first."""
    t = tilts.c
    rows = conn.execute(select(t.tilt, t.open, t.reason, t.changed_seq, t.changed_at)
                        .where(t.terminal == terminal).order_by(t.open.desc(), t.changed_seq.desc()))
    return [{"tilt": r.tilt, "open": bool(r.open), "reason": r.reason, "seq": r.changed_seq,
             "changed_at": iso(r.changed_at)} for r in rows]


def deliveries(conn: Connection, terminal: str, last: int) -> list[dict[str, Any]]:
    """The terminal's host commands (numbered per terminal) and how far each got, newest first."""
    c = terminal_commands.c
    rows = conn.execute(select(c.cmd, c.type, c.body, c.queued_at, c.sent_at, c.sends, c.confirmed_at)
                        .where(c.terminal == terminal).order_by(c.cmd.desc()).limit(last))
    return [{"cmd": r.cmd, "type": r.type, "body": r.body, "queued_at": iso(r.queued_at),
             "sent_at": iso(r.sent_at), "sends": r.sends, "confirmed_at": iso(r.confirmed_at)}
            for r in rows]


def voucher(conn: Connection, validation: str) -> dict[str, Any] | None:
    v = vouchers.c
    row = conn.execute(select(vouchers).where(v.validation == validation)).first()
    if row is None:
        return None
    return {k: (iso(val) if k.endswith("_at") else val) for k, val in row._mapping.items()}


def round_record(conn: Connection, terminal: str, seq: int) -> dict[str, Any] | None:
    r = rounds.c
    row = conn.execute(select(r.seq, r.round_id, r.game, r.sent_at, r.record)
                       .where(r.terminal == terminal, r.seq == seq)).first()
    if row is None:
        return None
    return {"seq": row.seq, "round_id": row.round_id, "game": row.game, "sent_at": iso(row.sent_at),
            "record": row.record}


class FloorQueries:
    """The reads above, each in one read transaction of ``store``."""

    def __init__(self, store: HostStore) -> None:
        self._store = store

    def last_rounds(self) -> dict[str, str]:
        return self._store.transaction(last_rounds)

    def tilts(self, terminal: str) -> list[dict[str, Any]]:
        return self._store.transaction(lambda c: tilts_of(c, terminal))

    def deliveries(self, terminal: str, last: int = 50) -> list[dict[str, Any]]:
        return self._store.transaction(lambda c: deliveries(c, terminal, last))

    def voucher(self, validation: str) -> dict[str, Any] | None:
        return self._store.transaction(lambda c: voucher(c, validation))

    def round(self, terminal: str, seq: int) -> dict[str, Any] | None:
        return self._store.transaction(lambda c: round_record(c, terminal, seq))
