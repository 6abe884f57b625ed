"""A NATS JetStream cluster on loopback ports: N ``nats-server`` processes, each with an MQTT
listener for the terminals and a NATS listener for the host's workers, TLS with client certificates
required on both, routes between the nodes, JetStream with its own store per node.

Used by the tests (tests/floor/), the lab and load tests; a floor runs the same configuration shape
on its own machines (docs/floor-cluster.md). Every port is a random free one picked at :meth:`start`
and kept across :meth:`restart`, so a restarted node is found where it was.

::

    cluster = NatsCluster(workdir, pki_dir).start()     # 3 nodes, waits until JetStream is ready
    cluster.mqtt_urls   # ['mqtts://127.0.0.1:P1', ...]   terminals (egmproto.mqtt), host's send path
    cluster.nats_urls   # ['tls://127.0.0.1:Q1', ...]     the host's JetStream workers (host/jetstream.py)
    cluster.kill(0); cluster.restart(0); cluster.stop()

The nodes present a ``host``-kind certificate of the casino PKI (``egmproto.pki``; issued as
``egm-floor-broker`` for localhost and 127.0.0.1 if the PKI has none) and accept only clients whose
certificate chains to the casino CA. NATS 2.9 reads no CRL: a revoked terminal still reaches the
broker, and the host refuses its envelopes (their signatures are checked against the CRL).
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from egmproto import pki as casino_pki
from egmproto.errors import EgmError
from egmproto.mqtt import BrokerAddress, MqttClient, TlsFiles
from host.local.nats_config import CLUSTER_NAME, BrokerNode, render

log = logging.getLogger("egm.host.local.nats")

BROKER_CERT = "egm-floor-broker"
NATS_SERVER = "nats-server"
#: How long a node may take to listen and report JetStream healthy.
READY_TIMEOUT_S = 30.0
LOG_TAIL = 4000


class NatsClusterError(EgmError):
    """nats-server missing, a node that will not start (its log says why), a bad option."""


def find_nats_server() -> str | None:
    """The ``nats-server`` binary on PATH or in /usr/sbin (Debian's package puts it there)."""
    return shutil.which(NATS_SERVER) or shutil.which(NATS_SERVER, path="/usr/sbin:/usr/local/sbin")


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A random free loopback port below the kernel's ephemeral range: a node killed and started
    again must find its ports free, and an ephemeral port may meanwhile be the source port of some
    client's connection (``bind: address already in use``)."""
    low, _ = _ephemeral_range()
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, low) if low > 21000 else rng.randrange(1024, 65535)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise NatsClusterError("no free port found on 127.0.0.1")


@dataclass
class NatsNode:
    """One server of the cluster: its ports, files and process."""

    index: int
    name: str
    directory: Path
    client_port: int = field(default_factory=free_port)
    mqtt_port: int = field(default_factory=free_port)
    route_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def config(self) -> Path:
        return self.directory / "nats.conf"

    @property
    def log_file(self) -> Path:
        return self.directory / "nats.log"

    @property
    def mqtt_url(self) -> str:
        return f"mqtts://127.0.0.1:{self.mqtt_port}"

    @property
    def nats_url(self) -> str:
        return f"tls://127.0.0.1:{self.client_port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return text[-LOG_TAIL:]


