"""The ingest benchmark's plain JSON codec (benchmarks/ingest_load.py) is the benchmark's alone:
the product's host refuses such a message, and the benchmark's host runs the same pipeline with it
(stored, acknowledged) so that its figure is a fair "plain" against the signed one."""

from __future__ import annotations

from pathlib import Path

from benchmarks.ingest_load import CountingClient, PlainHostServer, hellos, make_floor
from egmproto.identity import HostIdentity
from host.server import HostServer
from host.store import HostStore


def test_plain_json_is_refused_by_the_product_host_and_taken_by_the_benchmarks(tmp_path: Path) -> None:
    floor = make_floor(tmp_path, 3, 9)
    for cls, name in ((HostServer, "product"), (PlainHostServer, "bench")):
        with HostStore.open(f"sqlite:///{tmp_path / name}.db") as store:
            hellos(store, floor.terminals)
            client = CountingClient()
            server = cls(store, HostIdentity(floor.pki), client_factory=lambda *_a, c=client, **_k: c)
            out = server.handle_batch(floor.plain)
            if cls is HostServer:
                assert set(out) == {"malformed"} and len(store.rejections()) == 9
                assert all(store.sequence(t)["count"] == 1 for t in floor.terminals)     # the hello only
                assert client.published == 0
            else:
                assert out == ["stored"] * 9 and client.published == 9
    with HostStore.open(f"sqlite:///{tmp_path / 'sealed'}.db") as store:   # the real envelopes: the same
        hellos(store, floor.terminals)
        client = CountingClient()
        server = HostServer(store, HostIdentity(floor.pki), client_factory=lambda *_a, **_k: client)
        assert server.handle_batch(floor.sealed) == ["stored"] * 9 and client.published == 9
