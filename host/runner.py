"""Start the reference host in this process: used by ``egm host serve`` and by ``egm run``'s
embedded host, so both run the same thing (the broker they use is their own business)."""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from pathlib import Path

from egmproto.identity import HostIdentity
from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
from host.packages import PackageDepot, PackageServer
from host.server import HostServer
from host.store import HostStore


@dataclass
class RunningHost:
    server: HostServer
    packages: PackageServer | None


def start_host(stack: contextlib.ExitStack, *, store: HostStore, pki: Path, broker_url: str,
               name: str, kem_name: str, packages_dir: Path | None,
               packages_bind: tuple[str, int] = ("127.0.0.1", 0),
               packages_public_host: str | None = None, worker: int | None = None) -> RunningHost:
    """The host's MQTT client on ``broker_url`` (TLS with its certificate for ``mqtts://``) and,
    with ``packages_dir``, the package server; ``stack`` stops them."""
    issued = pki / "issued"
    tls = TlsFiles(ca=pki / "ca.cert.pem", cert=issued / f"{name}.cert.pem", key=issued / f"{name}.key.pem")
    packages = None
    if packages_dir is not None:
        packages = PackageServer(PackageDepot(packages_dir), *packages_bind, tls=(tls.cert, tls.key, tls.ca),
                                 crl=pki / "crl.pem", public_host=packages_public_host).start()
        stack.callback(packages.stop)
    address = BrokerAddress.parse(broker_url, tls if broker_url.startswith("mqtts://") else None)
    server = HostServer(store, HostIdentity(pki, name=name, kem_name=kem_name),
                        functools.partial(MqttClient, address=address),
                        package_url=None if packages is None else packages.url, worker=worker)
    server.start()
    stack.callback(server.stop)
    return RunningHost(server, packages)
