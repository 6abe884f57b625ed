"""Read-only queries of the host database, each returning plain JSON-able dicts and lists.

Times come back as ISO 8601 strings in UTC with an explicit ``+00:00`` offset. Every function takes
the connection of one (read) transaction, so what it returns is one consistent snapshot.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, or_, select
from sqlalchemy.engine import Connection

from host.store_schema import (
    commands,
    events,
    messages,
    meters_history,
    rejections,
    rounds,
    terminals,
    tilts,
    vouchers,
)


def iso(t: datetime | None) -> str | None:
    """``t`` as ISO 8601 with its offset (None stays None)."""
    return None if t is None else t.isoformat()


def _latest_meters() -> Select[Any]:
    """(terminal, seq) of each terminal's newest meters snapshot: the highest seq, not the last
    to arrive."""
    return (select(meters_history.c.terminal, func.max(meters_history.c.seq).label("seq"))
            .group_by(meters_history.c.terminal))


def meters(conn: Connection, terminal: str | None) -> dict[str, dict[str, Any]]:
    newest = _latest_meters()
    if terminal is not None:
        newest = newest.where(meters_history.c.terminal == terminal)
    newest_sq = newest.subquery()
    rows = conn.execute(
        select(meters_history.c.terminal, meters_history.c.body)
        .join(newest_sq, (meters_history.c.terminal == newest_sq.c.terminal)
              & (meters_history.c.seq == newest_sq.c.seq))
        .order_by(meters_history.c.terminal))
    return {r.terminal: r.body for r in rows}


def latest(conn: Connection, terminal: str, type_: str) -> dict[str, Any] | None:
    m = messages.c
    return conn.execute(select(m.body).where(m.terminal == terminal, m.type == type_)
                        .order_by(m.seq.desc()).limit(1)).scalar_one_or_none()


def meter_history(conn: Connection, terminal: str, last: int) -> list[dict[str, Any]]:
    m = meters_history.c
    rows = conn.execute(select(m.seq, m.sent_at, m.body).where(m.terminal == terminal)
                        .order_by(m.seq.desc()).limit(last))
    return [{"seq": r.seq, "sent_at": iso(r.sent_at), "meters": r.body} for r in rows]


def events_(conn: Connection, terminal: str | None, last: int) -> list[dict[str, Any]]:
    e = events.c
    q = select(e.terminal, e.seq, e.name, e.sent_at, e.data)
    if terminal is not None:
        q = q.where(e.terminal == terminal).order_by(e.seq.desc())
    else:
        q = q.order_by(e.sent_at.desc(), e.terminal, e.seq.desc())
    return [{"terminal": r.terminal, "seq": r.seq, "name": r.name, "time": iso(r.sent_at),
             "data": r.data} for r in conn.execute(q.limit(last))]


def rounds_(conn: Connection, terminal: str | None, last: int) -> list[dict[str, Any]]:
    r_ = rounds.c
    q = select(r_.terminal, r_.seq, r_.record)
    if terminal is not None:
        q = q.where(r_.terminal == terminal).order_by(r_.seq.desc())
    else:
        q = q.order_by(r_.sent_at.desc(), r_.terminal, r_.seq.desc())
    return [{"terminal": r.terminal, "seq": r.seq, "record": r.record}
            for r in conn.execute(q.limit(last))]


def sequence(conn: Connection, terminal: str) -> dict[str, Any]:
    m = messages.c
    count, first, last = conn.execute(
        select(func.count(), func.min(m.seq), func.max(m.seq)).where(m.terminal == terminal)).one()
    nxt = (select(m.seq.label("seq"), func.lead(m.seq).over(order_by=m.seq).label("nxt"))
           .where(m.terminal == terminal).subquery())
    gaps = conn.execute(select(nxt.c.seq + 1, nxt.c.nxt - 1)
                        .where(nxt.c.nxt > nxt.c.seq + 1).order_by(nxt.c.seq))
    return {"count": count, "first": first, "last": last, "gaps": [[a, b] for a, b in gaps]}


def messages_(conn: Connection, terminal: str, after: int, limit: int) -> list[dict[str, Any]]:
    m = messages.c
    rows = conn.execute(select(m.seq, m.type, m.sent_at, m.received_at, m.body)
                        .where(m.terminal == terminal, m.seq > after)
                        .order_by(m.seq).limit(limit))
    return [{"seq": r.seq, "type": r.type, "sent_at": iso(r.sent_at),
             "received_at": iso(r.received_at), "body": r.body} for r in rows]


def rejections_(conn: Connection, last: int) -> list[dict[str, Any]]:
    j = rejections.c
    rows = conn.execute(select(j.id, j.at, j.terminal, j.reason, j.detail, j.size)
                        .order_by(j.id.desc()).limit(last))
    return [{"id": r.id, "at": iso(r.at), "terminal": r.terminal, "reason": r.reason,
             "detail": r.detail, "size": r.size} for r in rows]


def vouchers_(conn: Connection, terminal: str | None) -> list[dict[str, Any]]:
    v = vouchers.c
    q = select(v.validation, v.amount_cents, v.issued_by, v.state, v.held_by, v.redeemed_by)
    if terminal is not None:
        q = q.where(or_(v.issued_by == terminal, v.held_by == terminal, v.redeemed_by == terminal))
    rows = conn.execute(q.order_by(v.created_at.desc(), v.validation))
    return [dict(r._mapping) for r in rows]


def commands_(conn: Connection, terminal: str | None, last: int) -> list[dict[str, Any]]:
    c = commands.c
    q = select(c.seq, c.terminal, c.type, c.body, c.created_at)
    if terminal is not None:
        q = q.where(c.terminal == terminal)
    return [{"seq": r.seq, "terminal": r.terminal, "type": r.type, "body": r.body,
             "created_at": iso(r.created_at)} for r in conn.execute(q.order_by(c.seq.desc()).limit(last))]


def floor(conn: Connection) -> list[dict[str, Any]]:
    """Every terminal: last seq and time seen, message count, credits, open tilts, disabled."""
    newest = _latest_meters().subquery()
    t = terminals.c
    rows = conn.execute(
        select(t.terminal, t.last_seq, t.last_seen, t.message_count, t.disabled,
               meters_history.c.credits)
        .select_from(terminals
                     .outerjoin(newest, newest.c.terminal == t.terminal)
                     .outerjoin(meters_history, (meters_history.c.terminal == newest.c.terminal)
                                & (meters_history.c.seq == newest.c.seq)))
        .order_by(t.terminal))
    open_tilts: dict[str, list[str]] = {}
    for term, key in conn.execute(select(tilts.c.terminal, tilts.c.tilt)
                                  .where(tilts.c.open.is_(True))
                                  .order_by(tilts.c.terminal, tilts.c.tilt)):
        open_tilts.setdefault(term, []).append(key)
    return [{"terminal": r.terminal, "last_seq": r.last_seq, "last_seen": iso(r.last_seen),
             "messages": r.message_count, "credits": r.credits,
             "open_tilts": open_tilts.get(r.terminal, []), "disabled": bool(r.disabled)}
            for r in rows]
