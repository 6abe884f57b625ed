"""After the run: what the host's database must hold, checked against what each terminal recorded.

Per terminal (its critical memory's epoch): every report number 1..last is stored exactly once
(``lost``: recorded, not stored; ``unexpected``: stored, never recorded); the derived rows are one
per message (``duplicates``: a round, event or meters row more than its messages, a round id twice,
a voucher paid twice); the host's meters are the terminal's last snapshot; every command the host
queued was applied once, in order. Latency: seal (the envelope's time, ``messages.sent_at``) to the
host's storing transaction (``messages.received_at``), both on this machine's clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, delete, func, select

from host.store_engine import create_store_engine, normalise_url
from host.store_epochs import EPOCH_SPAN
from host.store_queries import meters as stored_meters
from host.store_schema import (
    events,
    messages,
    meters_history,
    rounds,
    terminal_commands,
    terminal_epochs,
)


def engine_for(url: str) -> Engine:
    return create_store_engine(normalise_url(url))


def drop_stored(engine: Engine, count: int) -> int:
    """Test the check: delete ``count`` stored reports (and what was derived from them)."""
    with engine.begin() as conn:
        victims = conn.execute(select(messages.c.terminal, messages.c.seq).where(messages.c.type == "event")
                               .order_by(messages.c.terminal, messages.c.seq.desc()).limit(count)).all()
        for terminal, seq in victims:
            for table in (events, rounds, meters_history, messages):
                conn.execute(delete(table).where(table.c.terminal == terminal, table.c.seq == seq))
    return len(victims)


def _pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def check(engine: Engine, summaries: list[dict[str, Any]], queued: dict[str, list[str]],
          window: tuple[datetime, datetime]) -> dict[str, Any]:
    """The run's verdict from the host's database (module docstring). ``window``: from the start of
    generation to its stop (throughput: reports stored in it; latency: every report stored after
    its start)."""
    problems: list[str] = []
    lost = unexpected = 0
    with engine.connect() as conn:
        epochs = {(r.terminal, r.epoch): r.idx for r in conn.execute(select(terminal_epochs))}
        stored_by: dict[str, list[int]] = {}
        for r in conn.execute(select(messages.c.terminal, messages.c.seq)):
            stored_by.setdefault(r.terminal, []).append(r.seq)
        for s in summaries:
            idx = epochs.get((s["terminal"], s["epoch"]))
            mine = {seq % EPOCH_SPAN for seq in stored_by.get(s["terminal"], []) if idx is not None
                    and seq // EPOCH_SPAN == idx}
            missing = s["last_report"] - len(mine & set(range(1, s["last_report"] + 1)))
            extra = len({n for n in mine if n > s["last_report"]})
            lost += missing
            unexpected += extra
            if missing and len(problems) < 20:
                problems.append(f"{s['terminal']}: {missing} of reports 1..{s['last_report']} not stored")
        by_type = Counter({r[0]: r[1] for r in conn.execute(
            select(messages.c.type, func.count()).group_by(messages.c.type))})
        derived = {"event": conn.execute(select(func.count()).select_from(events)).scalar_one(),
                   "round": conn.execute(select(func.count()).select_from(rounds)).scalar_one(),
                   "meters": conn.execute(select(func.count()).select_from(meters_history)).scalar_one()}
        duplicates = sum(max(0, n - by_type.get(t, 0)) for t, n in derived.items())
        round_twice = sum(n - 1 for n in conn.execute(
            select(func.count()).select_from(rounds).group_by(rounds.c.round_id)
            .having(func.count() > 1)).scalars())
        event_names = Counter({r[0]: r[1] for r in conn.execute(
            select(events.c.name, func.count()).group_by(events.c.name))})
        paid = Counter(r.data.get("validation") for r in conn.execute(
            select(events.c.data).where(events.c.name == "ticket_in")))
        paid_twice = sum(n - 1 for n in paid.values() if n > 1)
        duplicates += round_twice + paid_twice
        host_meters = stored_meters(conn, None)
        meters_wrong = [s["terminal"] for s in summaries if s["meters"] is not None and {
            k: host_meters.get(s["terminal"], {}).get(k) for k in ("meters", "credits")} != s["meters"]]
        commands = _commands(conn, summaries, queued, problems)
        timed = conn.execute(select(messages.c.sent_at, messages.c.received_at)
                             .where(messages.c.received_at >= window[0])).all()
    latency = [(r.received_at - r.sent_at).total_seconds() * 1000 for r in timed]
    timeline = _timeline(timed, window[0])
    in_window = sum(1 for r in timed if r.received_at <= window[1])
    seconds = max(1e-9, (window[1] - window[0]).total_seconds())
    if meters_wrong:
        problems.append(f"host meters differ from the terminal's last snapshot: {', '.join(meters_wrong[:10])}")
    if unexpected:
        problems.append(f"{unexpected} stored report numbers no terminal recorded")
    if duplicates:
        problems.append(f"{duplicates} duplicates (derived rows {derived} vs messages {dict(by_type)}, "
                        f"rounds twice {round_twice}, vouchers paid twice {paid_twice})")
    return {
        "sent": sum(s["last_report"] for s in summaries),
        "stored": sum(by_type.values()), "lost": lost, "duplicates": duplicates, "unexpected": unexpected,
        "reports_per_second": round(in_window / seconds, 1), "latency_from": "seal (sent_at) to stored (received_at)",
        "p50_ms": _pct(latency, 0.50), "p90_ms": _pct(latency, 0.90), "p99_ms": _pct(latency, 0.99),
        "max_ms": _pct(latency, 1.0), "kinds": dict(by_type), "events": dict(event_names),
        "vouchers": {"redeemed": len(paid), "paid_twice": paid_twice},
        "meters_mismatch": len(meters_wrong), "commands": commands, "problems": problems,
        "timeline": timeline,
    }


#: the latency timeline's step: seconds of storing time per row
TIMELINE_S = 10


def _timeline(timed: Sequence[Any], start: datetime) -> list[dict[str, Any]]:
    """Per :data:`TIMELINE_S` seconds of storing time (from ``start``): reports stored, p50 and p99
    of their seal-to-stored latency (how each moment of a fault run went)."""
    buckets: dict[int, list[float]] = {}
    for r in timed:
        step = int((r.received_at - start).total_seconds() // TIMELINE_S)
        buckets.setdefault(step, []).append((r.received_at - r.sent_at).total_seconds() * 1000)
    return [{"from_s": k * TIMELINE_S, "stored": len(v), "p50_ms": _pct(v, 0.5), "p99_ms": _pct(v, 0.99)}
            for k, v in sorted(buckets.items())]


def last_stored_after(engine: Engine, stop: datetime) -> float:
    """Seconds from the end of generation to the last report stored (how long the host took to
    catch up; 0 when it had nothing left)."""
    with engine.connect() as conn:
        last = conn.execute(select(func.max(messages.c.received_at))).scalar_one()
    return 0.0 if last is None else round(max(0.0, (last - stop).total_seconds()), 2)


def _commands(conn: Any, summaries: list[dict[str, Any]], queued: dict[str, list[str]],
              problems: list[str]) -> dict[str, Any]:
    """Every command queued was sent, confirmed, and applied by its terminal exactly once, in order."""
    applied = {s["terminal"]: s["commands"] for s in summaries}
    rows: dict[str, list[Any]] = {}
    for r in conn.execute(select(terminal_commands).order_by(terminal_commands.c.terminal, terminal_commands.c.cmd)):
        rows.setdefault(r.terminal, []).append(r)
    wrong = 0
    for terminal, types in queued.items():
        host = [(r.cmd, r.type, r.confirmed_seq is not None) for r in rows.get(terminal, [])]
        done = [(c["cmd"], c["type"]) for c in applied.get(terminal, [])]
        expected = [(i + 1, t) for i, t in enumerate(types)]
        if [(c, t) for c, t, _ in host] != expected or not all(ok for *_, ok in host) or done != expected:
            wrong += 1
            problems.append(f"{terminal}: commands queued {expected}, host {host}, applied {done}")
    return {"queued": sum(map(len, queued.values())), "terminals": len(queued), "wrong": wrong}
