"""Start the reference host in this process: used by ``egm host serve`` and by ``egm run``'s
embedded host, so both run the same thing (the broker they use is their own business).

Two ways for the terminals' reports to come in:

* MQTT (the default): the host's MQTT client subscribes to every terminal's ``up`` topic in a
  persistent session and the server's ingest worker handles them one at a time;
* JetStream (``jetstream_urls``, the floor broker cluster): a :class:`host.jetstream.JetStreamSource`
  worker of the consumer group hands the server batches (``HostServer.handle_batch`` where it exists,
  else ``handle`` for each), acknowledged to the stream after they are handled. The host's MQTT
  client then subscribes to nothing: it only sends (acknowledgements, commands, replies), with a
  client id of its own (several hosts share the floor).
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


def _sender(client_id: str, *, address: tuple[BrokerAddress, ...], **kwargs: Any) -> MqttClient:
    """The host's MQTT client when JetStream brings the reports: no subscription, a clean session,
    and a client id of its own (two clients with one id would push each other off the broker)."""
    kwargs.pop("subscriptions", None)
    kwargs.pop("persistent_session", None)
    kwargs.pop("on_message", None)
    return MqttClient(f"{client_id}-{secrets.token_hex(4)}", address, **kwargs)


def start_host(stack: contextlib.ExitStack, *, store: HostStore, pki: Path, broker_url: str,
               name: str, kem_name: str, packages_dir: Path | None,
               packages_bind: tuple[str, int] = ("127.0.0.1", 0),
               packages_public_host: str | None = None,
               jetstream_urls: str | None = None, worker: int | None = None) -> RunningHost:
    """The host's MQTT client on ``broker_url`` (TLS with its certificate for ``mqtts://``; a
    cluster: ``mqtts://H1:P1,H2:P2,...``) and, with ``packages_dir``, the package server; with
    ``jetstream_urls`` (``tls://H1:P1,...``) a JetStream worker brings the reports. ``stack``
    stops them."""
    issued = pki / "issued"
    tls = TlsFiles(ca=pki / "ca.cert.pem", cert=issued / f"{name}.cert.pem", key=issued / f"{name}.key.pem")
    packages = None
    if packages_dir is not None:
        packages = PackageServer(PackageDepot(packages_dir), *packages_bind, tls=(tls.cert, tls.key, tls.ca),
                                 crl=pki / "crl.pem", public_host=packages_public_host).start()
        stack.callback(packages.stop)
    address = BrokerAddress.parse_list(broker_url, tls if broker_url.strip().startswith("mqtts://") else None)
    factory = _sender if jetstream_urls else MqttClient
    server = HostServer(store, HostIdentity(pki, name=name, kem_name=kem_name),
                        functools.partial(factory, address=address),
                        package_url=None if packages is None else packages.url, worker=worker)
    server.start()
    stack.callback(server.stop)
    source = None
    if jetstream_urls:
        from host.jetstream import JetStreamSource

        source = JetStreamSource(jetstream_urls, batch_handler(server), tls=tls,
                                 name=f"egm-host-{name}-{secrets.token_hex(4)}").start()
        stack.callback(source.stop)
        log.info("host %s: reports from JetStream %s; sending over MQTT %s", name, jetstream_urls, broker_url)
    return RunningHost(server, packages, source)
