"""The MQTT ingest thread stores what is queued in batches (up to BATCH_MAX per transaction)."""

from __future__ import annotations

import threading
from pathlib import Path

from egmproto.identity import HostIdentity
from egmproto.pki import ensure_development_pki
from host import server as server_mod
from host.server import BATCH_MAX, HostServer
from host.store import HostStore


def test_the_ingest_thread_takes_what_is_queued_as_one_batch(tmp_path: Path, monkeypatch) -> None:
    ensure_development_pki(tmp_path, "T1")
    with HostStore.open(str(tmp_path / "host.db")) as store:
        host = HostServer(store, HostIdentity(tmp_path / "pki"))
        sizes: list[int] = []
        done = threading.Event()

        def handle_batch(items):
            sizes.append(len(items))
            if sum(sizes) == 450:
                done.set()
            return ["refused"] * len(items)

        monkeypatch.setattr(host, "handle_batch", handle_batch)
        for i in range(450):
            host._incoming.put(("egm/v1/T1/up", b"x%d" % i))
        host._incoming.put(None)
        worker = threading.Thread(target=host._work)
        worker.start()
        worker.join(timeout=10)
        assert done.is_set() and not worker.is_alive()
        assert sizes == [BATCH_MAX, BATCH_MAX, 450 - 2 * BATCH_MAX]
    assert server_mod.BATCH_MAX == 200
