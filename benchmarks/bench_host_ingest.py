"""Host ingest into PostgreSQL (issue 27): reports/s with one transaction per report
(``HostStore.record``) against one per batch (``record_batch``), and signed+encrypted envelopes
through ``HostServer.handle_batch`` (open, verify, store, seal each ack) against the same bodies as
plain JSON straight into ``record_batch``. The server is a PostgreSQL of our own
(``host.local.postgres.LocalPostgres``) with fsync on: every commit is a real flush. One process,
no broker (that is the host link benchmark's job).

    .venv/bin/python -m benchmarks.bench_host_ingest [--reports 4000] [--batch 200]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from egmproto.envelope import seal
from egmproto.identity import HostIdentity, TerminalIdentity
from egmproto.mqtt import up_topic
from egmproto.pki import ensure_development_pki, issue
from host.local.postgres import LocalPostgres
from host.server import HostServer
from host.store import HostStore, Report

TERMINALS = 20
EPOCH = "0123456789abcdef"


def _body(i: int) -> dict:
    return {"epoch": EPOCH, "credits": i, "meters": {"coin_in": 25 * i, "games_played": i}}


def run(reports: int = 4000, batch: int = 200) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp, LocalPostgres(durable=True) as pg:
        def store(name: str) -> HostStore:
            return HostStore.open(pg.create_database(name))

        now = datetime.now(UTC)
        items = [Report(f"B{i % TERMINALS:03d}", i // TERMINALS + 1, "meters", now, _body(i), EPOCH)
                 for i in range(reports)]
        s = store("one")
        n1 = min(reports, 1000)
        t = time.perf_counter()
        for r in items[:n1]:
            s.record(r.terminal, r.seq, r.type, r.sent_at, r.body, epoch=r.epoch)
        out["record"] = n1 / (time.perf_counter() - t)
        s.close()
        s = store("batch")
        t = time.perf_counter()
        for k in range(0, reports, batch):
            s.record_batch(items[k:k + batch])
        out["record_batch"] = reports / (time.perf_counter() - t)
        s.close()

        # plain JSON bodies (as they would arrive unsigned) parsed and stored in batches
        plain = [json.dumps({"terminal": r.terminal, "seq": r.seq, "body": r.body}).encode() for r in items]
        s = store("plain")
        t = time.perf_counter()
        for k in range(0, reports, batch):
            docs = [json.loads(p) for p in plain[k:k + batch]]
            s.record_batch([Report(d["terminal"], d["seq"], "meters", now, d["body"], EPOCH) for d in docs])
        out["plain_batch"] = reports / (time.perf_counter() - t)
        s.close()

        paths = Path(tmp)
        ensure_development_pki(paths, "B000")
        pki = paths / "pki"
        ids = {}
        for j in range(TERMINALS):
            name = f"B{j:03d}"
            if not (pki / "issued" / f"{name}.cert.pem").exists():
                issue(pki, "terminal", name)
            ids[name] = TerminalIdentity.load(pki, name)
        host_id = HostIdentity(pki)
        sealed = [(up_topic(r.terminal), seal(sender_id=r.terminal, seq=r.seq, time=datetime.now(UTC), type="meters",
                                               body=r.body, signing_key=ids[r.terminal].signing_key,
                                               recipient_public_key=ids[r.terminal].host_kem_key)) for r in items]
        s = store("sealed")
        server = HostServer(s, host_id)
        # every terminal's hello first: the acks are sealed to its key, as on the floor
        for j, name in enumerate(ids):
            s.record(name, 0, "hello", now, {"epoch": EPOCH, "kem_public": _kem_public(j)}, epoch=EPOCH)
        t = time.perf_counter()
        for k in range(0, reports, batch):
            outcomes = server.handle_batch(sealed[k:k + batch])
            assert all(o == "stored" for o in outcomes), set(outcomes)
        out["sealed_batch"] = reports / (time.perf_counter() - t)
        out["ratio"] = out["sealed_batch"] / out["plain_batch"]
        s.close()
        out["sealed_2_workers"] = _workers(pg.create_database("workers"), pki, sealed, batch, 2)
    return out


def _workers(url: str, pki: Path, sealed: list[tuple[str, bytes]], batch: int, n: int) -> float:
    """Reports/s of ``n`` worker processes (each its own HostServer) sharing ``sealed`` on one
    database, from the moment all are ready to the last one's end."""
    with HostStore.open(url) as s:
        for j in range(TERMINALS):
            s.record(f"B{j:03d}", 0, "hello", datetime.now(UTC),
                     {"epoch": EPOCH, "kem_public": _kem_public(j)}, epoch=EPOCH)
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(n + 1), ctx.Queue()
    shares = [sealed[k::n] for k in range(n)]
    procs = [ctx.Process(target=_worker, args=(url, str(pki), share, batch, barrier, out)) for share in shares]
    for p in procs:
        p.start()
    barrier.wait()
    t = time.perf_counter()
    stored = sum(out.get(timeout=600) for _ in procs)
    elapsed = time.perf_counter() - t
    for p in procs:
        p.join()
    assert stored == len(sealed), (stored, len(sealed))
    return stored / elapsed


def _worker(url: str, pki: str, share: list[tuple[str, bytes]], batch: int, barrier: Any, out: Any) -> None:
    store = HostStore.open(url)
    server = HostServer(store, HostIdentity(Path(pki)))
    barrier.wait()
    stored = 0
    for k in range(0, len(share), batch):
        stored += sum(o == "stored" for o in server.handle_batch(share[k:k + batch]))
    store.close()
    out.put(stored)


def _kem_public(j: int) -> str:
    import base64

    from cryptography.hazmat.primitives.asymmetric import x25519
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
    key = x25519.X25519PrivateKey.from_private_bytes(bytes([j + 1]) * 32).public_key()
    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


_RESULTS: dict[str, float] = {}


def _results() -> dict[str, float]:
    if not _RESULTS:
        _RESULTS.update(run())
    return _RESULTS


BENCHMARKS = [
    ("host ingest PostgreSQL (fsync on): record, one transaction per report", lambda: (_results()["record"], "reports/s")),
    ("host ingest PostgreSQL (fsync on): record_batch, 200 per transaction", lambda: (_results()["record_batch"], "reports/s")),
    ("host ingest PostgreSQL: signed+encrypted through handle_batch", lambda: (_results()["sealed_batch"], "reports/s")),
    ("host ingest PostgreSQL: plain JSON into record_batch", lambda: (_results()["plain_batch"], "reports/s")),
    ("host ingest PostgreSQL: ratio signed+encrypted / plain", lambda: (_results()["ratio"], "x")),
    ("host ingest PostgreSQL: signed+encrypted, 2 worker processes", lambda: (_results()["sealed_2_workers"], "reports/s")),
]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", type=int, default=4000)
    ap.add_argument("--batch", type=int, default=200)
    args = ap.parse_args()
    for k, v in run(args.reports, args.batch).items():
        print(f"{k:14s} {v:10.2f}")
