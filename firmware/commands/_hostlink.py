"""Start the host link for ``egm run``: the PKI, the broker, the embedded host, the terminal's link.

``[host] broker = "embedded"`` (the single-machine default): an amqtt broker on 127.0.0.1 (TLS with
the host's certificate when the PKI is there) and the reference host (``host/``) run in this
process, the host's state in ``<state-dir>/host``. ``mqtt(s)://HOST:PORT``: the terminal connects to
the casino's broker with its certificate; the host runs elsewhere (``egm host serve``).

This is the composition root's (``firmware.commands``): the terminal's link (``firmware.hostlink``)
and the reference host (``host``) know only the shared protocol (``egmproto``), not each other.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from egmproto.identity import TerminalIdentity
from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
from egmproto.pki import ensure_development_pki
from firmware.cabinet.packages import PackageManager, https_fetch
from firmware.hostlink.link import HostLink

log = logging.getLogger("egm.hostlink")


@dataclass
class Prepared:
    """The host link's side of the floor, running (the broker and the embedded host, if any), and
    :meth:`link`, which builds the terminal's link: the terminal's constructor calls it."""

    cfg: Any
    state_dir: Path
    ledger: Any
    broker_url: str
    host_dir: Path | None
    address: BrokerAddress
    tls_files: TlsFiles
    identity: TerminalIdentity

    def link(self, terminal: Any) -> HostLink:
        """``terminal``'s link to the host (not started: :func:`start` does, after the power-up)."""
        cfg, tls = self.cfg, self.tls_files
        identity = self.identity
        packages = PackageManager(self.ledger, lambda cert: identity.trust.check(cert, "code-signer"),
                                  self.state_dir / "packages", fetch=https_fetch(tls.ca, tls.cert, tls.key),
                                  games=lambda: list(terminal.cfg.games.enabled), wake=terminal.wake)
        return HostLink(self.ledger, identity, functools.partial(MqttClient, address=self.address),
                        terminal=terminal, packages=packages, meter_interval_s=cfg.host.meter_interval_s,
                        ack_timeout_s=cfg.host.ack_timeout_s, window=cfg.host.window,
                        max_age_s=cfg.host.max_age_s, redeem_timeout_s=cfg.host.redeem_timeout_s)


def pki_dir(cfg: Any, state_dir: Path) -> Path:
    """The configured PKI, or the development one (made on first start) in ``<state-dir>/pki``."""
    if cfg.host.pki:
        return Path(cfg.host.pki)
    ensure_development_pki(state_dir, cfg.terminal.id)
    return state_dir / "pki"


def prepare(cfg: Any, state_dir: Path, ledger: Any, stack: contextlib.ExitStack) -> Prepared:
    """The PKI, the broker and the embedded host, started (``stack`` stops them), before the
    terminal is built: its link needs the broker's address."""
    pki = pki_dir(cfg, state_dir)
    issued = pki / "issued"
    host_dir = None
    if cfg.host.broker == "embedded":
        from firmware.hostlink.broker import EmbeddedBroker
        from host.runner import start_host
        from host.store import HostStore

        broker = EmbeddedBroker("127.0.0.1", 0, tls=(issued / f"{cfg.host.host_name}.cert.pem",
                                                     issued / f"{cfg.host.host_name}.key.pem", pki / "ca.cert.pem"),
                                crl=pki / "crl.pem")
        broker.start()
        stack.callback(broker.stop)
        host_dir = state_dir / "host"
        host_dir.mkdir(exist_ok=True)
        store = HostStore.open(str(host_dir / "host.db"))
        stack.callback(store.close)
        start_host(stack, store=store, pki=pki, broker_url=broker.url, name=cfg.host.host_name,
                   kem_name=cfg.host.host_kem, packages_dir=host_dir / "packages")
        url = broker.url
    else:
        url = cfg.host.broker
    tls_files = TlsFiles(ca=pki / "ca.cert.pem", cert=issued / f"{cfg.terminal.id}.cert.pem",
                         key=issued / f"{cfg.terminal.id}.key.pem")
    address = BrokerAddress.parse(url, tls_files if url.startswith("mqtts://") else None)
    identity = TerminalIdentity.load(pki, cfg.terminal.id, host=cfg.host.host_name, host_kem=cfg.host.host_kem)
    return Prepared(cfg, state_dir, ledger, url, host_dir, address, tls_files, identity)


def start(link: HostLink, cfg: Any, stack: contextlib.ExitStack) -> None:
    """Start the terminal's link (after the power-up); ``stack`` stops it first, draining for up to
    ``host.drain_s`` seconds."""
    link.start()
    stack.callback(link.stop, cfg.host.drain_s)
