"""Host-link figures for docs/benchmarks.md: throughput, envelope cost, latency, 200-terminal ingest.

    .venv/bin/python benchmarks/bench_hostlink.py [--messages 2000] [--terminals 200] [--per-terminal 20]

Everything goes through the embedded broker (amqtt on 127.0.0.1, without TLS: see below) into the reference host's
SQLite store, in one process (the broker's asyncio thread, paho's network threads, the host):

1. **throughput**: N reports (the same payloads both ways) published as fast as the broker takes
   them, until the host has stored all N: signed and HPKE-encrypted envelopes, opened and verified
   by ``HostServer.handle``; then the same JSON bodies published unsigned and unencrypted, stored
   by a plain subscriber with the same ``HostStore.record``. The ratio is sealed / plain.
2. **latency**: reports sent one at a time (the next after the previous is stored), from
   ``seal`` to the store's commit: median and 99th percentile.
3. **ingest**: ``--terminals`` terminals (each its own certificate and key, publishing on its own
   topic through four connections) send ``--per-terminal`` reports each; reports per second stored,
   and exactly-once checked (every terminal's sequence complete, no duplicates).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from egmproto.envelope import open_, seal
from egmproto.identity import HostIdentity, TerminalIdentity
from egmproto.mqtt import BrokerAddress, MqttClient, up_topic
from egmproto.pki import ensure_development_pki, issue
from firmware.hostlink.broker import EmbeddedBroker
from host.server import HostServer
from host.store import HostStore


def body(i: int) -> dict:
    return {"name": "bill_in", "data": {"cents": 2000, "denom_cents": 2000, "n": i}, "at": "2026-11-23T10:00:00.000Z",
            "epoch": "00000000000000b1"}


def wait(predicate, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the host did not store everything in time")
        time.sleep(0.002)


class Bench:
    def __init__(self, root: Path) -> None:
        self.root = root
        paths = ensure_development_pki(root, "T1")
        self.pki = root / "pki"
        # Without TLS: the broker's per-certificate ACL would not let one benchmark connection
        # publish for many terminals. TLS costs the handshake and the record layer on top.
        self.broker = EmbeddedBroker("127.0.0.1", 0)
        self.broker.start()
        self.address = BrokerAddress("127.0.0.1", self.broker.port)
        _ = paths

    def client(self, name: str, **kw) -> MqttClient:
        c = MqttClient(name, self.address, **kw)
        c.start()
        if not c.wait_connected(10):
            raise RuntimeError(f"{name} did not connect")
        return c

    def host(self, db: str) -> tuple[HostServer, HostStore]:
        store = HostStore.open(str(self.root / db))
        server = HostServer(store, HostIdentity(self.pki), functools.partial(MqttClient, address=self.address))
        server.start()
        server.client.wait_connected(10)
        return server, store

    def close(self) -> None:
        self.broker.stop()


def publish_all(client: MqttClient, items: list[tuple[str, bytes]]) -> None:
    for topic, payload in items:
        while not client.publish(topic, payload):
            time.sleep(0.001)


def throughput(b: Bench, n: int) -> dict:
    ident = TerminalIdentity.load(b.pki, "T1")
    server, store = b.host("sealed.db")
    now = datetime.now(UTC)
    t0 = time.perf_counter()
    sealed = [(up_topic("T1"), seal(sender_id="T1", seq=i + 1, time=now, type="event", body=body(i),
                                    signing_key=ident.signing_key, recipient_public_key=ident.host_kem_key))
              for i in range(n)]
    seal_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    host_key = HostIdentity(b.pki).kem_key
    opened = [open_(p, recipient_private_key=host_key,
                    verify_key_for=lambda s: ident.signing_key.public_key(), last_seq_for=lambda s: None,
                    now=now) for _, p in sealed[:200]]
    open_ms = (time.perf_counter() - t0) / len(opened) * 1000
    pub = b.client("bench-sealed")
    t0 = time.perf_counter()
    publish_all(pub, sealed)
    wait(lambda: server.stats["stored"] >= n)
    sealed_s = time.perf_counter() - t0
    pub.stop()
    server.stop()
    store.close()

    plain_store = HostStore.open(str(b.root / "plain.db"))
    done = [0]

    def plain(topic: str, payload: bytes) -> None:
        doc = json.loads(payload)
        plain_store.record("T1", doc["seq"], "event", now, doc["body"])
        done[0] += 1

    sub = b.client("bench-plain-host", subscriptions=["bench/plain"], on_message=plain)
    pub = b.client("bench-plain")
    items = [("bench/plain", json.dumps({"seq": i + 1, "body": body(i)}).encode()) for i in range(n)]
    t0 = time.perf_counter()
    publish_all(pub, items)
    wait(lambda: done[0] >= n)
    plain_s = time.perf_counter() - t0
    pub.stop()
    sub.stop()
    plain_store.close()
    return {"messages": n, "sealed_per_s": n / sealed_s, "plain_per_s": n / plain_s,
            "ratio": (n / sealed_s) / (n / plain_s), "seal_ms": seal_s / n * 1000, "open_ms": open_ms,
            "envelope_bytes": len(sealed[0][1]), "plain_bytes": len(items[0][1])}


def latency(b: Bench, n: int) -> dict:
    ident = TerminalIdentity.load(b.pki, "T1")
    server, store = b.host("latency.db")
    pub = b.client("bench-latency")
    samples = []
    for i in range(n):
        target = server.stats["stored"] + 1
        t0 = time.perf_counter()
        env = seal(sender_id="T1", seq=i + 1, time=datetime.now(UTC), type="event", body=body(i),
                   signing_key=ident.signing_key, recipient_public_key=ident.host_kem_key)
        publish_all(pub, [(up_topic("T1"), env)])
        wait(lambda: server.stats["stored"] >= target)  # noqa: B023
        samples.append((time.perf_counter() - t0) * 1000)
    pub.stop()
    server.stop()
    store.close()
    samples.sort()
    return {"messages": n, "median_ms": statistics.median(samples),
            "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))]}


def ingest(b: Bench, terminals: int, per_terminal: int) -> dict:
    t0 = time.perf_counter()
    idents = []
    for k in range(terminals):
        name = f"F{k:04d}"
        issue(b.pki, "terminal", name)
        idents.append(TerminalIdentity.load(b.pki, name))
    certs_s = time.perf_counter() - t0
    now = datetime.now(UTC)
    batches: list[list[tuple[str, bytes]]] = [[] for _ in range(4)]
    for i in range(per_terminal):                        # interleaved: every terminal talks at once
        for k, ident in enumerate(idents):
            env = seal(sender_id=ident.terminal_id, seq=i + 1, time=now, type="event", body=body(i),
                       signing_key=ident.signing_key, recipient_public_key=ident.host_kem_key)
            batches[k % 4].append((up_topic(ident.terminal_id), env))
    server, store = b.host("ingest.db")
    pubs = [b.client(f"bench-floor-{j}") for j in range(4)]
    total = terminals * per_terminal
    t0 = time.perf_counter()
    threads = [threading.Thread(target=publish_all, args=(p, batch)) for p, batch in zip(pubs, batches, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wait(lambda: server.stats["stored"] + server.stats["duplicate"] >= total)
    ingest_s = time.perf_counter() - t0
    complete = all(store.sequence(i.terminal_id) == {"count": per_terminal, "first": 1, "last": per_terminal, "gaps": []}
                   for i in idents)
    for p in pubs:
        p.stop()
    server.stop()
    store.close()
    return {"terminals": terminals, "reports": total, "per_s": total / ingest_s, "seconds": ingest_s,
            "exactly_once": complete and server.stats["duplicate"] == 0, "certificates_s": certs_s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--latency", type=int, default=300)
    ap.add_argument("--terminals", type=int, default=200)
    ap.add_argument("--per-terminal", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        b = Bench(Path(tmp))
        try:
            t = throughput(b, args.messages)
            print(f"throughput, {t['messages']} reports through the embedded broker into SQLite:")
            print(f"  signed+encrypted  {t['sealed_per_s']:8.0f} reports/s  (envelope {t['envelope_bytes']} bytes; "
                  f"seal {t['seal_ms']:.3f} ms, open+verify {t['open_ms']:.3f} ms each)")
            print(f"  plain JSON        {t['plain_per_s']:8.0f} reports/s  ({t['plain_bytes']} bytes)")
            print(f"  ratio sealed/plain {t['ratio']:.2f}")
            lat = latency(b, args.latency)
            print(f"latency, seal -> stored, one at a time ({lat['messages']}): median {lat['median_ms']:.2f} ms, "
                  f"p99 {lat['p99_ms']:.2f} ms")
            ing = ingest(b, args.terminals, args.per_terminal)
            print(f"ingest, {ing['terminals']} terminals x {args.per_terminal} reports: {ing['per_s']:.0f} reports/s "
                  f"({ing['reports']} in {ing['seconds']:.1f} s); exactly once: {ing['exactly_once']}")
        finally:
            b.close()


if __name__ == "__main__":
    main()


_RESULTS: dict[str, dict] = {}


def _results() -> dict[str, dict]:
    """One run of the three measurements (smaller than the script's defaults), shared by the rows."""
    if not _RESULTS:
        with tempfile.TemporaryDirectory() as tmp:
            b = Bench(Path(tmp))
            try:
                _RESULTS["t"] = throughput(b, 1000)
                _RESULTS["l"] = latency(b, 200)
                _RESULTS["i"] = ingest(b, 200, 10)
            finally:
                b.close()
    return _RESULTS


BENCHMARKS = [
    ("host link: signed+encrypted reports through broker into store", lambda: (_results()["t"]["sealed_per_s"], "reports/s")),
    ("host link: plain JSON, same payloads, same path", lambda: (_results()["t"]["plain_per_s"], "reports/s")),
    ("host link: ratio signed+encrypted / plain", lambda: (_results()["t"]["ratio"], "x")),
    ("host link: latency seal -> stored, median", lambda: (_results()["l"]["median_ms"], "ms")),
    ("host link: latency seal -> stored, p99", lambda: (_results()["l"]["p99_ms"], "ms")),
    ("host link: ingest, 200 terminals", lambda: (_results()["i"]["per_s"], "reports/s")),
]
