"""Ingest terminal messages (one, or a batch): their ``messages`` rows and everything derived from
them, on the caller's connection (the caller owns the transaction, so it is all or nothing).

Order inside the transaction, which is what makes it correct under concurrency:

1. ``INSERT ... ON CONFLICT DO NOTHING`` into ``messages``: no row inserted = a duplicate, and the
   function returns at once (nothing else is touched). A concurrent insert of the same key waits
   on the unique index and then sees the conflict.
2. Upsert the ``terminals`` row. On PostgreSQL this takes the row lock, so the derivations of two
   messages from one terminal never interleave; on SQLite the whole write is serialised anyway.
3. Derive: ``meters`` -> ``meters_history``, ``event`` -> ``events`` (+ tilts, vouchers and their
   release, disabled),
   ``round`` -> ``rounds``. Every derived state change is ordered by seq, so a message that arrives
   late never undoes a newer one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, case, select, update
from sqlalchemy.engine import Connection

from host import store_commands
from host.store_engine import upsert
from host.store_schema import (
    events,
    messages,
    meters_history,
    rounds,
    terminals,
    tilts,
    voucher_terms,
    vouchers,
)
from host.store_vouchers import RELEASING, Redemption, authorize, release

log = logging.getLogger(__name__)

COUNT_MAX = 2**63 - 1
#: the field of a voucher's ``issued`` record saying whether its issuer may pay it offline
#: (firmware.cashless.vouchers.OFFLINE_FIELD; the host does not import the terminal's cashless code)
OFFLINE_FIELD = "offline_redemption"


@dataclass(frozen=True)
class Incoming:
    """One verified terminal message, as :meth:`HostStore.record` received it."""

    terminal: str
    seq: int
    type: str
    sent_at: datetime
    received_at: datetime
    body: Mapping[str, Any]


@dataclass(frozen=True)
class Ingested:
    """What :func:`ingest_many` did with one message."""

    outcome: str                #: ``stored``, ``duplicate`` or ``conflict``
    kem_public: str | None      #: the terminal's key to seal to, as of this message
    redemption: Redemption | None = None    #: a ``voucher_redeem_request`` stored: the answer


def ingest_many(conn: Connection, msgs: Sequence[Incoming], now: Callable[[], datetime]) -> list[Ingested]:
    """Store ``msgs`` (in the order given: the caller sorts them by terminal and seq) and their
    derived state, on the caller's transaction; one :class:`Ingested` per message. The statements
    are per batch, not per message (one INSERT of every message, one upsert per terminal, one
    INSERT per derived table); what depends on order (the newest hello's key, tilts against the
    newest power-up, voucher holds, command confirmations) is then applied message by message
    in that order, so a batch does exactly what its messages one after the other would."""
    first: dict[tuple[str, int], int] = {}
    for i, m in enumerate(msgs):
        first.setdefault((m.terminal, m.seq), i)
    inserted: set[tuple[str, int]] = set()
    if first:
        rows = [{"terminal": m.terminal, "seq": m.seq, "type": m.type, "sent_at": m.sent_at,
                 "received_at": m.received_at, "body": dict(m.body)} for m in (msgs[i] for i in first.values())]
        stmt = (upsert(conn, messages).on_conflict_do_nothing(index_elements=["terminal", "seq"])
                .returning(messages.c.terminal, messages.c.seq))
        # RETURNING, not rowcount: the psycopg dialect reports -1 for an INSERT's rowcount
        inserted = {(r.terminal, r.seq) for r in conn.execute(stmt, rows)}
    stored = [i in first.values() and (m.terminal, m.seq) in inserted for i, m in enumerate(msgs)]
    state = _touch_terminals(conn, [m for m, new in zip(msgs, stored, strict=True) if new])
    for m in msgs:                           # terminals with nothing new: their key as it is
        if m.terminal not in state:
            state[m.terminal] = [None, conn.execute(select(terminals.c.kem_public)
                                                    .where(terminals.c.terminal == m.terminal)).scalar()]
    _insert_derived(conn, [m for m, new in zip(msgs, stored, strict=True) if new])
    out = []
    for m, new in zip(msgs, stored, strict=True):
        st = state[m.terminal]
        if not new:
            out.append(Ingested("conflict" if _warn_if_different(conn, m) else "duplicate", st[1]))
            continue
        redemption = None
        if m.type == "hello":
            st[1] = _newest_key(conn, m, st[1])
        elif m.type == "event":
            _event_effect(conn, m, st)
        elif m.type == "voucher_redeem_request":
            validation = m.body.get("validation")
            redemption = (authorize(conn, str(validation), m.terminal, now) if is_validation(validation)
                          else Redemption(False, 0, "invalid validation number"))
        out.append(Ingested("stored", st[1], redemption))
    return out


def _newest_key(conn: Connection, msg: Incoming, current: str | None) -> str | None:
    """A hello's key becomes the terminal's key to seal to unless a newer hello's (higher seq) is
    already there (a hello of an earlier boot arriving late never replaces it)."""
    key = msg.body.get("kem_public")
    if not isinstance(key, str):
        return current
    t = terminals.c
    done = conn.execute(update(terminals).where(
        t.terminal == msg.terminal, t.kem_seq.is_(None) | (t.kem_seq < msg.seq),
    ).values(kem_public=key, kem_seq=msg.seq).returning(t.kem_public)).first()
    return current if done is None else done.kem_public


def _warn_if_different(conn: Connection, msg: Incoming) -> bool:
    row = conn.execute(select(messages.c.type, messages.c.body).where(
        messages.c.terminal == msg.terminal, messages.c.seq == msg.seq)).first()
    if row is not None and (row.type != msg.type or row.body != dict(msg.body)):
        log.warning("terminal %s sent seq %d again with different content (%s); the first one "
                    "stays", msg.terminal, msg.seq, msg.type)
        return True
    return False


def _touch_terminals(conn: Connection, new: Sequence[Incoming]) -> dict[str, list[Any]]:
    """Upsert each terminal's row for its new messages (first/last seen, last seq, count), in
    terminal order; ``{terminal: [power_up_seq, kem_public]}`` as the rows are now."""
    t = terminals.c
    by_terminal: dict[str, list[Incoming]] = {}
    for m in new:
        by_terminal.setdefault(m.terminal, []).append(m)
    state: dict[str, list[Any]] = {}
    if not by_terminal:
        return state
    # One statement for the batch: its rows in terminal order, so concurrent workers lock the
    # terminals' rows in the same order (no deadlock); RETURNING gives each row as it is now.
    # (executemany: compiled once, sent as one multi-row INSERT by SQLAlchemy's insertmanyvalues)
    rows = [{"terminal": terminal, "first_seen": min(m.received_at for m in ms),
             "last_seen": max(m.received_at for m in ms), "last_seq": max(m.seq for m in ms),
             "message_count": len(ms), "disabled": False}
            for terminal, ms in sorted(by_terminal.items())]
    ins = upsert(conn, terminals)
    ex = ins.excluded
    stmt = ins.on_conflict_do_update(
        index_elements=["terminal"],
        set_={
            "last_seen": case((ex.last_seen > t.last_seen, ex.last_seen), else_=t.last_seen),
            "last_seq": case((ex.last_seq > t.last_seq, ex.last_seq), else_=t.last_seq),
            "message_count": t.message_count + ex.message_count,
        },
    ).returning(t.terminal, t.power_up_seq, t.kem_public)
    for row in conn.execute(stmt, rows):
        state[row.terminal] = [row.power_up_seq, row.kem_public]
    return state


# --- per message type: the derived rows -----------------------------------------------------------

def _meters_row(msg: Incoming) -> dict[str, Any]:
    credits = msg.body.get("credits")
    return {"terminal": msg.terminal, "seq": msg.seq, "sent_at": msg.sent_at,
            "credits": credits if _is_count(credits) else None, "body": dict(msg.body)}


def _round_row(msg: Incoming) -> dict[str, Any]:
    record = msg.body.get("record")
    record = record if isinstance(record, dict) else {}
    return {"terminal": msg.terminal, "seq": msg.seq, "sent_at": msg.sent_at, "record": record,
            "round_id": _short_str(record.get("round_id")), "game": _short_str(record.get("game"))}


def _event_row(msg: Incoming) -> dict[str, Any] | None:
    name = msg.body.get("name")
    if not isinstance(name, str):
        log.warning("event seq %d from %s has no name; stored as a message only", msg.seq,
                    msg.terminal)
        return None
    data = msg.body.get("data")
    return {"terminal": msg.terminal, "seq": msg.seq, "name": name[:64], "sent_at": msg.sent_at,
            "data": data if isinstance(data, dict) else {}}


_DERIVED: dict[str, tuple[Table, Callable[[Incoming], dict[str, Any] | None]]] = {
    "meters": (meters_history, _meters_row),
    "event": (events, _event_row),
    "round": (rounds, _round_row),
}


def _insert_derived(conn: Connection, new: Sequence[Incoming]) -> None:
    """``meters`` -> ``meters_history``, ``event`` -> ``events``, ``round`` -> ``rounds``: one
    INSERT per table for the batch."""
    for type_, (table, row_of) in _DERIVED.items():
        rows = [r for r in (row_of(m) for m in new if m.type == type_) if r is not None]
        if rows:
            conn.execute(table.insert(), rows)


def _event_effect(conn: Connection, msg: Incoming, state: list[Any]) -> None:
    """What an event does beyond its row, with the terminal's newest power-up as of this message
    (``state[0]``, kept up to date here when the event is itself a power-up)."""
    name = msg.body.get("name")
    effect = _EVENT_EFFECTS.get(name) if isinstance(name, str) else None
    if effect is None:
        return
    data = msg.body.get("data")
    effect(conn, msg, data if isinstance(data, dict) else {}, state[0])
    if name == "power_up" and (state[0] is None or state[0] < msg.seq):
        state[0] = msg.seq


# --- event effects: tilts --------------------------------------------------------------------------

def _set_tilt(conn: Connection, msg: Incoming, key: str, is_open: bool, reason: str | None) -> None:
    """Tilt ``key`` open/closed as of ``msg.seq``, unless a newer change is already stored."""
    ins = upsert(conn, tilts).values(
        terminal=msg.terminal, tilt=key, open=is_open, reason=reason, changed_seq=msg.seq,
        changed_at=msg.sent_at)
    ex = ins.excluded
    conn.execute(ins.on_conflict_do_update(
        index_elements=["terminal", "tilt"],
        set_={"open": ex.open, "reason": case((ex.open, ex.reason), else_=tilts.c.reason),
              "changed_seq": ex.changed_seq, "changed_at": ex.changed_at},
        where=tilts.c.changed_seq < ex.changed_seq,
    ))


def _tilt_raised(conn: Connection, msg: Incoming, data: dict[str, Any],
                 power_up_seq: int | None) -> None:
    key = _tilt_key(msg, data)
    if key is None:
        return
    # a power-up newer than this raise already closed it (the newer power-up re-raises what is
    # still wrong), so a late raise is recorded closed
    still_open = power_up_seq is None or power_up_seq < msg.seq
    reason = data.get("reason")
    _set_tilt(conn, msg, key, still_open, None if reason is None else str(reason))


def _tilt_cleared(conn: Connection, msg: Incoming, data: dict[str, Any],
                  _power_up_seq: int | None) -> None:
    key = _tilt_key(msg, data)
    if key is not None:
        _set_tilt(conn, msg, key, False, None)


def _power_up(conn: Connection, msg: Incoming, _data: dict[str, Any],
              _power_up_seq: int | None) -> None:
    t = terminals.c
    conn.execute(update(terminals).where(t.terminal == msg.terminal).values(
        power_up_seq=case((t.power_up_seq.is_(None) | (t.power_up_seq < msg.seq), msg.seq),
                          else_=t.power_up_seq)))
    conn.execute(update(tilts).where(
        tilts.c.terminal == msg.terminal, tilts.c.changed_seq < msg.seq,
    ).values(open=False, changed_seq=msg.seq, changed_at=msg.sent_at))


def _tilt_key(msg: Incoming, data: dict[str, Any]) -> str | None:
    key = data.get("tilt")
    if not isinstance(key, str) or not key or len(key) > 64:
        log.warning("tilt event seq %d from %s has no usable tilt key: %r", msg.seq, msg.terminal,
                    key)
        return None
    return key


# --- event effects: host enable / disable -----------------------------------------------------------

def _set_disabled(conn: Connection, msg: Incoming, disabled: bool) -> None:
    t = terminals.c
    conn.execute(update(terminals).where(
        t.terminal == msg.terminal, t.disabled_seq.is_(None) | (t.disabled_seq < msg.seq),
    ).values(disabled=disabled, disabled_seq=msg.seq))


def _command_applied(conn: Connection, msg: Incoming, data: dict[str, Any]) -> None:
    """The terminal applied host command ``cmd`` (and, in order, every one before it)."""
    cmd = data.get("cmd")
    if not _is_count(cmd):
        log.warning("host.command seq %d from %s: bad command number %r", msg.seq, msg.terminal, cmd)
        return
    store_commands.confirm(conn, msg.terminal, cmd, msg.seq, msg.received_at)


# --- event effects: vouchers ------------------------------------------------------------------------

def _ticket_out(conn: Connection, msg: Incoming, data: dict[str, Any],
                _power_up_seq: int | None) -> None:
    """A voucher printed by this terminal: issued (or, if its redemption arrived first, the
    issuer and amount filled in)."""
    validation, cents = _voucher_fields(msg, data)
    if validation is None or cents is None:
        return
    v = vouchers.c
    ins = upsert(conn, vouchers).values(
        validation=validation, amount_cents=cents, state="issued", issued_by=msg.terminal,
        issued_seq=msg.seq, issued_at=msg.sent_at, created_at=msg.received_at)
    ex = ins.excluded
    conn.execute(ins.on_conflict_do_update(
        index_elements=["validation"],
        set_={"issued_by": ex.issued_by, "issued_seq": ex.issued_seq, "issued_at": ex.issued_at,
              "amount_cents": ex.amount_cents},
        where=v.issued_by.is_(None),
    ))


def _ticket_in(conn: Connection, msg: Incoming, data: dict[str, Any],
               _power_up_seq: int | None) -> None:
    """A voucher this terminal took in and paid: redeemed here, authorised first or not (a second
    redemption report of the same voucher leaves the first one in place)."""
    validation, cents = _voucher_fields(msg, data)
    if validation is None:
        return
    ins = upsert(conn, vouchers).values(
        validation=validation, amount_cents=cents or 0, state="redeemed", issued_by=None,
        redeemed_by=msg.terminal, redeemed_seq=msg.seq, redeemed_at=msg.sent_at,
        created_at=msg.received_at)
    ex = ins.excluded
    done = conn.execute(ins.on_conflict_do_update(
        index_elements=["validation"],
        set_={"state": "redeemed", "held_by": None, "redeemed_by": ex.redeemed_by,
              "redeemed_seq": ex.redeemed_seq, "redeemed_at": ex.redeemed_at},
        where=vouchers.c.state != "redeemed",
    ).returning(vouchers.c.validation))
    if done.first() is None:
        # the first redemption stays on the voucher; this one is in the events table
        log.warning("voucher %s reported redeemed again by %s (seq %d): already redeemed",
                    validation, msg.terminal, msg.seq)


def _voucher_state(conn: Connection, msg: Incoming, data: dict[str, Any],
                   _power_up_seq: int | None) -> None:
    """The terminal's own voucher record: ``issued`` gives the voucher's terms (may its issuer pay
    it offline?), ``void`` makes it void (issued -> voided), ``redeem_returned`` and
    ``redeem_abandoned`` release the terminal's hold on it (in this transaction: a host that dies
    after storing the report has released it too); the rest is the terminal's business."""
    state = data.get("state")
    if state not in ("issued", "void") and state not in RELEASING:
        return
    validation = data.get("validation")
    if not is_validation(validation):
        log.warning("voucher event seq %d from %s: bad validation %r", msg.seq, msg.terminal,
                    validation)
        return
    if state == "issued":
        # A record without the flag comes from a terminal that predates it: it may pay offline.
        offline = data.get(OFFLINE_FIELD, True) is not False
        conn.execute(upsert(conn, voucher_terms).values(
            validation=validation, issued_by=msg.terminal, seq=msg.seq, offline_redemption=offline,
        ).on_conflict_do_nothing(index_elements=["validation"]))
        return
    if state in RELEASING:
        release(conn, validation, msg.terminal)
        return
    conn.execute(update(vouchers).where(
        vouchers.c.validation == validation, vouchers.c.state == "issued",
    ).values(state="voided"))