class NatsCluster:
    """``nodes`` nats-server processes (default 3) on loopback, clustered when more than one.

    ``pki``: a casino PKI directory (``egm certs`` / ``egmproto.pki``). ``workdir``: where each node
    keeps its configuration, log and JetStream store (``node-<i>/``). MQTT's own streams (sessions,
    QoS 1 messages) get ``min(3, nodes)`` replicas, so a terminal's session outlives its node.
    """

    def __init__(self, workdir: Path, pki: Path, *, nodes: int = 3, cert_name: str = BROKER_CERT,
                 cluster_name: str = CLUSTER_NAME, binary: str | None = None,
                 ready_timeout: float = READY_TIMEOUT_S) -> None:
        if not 1 <= nodes <= 9:
            raise NatsClusterError(f"a cluster of {nodes} nodes: 1 to 9")
        found = binary or find_nats_server()
        if found is None or not Path(found).exists():
            raise NatsClusterError("nats-server is not installed (Debian: apt-get install nats-server)")
        self.binary = found
        self.workdir = Path(workdir)
        self.pki = Path(pki)
        self.cert_name = cert_name
        self.cluster_name = cluster_name
        self.ready_timeout = ready_timeout
        self.replicas = min(3, nodes)
        self.nodes = [NatsNode(i, f"n{i + 1}", self.workdir / f"node-{i + 1}") for i in range(nodes)]

    # -- addresses ----------------------------------------------------------------------------------
    @property
    def mqtt_urls(self) -> list[str]:
        return [n.mqtt_url for n in self.nodes]

    @property
    def nats_urls(self) -> list[str]:
        return [n.nats_url for n in self.nodes]

    @property
    def mqtt_url(self) -> str:
        """Every node's MQTT URL in one string (``egm host serve --broker``)."""
        return ",".join(self.mqtt_urls)

    @property
    def nats_url(self) -> str:
        """Every node's NATS URL in one string (``egm host serve --jetstream``)."""
        return ",".join(self.nats_urls)

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self) -> NatsCluster:
        """Write the configurations, start every node and wait until the cluster serves JetStream;
        on failure every node started is stopped and the error shows the failing node's log."""
        cert, key, ca = self._tls_files()
        for node in self.nodes:
            node.directory.mkdir(parents=True, exist_ok=True)
            node.config.write_text(self._config(node, cert, key, ca))
        try:
            for node in self.nodes:
                self._spawn(node)
            self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL after 10 s); idempotent."""
        for node in self.nodes:
            self._terminate(node)

    def kill(self, index: int) -> None:
        """SIGKILL one node, as a power cut would."""
        node = self.nodes[index]
        if node.proc is not None and node.proc.poll() is None:
            node.proc.send_signal(signal.SIGKILL)
            node.proc.wait(10)
            log.info("nats node %s killed", node.name)

    def restart(self, index: int, *, wait: bool = True) -> None:
        """Start a stopped or killed node again (same ports, same store); with ``wait``, until the
        cluster is ready again."""
        node = self.nodes[index]
        self._terminate(node)
        self._spawn(node)
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float | None = None) -> None:
        """Every running node reports JetStream healthy (``/healthz``) and has accepted an MQTT
        session (with the broker's own certificate). A node sets up its MQTT streams at its first
        MQTT client; done here, a terminal that moves to it after another node died does not wait
        for that on top of the cluster's leader elections."""
        deadline = time.monotonic() + (self.ready_timeout if timeout is None else timeout)
        pending = [node for node in self.nodes if node.proc is not None]
        while pending:
            for node in self.nodes:                  # a node that died is the first thing to say
                if node.proc is not None and node.proc.poll() is not None:
                    raise NatsClusterError(f"nats node {node.name} exited with {node.proc.returncode}; "
                                           f"its log ({node.log_file}):\n{node.log_tail()}")
            pending = [n for n in pending if not (self._healthy(n) and self._mqtt_accepts(n, deadline))]
            if pending and time.monotonic() > deadline:
                node = pending[0]
                raise NatsClusterError(f"nats node {node.name} not ready after "
                                       f"{self.ready_timeout:.0f} s; its log:\n{node.log_tail()}")
            if pending:
                time.sleep(0.1)

    def _mqtt_accepts(self, node: NatsNode, deadline: float) -> bool:
        cert, key, ca = self._tls_files()
        client = MqttClient(f"egm-ready-{node.name}", BrokerAddress.parse(node.mqtt_url, TlsFiles(ca, cert, key)),
                            protocol="3.1.1", connect_timeout=5)
        client.start()
        try:
            return client.wait_connected(max(0.5, min(3.0, deadline - time.monotonic())))
        finally:
            client.stop()

    def __enter__(self) -> NatsCluster:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    # -- internals ----------------------------------------------------------------------------------
    def _tls_files(self) -> tuple[Path, Path, Path]:
        issued = self.pki / "issued"
        cert, key = issued / f"{self.cert_name}.cert.pem", issued / f"{self.cert_name}.key.pem"
        ca = self.pki / "ca.cert.pem"
        if not ca.is_file():
            raise NatsClusterError(f"{self.pki} is not a casino PKI (no ca.cert.pem); make one with egm certs")
        if not (cert.is_file() and key.is_file()):
            try:
                casino_pki.issue(self.pki, "host", self.cert_name, dns=["localhost"], ips=["127.0.0.1"])
            except casino_pki.PkiError as exc:
                raise NatsClusterError(f"no broker certificate {self.cert_name!r} in {self.pki}: {exc}") from None
        return cert, key, ca

    def _config(self, node: NatsNode, cert: Path, key: Path, ca: Path) -> str:
        loop = "127.0.0.1"
        return render(BrokerNode(
            name=node.name, client=f"{loop}:{node.client_port}", mqtt=f"{loop}:{node.mqtt_port}",
            http=f"{loop}:{node.http_port}", route=f"{loop}:{node.route_port}",
            store_dir=node.directory / "jetstream", cert=cert, key=key, ca=ca, log_file=node.log_file,
            routes=[f"{loop}:{o.route_port}" for o in self.nodes if o is not node] if len(self.nodes) > 1 else [],
            cluster_name=self.cluster_name, replicas=self.replicas))

    def _spawn(self, node: NatsNode) -> None:
        with open(node.directory / "stdout.log", "ab") as out:
            node.proc = subprocess.Popen([self.binary, "-c", str(node.config)], stdout=out, stderr=out,
                                         stdin=subprocess.DEVNULL, start_new_session=True)
        log.info("nats node %s: pid %d, mqtt %s, nats %s", node.name, node.proc.pid, node.mqtt_url, node.nats_url)

    def _terminate(self, node: NatsNode) -> None:
        proc = node.proc
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        node.proc = None

    def _healthy(self, node: NatsNode) -> bool:
        url = f"http://127.0.0.1:{node.http_port}/healthz?js-server-only=true"  # JetStream up, meta leader known
        try:
            with urllib.request.urlopen(url, timeout=1) as reply:
                ok: bool = json.load(reply).get("status") == "ok"
        except (OSError, ValueError, urllib.error.URLError):
            return False
        return ok
