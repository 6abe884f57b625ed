"""The shipped Mosquitto configuration (deploy/mosquitto/) with the development PKI: client
certificates required, foreign and revoked certificates refused, the ACL, MQTT 5 and 3.1.1, and the
host's persistent session (which amqtt, in tests/hostlink/test_mqtt.py, covers in 3.1.1 only)."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from egmproto import pki
from egmproto.mqtt import (
    UP_WILDCARD,
    BrokerAddress,
    MqttClient,
    TlsFiles,
    down_topic,
    up_topic,
)
from tests.hostlink.mqtt_support import (
    Inbox,
    client,
    delivered,
    free_port,
    start,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "mosquitto"
MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")

pytestmark = pytest.mark.skipif(MOSQUITTO is None, reason="mosquitto not installed")


def render_config(text: str, *, port: int, ca: Path, cert: Path, key: Path, crl: Path, acl: Path,
                  persistence: Path, bind: str = "127.0.0.1") -> str:
    """The shipped mosquitto.conf with this machine's port, paths and user substituted.

    Each substituted directive must appear exactly once in the shipped file, so the test keeps
    checking the configuration that is deployed, not a copy of it.
    """
    values = {
        "listener": f"{port} {bind}",
        "cafile": str(ca),
        "certfile": str(cert),
        "keyfile": str(key),
        "crlfile": str(crl),
        "acl_file": str(acl),
        "persistence_location": f"{persistence}/",
        "user": pwd.getpwuid(os.geteuid()).pw_name,  # as root, mosquitto would drop to "mosquitto"
    }
    for directive, value in values.items():
        pattern = re.compile(rf"^{directive}[ \t]+\S.*$", re.MULTILINE)
        found = pattern.findall(text)
        assert len(found) == 1, f"deploy/mosquitto/mosquitto.conf: expected one {directive!r} line, found {found}"
        text = pattern.sub(lambda _m, d=directive, v=value: f"{d} {v}", text)
    return text


class Mosquitto:
    """One mosquitto process on the rendered shipped configuration."""

    def __init__(self, workdir: Path, files: dict[str, Path]) -> None:
        self.workdir = workdir
        self.files = files
        self.port = free_port()
        self.log = workdir / "mosquitto.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Mosquitto:
        persistence = self.workdir / "db"
        persistence.mkdir(exist_ok=True)
        conf = self.workdir / "mosquitto.conf"
        conf.write_text(render_config(
            (DEPLOY / "mosquitto.conf").read_text(), port=self.port, ca=self.files["ca_cert"],
            cert=self.files["host_cert"], key=self.files["host_key"], crl=self.files["crl"],
            acl=DEPLOY / "acl", persistence=persistence,
        ))
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([str(MOSQUITTO), "-c", str(conf)], stdout=out, stderr=out)
        deadline = time.monotonic() + 10
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"mosquitto exited ({self.proc.returncode}):\n{self.log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"mosquitto is not listening:\n{self.log.read_text()}") from None
                time.sleep(0.02)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # saves the persistence database
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def reload(self) -> None:
        """SIGHUP (``systemctl reload``); returns once mosquitto has reloaded (it logs it first, then
        reloads before serving anything else)."""
        assert self.proc is not None
        before = self.log.read_text().count("Reloading config.")
        self.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: self.log.read_text().count("Reloading config.") > before, what="the reload")

    def address(self, cert: Path | None, key: Path | None, ca: Path | None = None) -> BrokerAddress:
        return BrokerAddress.parse(f"mqtts://127.0.0.1:{self.port}",
                                   TlsFiles(ca or self.files["ca_cert"], cert, key))


# --------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def pki_files(tmp_path: Path) -> dict[str, Path]:
    files = pki.ensure_development_pki(tmp_path / "state", "T1")
    t2 = pki.issue(files["dir"], "terminal", "T2")
    files["t2_cert"], files["t2_key"] = t2.cert, t2.key
    return files


@pytest.fixture
def mosquitto(tmp_path: Path, pki_files: dict[str, Path]) -> Iterator[Callable[[], Mosquitto]]:
    """Start mosquitto processes (``mosquitto()``); every one is killed when the test ends."""
    started: list[Mosquitto] = []

    def factory() -> Mosquitto:
        workdir = tmp_path / f"mosquitto{len(started)}"
        workdir.mkdir()
        broker = Mosquitto(workdir, pki_files)
        started.append(broker)
        return broker.start()

    yield factory
    for broker in started:
        broker.stop()




def host_client(broker: Mosquitto, inbox: Inbox | None = None, **kwargs: object) -> MqttClient:
    f = broker.files
    kwargs.setdefault("subscriptions", [UP_WILDCARD])
    return client(pki.DEV_HOST, broker.address(f["host_cert"], f["host_key"]), inbox, **kwargs)


def terminal_client(broker: Mosquitto, name: str, inbox: Inbox | None = None, **kwargs: object) -> MqttClient:
    f = broker.files
    cert, key = (f["terminal_cert"], f["terminal_key"]) if name == "T1" else (f["t2_cert"], f["t2_key"])
    kwargs.setdefault("subscriptions", [down_topic(name)])
    return client(name, broker.address(cert, key), inbox, **kwargs)


# --------------------------------------------------------------------------------------------------
# tests


def test_render_config_substitutes_every_path(tmp_path: Path) -> None:
    text = render_config((DEPLOY / "mosquitto.conf").read_text(), port=1234, ca=tmp_path / "ca", cert=tmp_path / "c",
                         key=tmp_path / "k", crl=tmp_path / "crl", acl=tmp_path / "acl", persistence=tmp_path)
    settings = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    assert not [line for line in settings if "/etc/mosquitto" in line or "/var/lib" in line]
    assert "listener 1234 127.0.0.1" in settings
    for required in ("require_certificate true", "use_identity_as_username true", "tls_version tlsv1.2",
                     "persistence true", "allow_anonymous false"):
        assert re.search(rf"^{required}$", text, re.MULTILINE), required
    assert re.search(r"^max_queued_messages [1-9]\d{4,}$", text, re.MULTILINE)


@pytest.mark.parametrize("protocol", ["auto", "3.1.1"])
def test_round_trip_with_certificates(protocol: str, mosquitto: Callable[[], Mosquitto],
                                      clients: list[MqttClient]) -> None:
    broker = mosquitto()
    host_in, term_in = Inbox(), Inbox()
    host = start(clients, host_client(broker, host_in, protocol=protocol, persistent_session=True))
    term = start(clients, terminal_client(broker, "T1", term_in, protocol=protocol))
    assert host.wait_connected(10) and term.wait_connected(10)
    assert term.wire_protocol == ("5" if protocol == "auto" else "3.1.1")

    up_done, on_up = delivered()
    assert term.publish(up_topic("T1"), b"report", on_up)
    host_in.wait_message(up_topic("T1"), b"report")
    assert up_done.wait(10)
    down_done, on_down = delivered()
    assert host.publish(down_topic("T1"), b"command", on_down)
    term_in.wait_message(down_topic("T1"), b"command")
    assert down_done.wait(10)


@pytest.mark.parametrize("who", ["no certificate", "foreign CA", "revoked"])
def test_refuses_clients_without_a_valid_certificate(
    who: str, tmp_path: Path, pki_files: dict[str, Path], mosquitto: Callable[[], Mosquitto],
    clients: list[MqttClient],
) -> None:
    if who == "no certificate":
        cert, key = None, None
    elif who == "foreign CA":
        foreign = pki.ensure_development_pki(tmp_path / "foreign", "T1")  # same CN, other CA
        cert, key = foreign["terminal_cert"], foreign["terminal_key"]
    else:
        t3 = pki.issue(pki_files["dir"], "terminal", "T3")
        pki.revoke(pki_files["dir"], "T3", "key-compromise")  # rewrites crl.pem before the broker starts
        cert, key = t3.cert, t3.key
    broker = mosquitto()
    intruder = start(clients, client("T1", broker.address(cert, key)))
    genuine = start(clients, terminal_client(broker, "T2"))  # the broker does accept good certificates
    assert genuine.wait_connected(10)
    wait_for(lambda: intruder.stats["connect_failures"] >= 2, what="refused attempts")
    assert intruder.stats["connects"] == 0 and not intruder.connected


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_acl_a_terminal_publishes_only_its_own_reports(
    protocol: str, mosquitto: Callable[[], Mosquitto], clients: list[MqttClient]
) -> None:
    broker = mosquitto()
    host_in = Inbox()
    host = start(clients, host_client(broker, host_in))
    t1 = start(clients, terminal_client(broker, "T1", protocol=protocol))
    assert host.wait_connected(10) and t1.wait_connected(10)
    forged_acked, on_forged = delivered()
    assert t1.publish(up_topic("T2"), b"forged", on_forged)
    genuine_acked, on_genuine = delivered()
    assert t1.publish(up_topic("T1"), b"genuine", on_genuine)  # sent after, so it arrives after
    host_in.wait_message(up_topic("T1"), b"genuine")
    assert genuine_acked.wait(10)
    assert host_in.payloads() == [b"genuine"]
    if protocol == "5":  # MQTT 5 says so in the PUBACK: on_delivered is not called
        wait_for(lambda: t1.stats["refused"] == 1, what="the refusal")
        assert not forged_acked.is_set()
    else:  # 3.1.1 cannot say no: the broker acknowledges and drops the message
        assert forged_acked.wait(10)


def test_acl_a_terminal_reads_only_its_own_commands(mosquitto: Callable[[], Mosquitto],
                                                    clients: list[MqttClient]) -> None:
    broker = mosquitto()
    host_in, t1_in = Inbox(), Inbox()
    host = start(clients, host_client(broker, host_in))
    t1 = start(clients, terminal_client(broker, "T1", t1_in,
                                        subscriptions=[down_topic("T1"), down_topic("T2"), UP_WILDCARD]))
    t2 = start(clients, terminal_client(broker, "T2"))
    assert host.wait_connected(10) and t1.wait_connected(10) and t2.wait_connected(10)
    # Mosquitto 2.0 grants the subscriptions and applies the ACL to every message it would deliver.

    assert t2.publish(up_topic("T2"), b"t2 report")
    host_in.wait_message(up_topic("T2"), b"t2 report")  # routed: T1's copy, if any, is already queued
    assert host.publish(down_topic("T2"), b"for T2")
    assert host.publish(down_topic("T1"), b"for T1")
    t1_in.wait_message(down_topic("T1"), b"for T1")
    assert t1_in.payloads() == [b"for T1"]


def test_acl_only_the_host_sends_commands(mosquitto: Callable[[], Mosquitto], clients: list[MqttClient]) -> None:
    broker = mosquitto()
    host_in, t1_in = Inbox(), Inbox()
    host = start(clients, host_client(broker, host_in))
    t1 = start(clients, terminal_client(broker, "T1", t1_in))
    t2 = start(clients, terminal_client(broker, "T2", protocol="3.1.1"))
    assert host.wait_connected(10) and t1.wait_connected(10) and t2.wait_connected(10)
    assert t2.publish(down_topic("T1"), b"forged command")
    t2_done, on_t2 = delivered()
    assert t2.publish(up_topic("T2"), b"flush", on_t2)
    host_in.wait_message(up_topic("T2"), b"flush")
    assert host.publish(down_topic("T1"), b"real command")
    t1_in.wait_message(down_topic("T1"), b"real command")
    assert t1_in.payloads() == [b"real command"]


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_persistent_host_session_survives_host_and_broker_restarts(
    protocol: str, mosquitto: Callable[[], Mosquitto], clients: list[MqttClient]
) -> None:
    broker = mosquitto()
    host = host_client(broker, protocol=protocol, persistent_session=True)
    host.start()
    assert host.wait_connected(10)
    host.stop()

    term = start(clients, terminal_client(broker, "T1"))
    assert term.wait_connected(10)
    acks: list[int] = []
    for i in range(5):
        assert term.publish(up_topic("T1"), b"away %d" % i, lambda: acks.append(1))
    wait_for(lambda: len(acks) == 5, what="PUBACKs while the host is away")
    broker.stop()  # SIGTERM: mosquitto writes its persistence database
    broker.start()  # same port, same database

    host_in = Inbox()
    back = start(clients, host_client(broker, host_in, protocol=protocol, persistent_session=True))
    wait_for(lambda: len(host_in.messages) == 5, what="the queued messages")
    assert host_in.payloads() == [b"away %d" % i for i in range(5)]  # in order
    assert back.wait_connected(10)


def test_reload_applies_a_new_crl(pki_files: dict[str, Path], mosquitto: Callable[[], Mosquitto],
                                  clients: list[MqttClient]) -> None:
    t3 = pki.issue(pki_files["dir"], "terminal", "T3")
    broker = mosquitto()
    before = client("T3", broker.address(t3.cert, t3.key))
    before.start()
    assert before.wait_connected(10)
    before.stop()

    pki.revoke(pki_files["dir"], "T3", "key-compromise")
    broker.reload()
    after = start(clients, client("T3", broker.address(t3.cert, t3.key)))
    wait_for(lambda: after.stats["connect_failures"] >= 2, what="refused attempts")
    assert after.stats["connects"] == 0
