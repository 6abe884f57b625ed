"""One floor broker node's ``nats-server`` configuration: TLS with client certificates required on
the NATS, MQTT and route listeners, JetStream, MQTT for the terminals, routes to the other nodes.

The one place the configuration is written: :class:`host.local.nats.NatsCluster` (loopback, tests and
lab) and ``egm host broker-config`` (the floor's machines, ``deploy/host/``, ``deploy/compose/``)
both render it here. docs/floor-cluster.md explains each setting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CLUSTER_NAME = "egm-floor"


def quote(value: object) -> str:
    """A NATS configuration string (JSON string syntax is accepted by the NATS parser)."""
    return json.dumps(str(value))


@dataclass(frozen=True)
class BrokerNode:
    """What one node's configuration says; addresses are ``HOST:PORT``."""

    name: str
    client: str                 # NATS clients: the host's workers
    mqtt: str                   # the terminals
    http: str                   # monitoring (/healthz)
    route: str                  # the cluster's routes
    store_dir: Path
    cert: Path
    key: Path
    ca: Path
    routes: Sequence[str] = ()  # the other nodes' route addresses, HOST:PORT
    log_file: Path | None = None
    cluster_name: str = CLUSTER_NAME
    replicas: int = 3


def render(node: BrokerNode) -> str:
    tls = (f"tls {{\n    cert_file: {quote(node.cert)}\n    key_file: {quote(node.key)}\n    ca_file: {quote(node.ca)}\n"
           f"    verify: true\n    timeout: 5\n  }}")
    lines = [
        f"server_name: {quote(node.name)}",
        f"listen: {quote(node.client)}",
        f"http: {quote(node.http)}",
    ]
    if node.log_file is not None:
        lines.append(f"log_file: {quote(node.log_file)}")
    lines += [
        "logtime: true",
        "max_payload: 1MB",
        tls,
        "jetstream {",
        f"  store_dir: {quote(node.store_dir)}",
        "  max_memory_store: 64MB",
        "  max_file_store: 4GB",
        "}",
        "mqtt {",
        f"  listen: {quote(node.mqtt)}",
        f"  {tls}",
        f"  stream_replicas: {node.replicas}",
        # a terminal's QoS 1 subscription is a JetStream consumer; replicated, 1,000 terminals
        # were 1,000 Raft groups and the cluster's meta layer stopped answering on 2 cores
        # (docs/floor-cluster.md, "At 1,000 terminals"); one copy in memory, lost with its node
        # (the terminal subscribes again; what the host sent meanwhile is sent again)
        "  consumer_replicas: 1",
        "  consumer_memory_storage: true",
        "  ack_wait: \"30s\"",
        "  max_ack_pending: 1000",
        "}",
    ]
    if node.routes:
        routes = ", ".join(quote(f"tls://{r}") for r in node.routes)
        lines += [
            "cluster {",
            f"  name: {quote(node.cluster_name)}",
            f"  listen: {quote(node.route)}",
            f"  routes: [{routes}]",
            f"  {tls}",
            "}",
        ]
    return "\n".join(lines) + "\n"
