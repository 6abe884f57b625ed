"""The real thing through the floor broker cluster: a terminal's HostLink (its outbox, signed and
encrypted envelopes) over MQTT to a 3-node NATS cluster, the host started as ``egm host serve
--jetstream`` starts it (host.runner.start_host) with a SQLite store: every report stored once and
acknowledged, the node under the terminal killed mid-stream, a disable command delivered."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from egmproto.identity import TerminalIdentity
from egmproto.mqtt import BrokerAddress, MqttClient
from firmware.hostlink.link import HostLink
from firmware.ledger.ledger import Ledger
from host.local.nats import NatsCluster
from host.nats_downlink import NatsDownlink
from host.runner import start_host
from host.store import HostStore

from .conftest import needs_nats, terminal_tls, wait_for
from .test_node_loss import stream_state


def cabinet() -> SimpleNamespace:
    cab = SimpleNamespace(disabled=False)
    cab.disable = lambda: setattr(cab, "disabled", True)
    cab.enable = lambda: setattr(cab, "disabled", False)
    return SimpleNamespace(cabinet=cab, wake=lambda: None)


def drive(link: HostLink, until: Callable[[], object], timeout: float = 60.0, what: str = "the link",
          host: object = None) -> None:
    """The terminal's loop (it polls its link) until ``until()``."""
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            seen = "" if host is None else f"; host {host.server.stats}, JetStream {host.source.stats}"  # type: ignore[attr-defined]
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; link {link.status()}, "
                                 f"MQTT {link.client.stats}{seen}")
        link.poll()
        time.sleep(0.01)


@needs_nats
def test_reports_acks_and_commands_through_the_cluster(tmp_path: Path, cluster: NatsCluster,
                                                       casino: dict[str, Path]) -> None:
    pki = casino["dir"]
    with contextlib.ExitStack() as stack:
        store = HostStore.open(str(tmp_path / "host.db"))
        stack.callback(store.close)
        # the host's reports from the stream, its way out core NATS, both through every node
        host = start_host(stack, store=store, pki=pki, broker_url=None,
                          name="egm-host", kem_name="egm-host.kem", packages_dir=None,
                          jetstream_urls=cluster.nats_url)
        assert host.source is not None and host.source.wait_ready(30)
        assert isinstance(host.server.client, NatsDownlink)               # no MQTT connection of its own
        assert host.server.client.wait_connected(10)

        ledger = Ledger.open(tmp_path / "T1")
        stack.callback(ledger.close)
        terminal = cabinet()
        addresses = BrokerAddress.parse_list(cluster.mqtt_url, terminal_tls(casino, "T1"))  # node A first
        link = HostLink(ledger, TerminalIdentity.load(pki, "T1"), functools.partial(MqttClient, address=addresses),
                        terminal=terminal, ack_timeout_s=2.0)
        link.start()
        stack.callback(link.stop)

        def delivered() -> bool:
            return link.connected and link.session_open and not len(link.outbox)

        for i in range(20):
            ledger.event("door", door="main", open=bool(i % 2))
        drive(link, delivered, what="the first reports acknowledged", host=host)
        assert link.client.address.url == cluster.mqtt_urls[0]
        for i in range(40):                                               # the node dies under it
            ledger.event("door", door="main", open=bool(i % 2))
            if i == 10:
                cluster.kill(0)
            link.poll()
        drive(link, delivered, timeout=120, what="every report acknowledged after the node loss",
              host=host)
        assert link.client.address.url != cluster.mqtt_urls[0]
        cluster.restart(0)                                                # the node rejoins
        wait_for(lambda: all(r.current for r in stream_state(cluster, casino, 0).cluster.replicas or []),
                 what="the restarted node's replica of the stream to catch up")

        last = link.outbox.last_number
        assert store.sequence("T1") == {"count": last, "first": 1, "last": last, "gaps": []}
        assert store.meters("T1")["T1"]["credits"] == ledger.meters_report()["credits"]

        store.queue_command("T1", "disable", {"reason": "floor test"})   # as `egm host disable` does
        drive(link, lambda: terminal.cabinet.disabled and not store.pending_commands("T1"),
              what="the disable command applied and confirmed", host=host)
        assert [c["type"] for c in store.commands("T1")][:1] == ["disable"]
        assert host.server.stats["stored"] >= last
