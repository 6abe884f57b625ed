"""Host ingest into PostgreSQL (issue 27): reports/s of the host's whole pipeline with the real
signed and encrypted envelopes against the same pipeline with plain JSON, for 1, 2 and 3 worker
processes, in one run; and the store alone (one transaction per report, and per batch).

The pipeline is ``HostServer.handle_batch`` in each worker process (each its own ``HostServer``
and connection to one database, as ``egm host serve --workers N`` runs them): open every message
(decrypt, verify the signature and the terminal's certificate; schema; freshness), store the batch
in one transaction, then seal and publish every acknowledgement. The plain JSON run injects the
benchmark's codec (``benchmarks/ingest_load.PlainHostServer``: same checks of schema and
freshness, no signature, no encryption); everything else is the same code, batches, database
server and published acknowledgements (to a counting stand-in for the broker: the broker's share
is ``bench_broker``). The messages are made before the clock starts (the terminals' cost is
theirs): 200 terminals with their own certificates, half meters, three in ten events, two in ten
round records, handed to the workers round robin as a shared subscription hands them out.

The server is a PostgreSQL of our own (``host.local.postgres.LocalPostgres``) with fsync on.

    .venv/bin/python -m benchmarks.bench_host_ingest [--reports 6000] [--batch 200] [--workers 1 2 3]
    .venv/bin/python -m benchmarks ingest        # the same, as make bench's table rows
"""

from __future__ import annotations

import argparse
import multiprocessing
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.ingest_load import EPOCH, CountingClient, PlainHostServer, hellos, make_floor
from egmproto.identity import HostIdentity
from host.local.postgres import LocalPostgres
from host.server import HostServer
from host.store import HostStore, Report

TERMINALS = 200
CODECS = {"sealed": HostServer, "plain": PlainHostServer}


def run(reports: int = 6000, batch: int = 200, workers: tuple[int, ...] = (1, 2, 3)) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, LocalPostgres(durable=True) as pg:
        floor = make_floor(Path(tmp), TERMINALS, reports)
        db = 0

        def database() -> str:
            nonlocal db
            db += 1
            return pg.create_database(f"ingest{db}")

        for n in workers:
            for codec in CODECS:             # both codecs back to back: the same moment's machine
                out[f"{codec}_{n}"] = _pipeline(database(), floor.pki, floor.terminals,
                                                floor.sealed if codec == "sealed" else floor.plain,
                                                codec, batch, n)
            out[f"ratio_{n}"] = out[f"sealed_{n}"] / out[f"plain_{n}"]
        out.update(_store_only(database(), database(), min(reports, 1000), batch))
    return out


def _store_only(url_one: str, url_batch: str, reports: int, batch: int) -> dict[str, float]:
    """``HostStore.record`` (a transaction per report) and ``record_batch`` alone, one process."""
    now = datetime.now(UTC)
    items = [Report(f"S{i % 20:03d}", i // 20 + 1, "meters", now,
                    {"epoch": EPOCH, "credits": i, "meters": {"coin_in": 25 * i}}, EPOCH) for i in range(reports)]
    out = {}
    with HostStore.open(url_one) as s:
        t = time.perf_counter()
        for r in items:
            s.record(r.terminal, r.seq, r.type, r.sent_at, r.body, epoch=r.epoch)
        out["record"] = reports / (time.perf_counter() - t)
    with HostStore.open(url_batch) as s:
        t = time.perf_counter()
        for k in range(0, reports, batch):
            s.record_batch(items[k:k + batch])
        out["record_batch"] = reports / (time.perf_counter() - t)
    return out


def _pipeline(url: str, pki: Path, terminals: list[str], messages: list[tuple[str, bytes]], codec: str,
              batch: int, n: int) -> float:
    """Reports/s of ``n`` worker processes sharing ``messages`` on one database, from the moment
    all are ready to the last one's end; every message stored and acknowledged, or it raises."""
    with HostStore.open(url) as s:
        hellos(s, terminals)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n + 1), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, str(pki), messages[k::n], codec, batch, barrier, results))
             for k in range(n)]
    for p in procs:
        p.start()
    try:
        barrier.wait(timeout=120)
        t = time.perf_counter()
        done = [results.get(timeout=600) for _ in procs]
        elapsed = time.perf_counter() - t
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    stored, acked = sum(d[0] for d in done), sum(d[1] for d in done)
    if stored != len(messages) or acked != len(messages):
        raise AssertionError(f"{codec} x{n}: {stored} stored, {acked} acknowledged of {len(messages)}")
    return float(stored / elapsed)


def _worker(url: str, pki: str, share: list[tuple[str, bytes]], codec: str, batch: int,
            barrier: Any, results: Any) -> None:
    store = HostStore.open(url)
    server = CODECS[codec](store, HostIdentity(Path(pki)), client_factory=lambda *_a, **_k: CountingClient())
    barrier.wait(timeout=120)
    stored = 0
    for k in range(0, len(share), batch):
        stored += sum(o == "stored" for o in server.handle_batch(share[k:k + batch]))
    store.close()
    results.put((stored, server.client.published if server.client is not None else 0))


_RESULTS: dict[str, float] = {}


def _results() -> dict[str, float]:
    if not _RESULTS:
        _RESULTS.update(run())
    return _RESULTS


def _row(key: str, unit: str = "reports/s") -> Any:
    return lambda: (_results()[key], unit)


_PIPE = "host ingest PostgreSQL (fsync on), 200 terminals, batches of 200, acks published"
BENCHMARKS = [
    *[row for n in (1, 2, 3) for row in (
        (f"{_PIPE}: signed+encrypted, {n} worker process(es)", _row(f"sealed_{n}")),
        (f"{_PIPE}: plain JSON, {n} worker process(es)", _row(f"plain_{n}")),
        (f"{_PIPE}: ratio signed+encrypted / plain, {n} worker process(es)", _row(f"ratio_{n}", "x")),
    )],
    ("host ingest PostgreSQL (fsync on): store alone, record, one transaction per report", _row("record")),
    ("host ingest PostgreSQL (fsync on): store alone, record_batch, 200 per transaction", _row("record_batch")),
]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()
    for k, v in run(args.reports, args.batch, tuple(args.workers)).items():
        print(f"{k:14s} {v:10.2f}")
