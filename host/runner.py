"""Start the reference host in this process: used by ``egm host serve`` and by ``egm run``'s
embedded host, so both run the same thing (the broker they use is their own business).

Two ways for the terminals' reports to come in:

* MQTT (the default): the host's MQTT client subscribes to every terminal's ``up`` topic in a
  persistent session and the server's ingest worker handles them one at a time;
* JetStream (``jetstream_urls``, the floor broker cluster): a :class:`host.jetstream.JetStreamSource`
  worker of the consumer group hands the server batches (``HostServer.handle_batch`` where it exists,
  else ``handle`` for each), acknowledged to the stream after they are handled. What the host sends
  (acknowledgements, commands, replies) goes out as core NATS messages on the terminals' ``down``
  subjects (:class:`host.nats_downlink.NatsDownlink`); the host holds no MQTT connection then.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from egmproto.identity import HostIdentity
from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
from host.nats_downlink import NatsDownlink
from host.packages import PackageDepot, PackageServer
from host.server import HostServer
from host.store import HostStore

log = logging.getLogger("egm.host")


@dataclass
class RunningHost:
    server: HostServer
    packages: PackageServer | None
    #: the JetStream worker (None: the reports come over MQTT)
    source: Any = None


def batch_handler(server: HostServer) -> Callable[[list[tuple[str, bytes]]], object]:
    """What a JetStream batch goes to: the server's ``handle_batch`` (one transaction for the batch,
    acknowledgements after its commit)."""
    return server.handle_batch


def _downlink(client_id: str, *, urls: str, tls: TlsFiles, **_mqtt_only: Any) -> NatsDownlink:
    """The host's way out when JetStream brings the reports: core NATS on the cluster
    (host/nats_downlink.py says why not MQTT QoS 1), with a name of its own per process."""
    return NatsDownlink(f"{client_id}-{secrets.token_hex(4)}", urls, tls=tls)


def start_host(stack: contextlib.ExitStack, *, store: HostStore, pki: Path, broker_url: str | None,
               name: str, kem_name: str, packages_dir: Path | None,
               packages_bind: tuple[str, int] = ("127.0.0.1", 0),
               packages_public_host: str | None = None,
               jetstream_urls: str | None = None, worker: int | None = None) -> RunningHost:
    """The host's MQTT client on ``broker_url`` (TLS with its certificate for ``mqtts://``; a
    cluster: ``mqtts://H1:P1,H2:P2,...``) and, with ``packages_dir``, the package server; with
    ``jetstream_urls`` (``tls://H1:P1,...``) a JetStream worker brings the reports and the host
    sends through the same NATS nodes (``broker_url`` unused). ``stack`` stops them."""
    issued = pki / "issued"
    tls = TlsFiles(ca=pki / "ca.cert.pem", cert=issued / f"{name}.cert.pem", key=issued / f"{name}.key.pem")
    packages = None
    if packages_dir is not None:
        packages = PackageServer(PackageDepot(packages_dir), *packages_bind, tls=(tls.cert, tls.key, tls.ca),
                                 crl=pki / "crl.pem", public_host=packages_public_host).start()
        stack.callback(packages.stop)
    if jetstream_urls:
        factory: Callable[..., Any] = functools.partial(_downlink, urls=jetstream_urls, tls=tls)
    else:
        if not broker_url:
            raise ValueError("start_host: a broker_url, or jetstream_urls")
        address = BrokerAddress.parse_list(broker_url, tls if broker_url.strip().startswith("mqtts://") else None)
        factory = functools.partial(MqttClient, address=address)
    server = HostServer(store, HostIdentity(pki, name=name, kem_name=kem_name), factory,
                        package_url=None if packages is None else packages.url, worker=worker)
    server.start()
    stack.callback(server.stop)
    source = None
    if jetstream_urls:
        from host.jetstream import JetStreamSource

        source = JetStreamSource(jetstream_urls, batch_handler(server), tls=tls,
                                 name=f"egm-host-{name}-{secrets.token_hex(4)}").start()
        stack.callback(source.stop)
        log.info("host %s: reports from JetStream %s; sending over NATS", name, jetstream_urls)
    return RunningHost(server, packages, source)
