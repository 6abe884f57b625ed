"""Start the host link for ``egm run``: the PKI, the broker, the embedded host, the terminal's link.

``[host] broker = "embedded"`` (the single-machine default): an amqtt broker on 127.0.0.1 (TLS with
the host's certificate when the PKI is there) and the reference host (``host/``) run in this
process, the host's state in ``<state-dir>/host``. ``mqtt(s)://HOST:PORT``: the terminal connects to
the casino's broker with its certificate; the host runs elsewhere (``egm host serve``). A broker
cluster is a list, ``mqtts://H1:P1,H2:P2,H3:P3``: the link goes on to the next node when one fails.

Nothing of the link is made before the cabinet reaches attract: the terminal calls
:meth:`HostSide.link` at the end of its power-up (the PKI, the terminal's identity, the link's
modules: cryptography's X.509, paho, the package manager), and :func:`start` then starts the
embedded broker and host and connects the link (its MQTT client is made then, to the broker's
address). This module imports none of that at its top, so importing it costs nothing before attract.

This is the composition root's (``firmware.commands``): the terminal's link (``firmware.hostlink``)
and the reference host (``host``) know only the shared protocol (``egmproto``), not each other.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
    from firmware.hostlink.link import HostLink

log = logging.getLogger("egm.hostlink")


@dataclass
class HostSide:
    """The host's side of ``egm run``: :meth:`link` builds the terminal's link (the terminal calls it
    at the end of its power-up), :func:`start` starts the embedded broker and host, if any, and the
    link."""

    cfg: Any
    state_dir: Path
    ledger: Any
    #: the broker's URL ("" until the embedded broker has started)
    broker_url: str = ""
    #: the broker's address, or a cluster's nodes in the order tried (None until the broker has started)
    address: tuple[BrokerAddress, ...] | None = None
    tls_files: TlsFiles | None = field(default=None, repr=False)
    pki: Path | None = None

    @property
    def embedded(self) -> bool:
        return self.cfg.host.broker == "embedded"

    @property
    def host_dir(self) -> Path | None:
        """The embedded host's state (None: the host is elsewhere)."""
        return self.state_dir / "host" if self.embedded else None

    def parse(self, url: str) -> tuple[BrokerAddress, ...]:
        """``mqtt(s)://HOST:PORT``, or a cluster's nodes: ``mqtts://H1:P1,H2:P2,...``."""
        from egmproto.mqtt import BrokerAddress

        return BrokerAddress.parse_list(url, self.tls_files if url.strip().startswith("mqtts://") else None)

    def client(self, *args: Any, **kw: Any) -> MqttClient:
        """The link's MQTT client, to the broker's address as it is when the link starts."""
        from egmproto.mqtt import MqttClient

        if self.address is None:
            raise RuntimeError("the host link's broker has not started")
        return MqttClient(*args, address=self.address, **kw)

    def link(self, terminal: Any) -> HostLink:
        """``terminal``'s link to the host, with the PKI (the development one is made on first start)
        and the terminal's identity; not started (:func:`start` does)."""
        from egmproto.identity import TerminalIdentity
        from egmproto.mqtt import TlsFiles
        from firmware.cabinet.packages import PackageManager, https_fetch
        from firmware.hostlink.link import HostLink

        cfg = self.cfg
        pki = self.pki = pki_dir(cfg, self.state_dir)
        issued = pki / "issued"
        tls = self.tls_files = TlsFiles(ca=pki / "ca.cert.pem", cert=issued / f"{cfg.terminal.id}.cert.pem",
                                        key=issued / f"{cfg.terminal.id}.key.pem")
        if not self.embedded:
            self.broker_url = cfg.host.broker
            self.address = self.parse(cfg.host.broker)
        identity = TerminalIdentity.load(pki, cfg.terminal.id, host=cfg.host.host_name, host_kem=cfg.host.host_kem)
        packages = PackageManager(self.ledger, lambda cert: identity.trust.check(cert, "code-signer"),
                                  self.state_dir / "packages", fetch=https_fetch(tls.ca, tls.cert, tls.key),
                                  games=lambda: list(terminal.cfg.games.enabled), wake=terminal.wake)
        return HostLink(self.ledger, identity, self.client,
                        terminal=terminal, packages=packages, meter_interval_s=cfg.host.meter_interval_s,
                        ack_timeout_s=cfg.host.ack_timeout_s, window=cfg.host.window,
                        max_age_s=cfg.host.max_age_s, redeem_timeout_s=cfg.host.redeem_timeout_s)


def pki_dir(cfg: Any, state_dir: Path) -> Path:
    """The configured PKI, or the development one (made on first start) in ``<state-dir>/pki``."""
    if cfg.host.pki:
        return Path(cfg.host.pki)
    from egmproto.pki import ensure_development_pki

    ensure_development_pki(state_dir, cfg.terminal.id)
    return state_dir / "pki"


def _start_floor(hosted: HostSide, stack: contextlib.ExitStack) -> None:
    """The embedded broker (TLS with the host's certificate, on a free port of 127.0.0.1) and the
    reference host, started; ``stack`` stops them."""
    from firmware.hostlink.broker import EmbeddedBroker
    from host.runner import start_host
    from host.store import HostStore

    cfg, pki = hosted.cfg, hosted.pki
    assert pki is not None, "the link is built (HostSide.link) before it starts"
    issued = pki / "issued"
    broker = EmbeddedBroker("127.0.0.1", 0, tls=(issued / f"{cfg.host.host_name}.cert.pem",
                                                 issued / f"{cfg.host.host_name}.key.pem", pki / "ca.cert.pem"),
                            crl=pki / "crl.pem")
    broker.start()
    stack.callback(broker.stop)
    host_dir = hosted.host_dir
    assert host_dir is not None
    host_dir.mkdir(exist_ok=True)
    store = HostStore.open(str(host_dir / "host.db"))
    stack.callback(store.close)
    start_host(stack, store=store, pki=pki, broker_url=broker.url, name=cfg.host.host_name,
               kem_name=cfg.host.host_kem, packages_dir=host_dir / "packages")
    hosted.broker_url = broker.url
    hosted.address = hosted.parse(broker.url)


def start(hosted: HostSide, link: HostLink, stack: contextlib.ExitStack) -> None:
    """After the power-up: the embedded broker and host (if configured), then the terminal's link;
    ``stack`` stops the link first, draining for up to ``host.drain_s`` seconds."""
    if hosted.embedded:
        _start_floor(hosted, stack)
    link.start()
    stack.callback(link.stop, hosted.cfg.host.drain_s)
