"""Terminals' MQTT clients on one shared network loop (the load test's simulator process) against
the floor's NATS cluster: TLS with the casino's certificates, PUBACKs, and the loss of the node they
are on, after which every one reconnects to another node and resubscribes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from egmproto.mqtt import MqttClient, down_topic, up_topic
from egmproto.mqtt_loop import SharedLoop
from host.local.nats import NatsCluster

from .conftest import needs_nats, terminal_client, wait_for

TERMINALS = ("T1", "T2", "T-001")


@needs_nats
def test_terminals_on_a_shared_loop_move_to_another_node_together(cluster: NatsCluster,
                                                                  casino: dict[str, Path]) -> None:
    loop = SharedLoop("egm-test-floor")
    ups: dict[str, list[bool]] = {t: [] for t in TERMINALS}
    terms: list[MqttClient] = [
        terminal_client(casino, t, cluster.mqtt_urls, subscriptions=[down_topic(t)], loop=loop,
                        min_backoff=0.05, max_backoff=0.5, on_connection=ups[t].append)
        for t in TERMINALS]
    try:
        for term in terms:
            term.start()
        assert all(term.wait_connected(20) for term in terms)
        acked: list[str] = []

        def ack(terminal: str) -> Callable[[], None]:
            return lambda: acked.append(terminal)

        for term in terms:
            assert term.publish(up_topic(term.client_id), b"before", ack(term.client_id))
        wait_for(lambda: sorted(acked) == sorted(TERMINALS), what="every PUBACK from the first node")
        assert {term.address.url for term in terms} == {cluster.mqtt_urls[0]}
        cluster.kill(0)
        wait_for(lambda: all(u[:2] == [True, False] for u in ups.values()), what="every on_connection(False)")
        wait_for(lambda: all(term.connected for term in terms), timeout=60, what="every terminal on another node")
        assert all(term.address.url != cluster.mqtt_urls[0] for term in terms)
        acked.clear()
        for term in terms:
            assert term.publish(up_topic(term.client_id), b"after", ack(term.client_id))
        wait_for(lambda: sorted(acked) == sorted(TERMINALS), what="every PUBACK from the new node")
        assert loop.watched == len(TERMINALS)
    finally:
        for term in terms:
            term.stop()
        loop.close()
    assert loop.watched == 0