def _voucher_fields(msg: Incoming, data: dict[str, Any]) -> tuple[str | None, int | None]:
    validation, cents = data.get("validation"), data.get("cents")
    if not is_validation(validation):
        log.warning("%s event seq %d from %s: bad validation %r; no voucher recorded",
                    msg.body.get("name"), msg.seq, msg.terminal, validation)
        return None, None
    if not _is_count(cents):
        log.warning("%s event seq %d from %s: bad amount %r", msg.body.get("name"), msg.seq,
                    msg.terminal, cents)
        return validation, None
    return validation, cents


_EVENT_EFFECTS: dict[str, Callable[[Connection, Incoming, dict[str, Any], int | None], None]] = {
    "cabinet.tilt_raised": _tilt_raised,
    "cabinet.tilt_cleared": _tilt_cleared,
    "power_up": _power_up,
    "ticket_out": _ticket_out,
    "ticket_in": _ticket_in,
    "voucher": _voucher_state,
    "host.command": lambda conn, msg, data, _p: _command_applied(conn, msg, data),
    "host.disabled": lambda conn, msg, _d, _p: _set_disabled(conn, msg, True),
    "host.enabled": lambda conn, msg, _d, _p: _set_disabled(conn, msg, False),
}


# --- small checks -----------------------------------------------------------------------------------

def _is_count(v: Any) -> bool:
    """An integer that fits a BIGINT column as a count or amount: 0 .. 2^63-1."""
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= COUNT_MAX


def is_validation(v: Any) -> bool:
    """True for an 18-ASCII-digit validation number."""
    return isinstance(v, str) and len(v) == 18 and v.isascii() and v.isdigit()


def _short_str(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v)
    return s[:64]
