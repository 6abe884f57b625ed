"""``egm host serve --workers N``: clear refusals, and two worker processes behind Mosquitto's
shared subscription storing each report once into one PostgreSQL database (our own instances)."""

from __future__ import annotations

import base64
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import x25519
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from egmproto.envelope import seal
from egmproto.identity import TerminalIdentity
from egmproto.mqtt import BrokerAddress, up_topic
from egmproto.pki import issue
from firmware.cli import main
from host.local.postgres import LocalPostgres
from host.store import HostStore
from tests.hostlink.mqtt_support import Inbox, client, free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
MOSQUITTO = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
EPOCH = "00000000000000aa"


@pytest.mark.parametrize("extra, why", [
    (["--listen", "0"], "embedded broker \\(amqtt\\) has none"),
    (["--broker", "mqtt://127.0.0.1:1"], "needs --db postgresql"),
    (["--broker", "mqtt://127.0.0.1:1", "--db", "postgresql://x@127.0.0.1:1/x", "--packages-bind", "127.0.0.1:8443"],
     "port 0"),
])
def test_workers_refuses_what_cannot_work(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
                                          why: str) -> None:
    assert main(["host", "serve", "--state-dir", str(tmp_path / "h"), "--workers", "2", *extra]) == 2
    assert re.search(why, capsys.readouterr().err)


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[int]:
    if MOSQUITTO is None:
        pytest.skip("mosquitto not installed")
    port = free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    f"user {pwd.getpwuid(os.geteuid()).pw_name}\n")
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _listening(port), what="mosquitto listening")
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _listening(port: int) -> bool:
    import socket
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _kem() -> str:
    key = x25519.X25519PrivateKey.generate().public_key()
    return base64.b64encode(key.public_bytes(Encoding.Raw, PublicFormat.Raw)).decode()


def test_two_worker_processes_share_the_reports(tmp_path: Path, mosquitto: int, own_postgres: LocalPostgres) -> None:
    db = own_postgres.create_database(f"egm_serve_{uuid.uuid4().hex[:8]}")
    state = tmp_path / "host"
    broker = f"mqtt://127.0.0.1:{mosquitto}"
    parent = subprocess.Popen(
        [sys.executable, "-m", "firmware.cli", "host", "serve", "--state-dir", str(state), "--dev-pki", "T0",
         "--plain", "--broker", broker, "--db", db, "--workers", "2"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(lambda: parent.stdout.readline().decode(), "")),
                              daemon=True)
    reader.start()
    pub = None
    try:
        pki = state / "pki"
        wait_for(lambda: (pki / "issued" / "T0.cert.pem").exists(), timeout=60, what="the development PKI")
        terminals = ["T0", "T1", "T2", "T3"]
        for t in terminals[1:]:
            issue(pki, "terminal", t)
        ids = {t: TerminalIdentity.load(pki, t) for t in terminals}
        downs = Inbox()
        watcher = client("test-watch", BrokerAddress.parse(broker), downs, subscriptions=["egm/v1/+/down"])
        watcher.start()
        pub = client("test-pub", BrokerAddress.parse(broker))
        pub.start()
        wait_for(lambda: pub.connected and watcher.connected, what="test clients connected")
        wait_for(lambda: sum("; store " in line for line in lines) >= 3, timeout=60, what="both workers up")

        def send(t: str, seq: int, type_: str, body: dict) -> None:
            env = seal(sender_id=t, seq=seq, time=datetime.now(UTC), type=type_, body={**body, "epoch": EPOCH},
                       signing_key=ids[t].signing_key, recipient_public_key=ids[t].host_kem_key)
            assert pub.publish(up_topic(t), env)

        hellos = {t: {"software": "test", "last_host_seq": None, "kem_public": _kem()} for t in terminals}
        for _ in range(20):                # sent again until acknowledged, as a terminal does
            for t in terminals:
                send(t, 1, "hello", hellos[t])
            if _waited(lambda: len(downs.payloads()) >= len(terminals), 2.0):
                break
        n = 50
        for seq in range(2, n + 2):
            for t in terminals:
                send(t, seq, "meters", {"meters": {"coin_in": seq}, "credits": seq})
                if seq % 10 == 0:
                    send(t, seq, "meters", {"meters": {"coin_in": seq}, "credits": seq})      # a resend
        total = len(terminals) * (n + 1)
        with HostStore.open(db) as store:
            wait_for(lambda: sum(store.sequence(t)["count"] for t in terminals) == total, timeout=60,
                     what="every report stored")
            for t in terminals:
                assert store.sequence(t) == {"count": n + 1, "first": 1, "last": n + 1, "gaps": []}
        watcher.stop()
    finally:
        if pub is not None:
            pub.stop()
        parent.send_signal(signal.SIGTERM)
        parent.wait(timeout=30)
        reader.join(timeout=5)
        own_postgres.drop_database(db.rsplit("/", 1)[1])
    text = "".join(lines)
    stored = [int(m) for m in re.findall(r"stopped; .*?'stored': (\d+)", text)]
    assert len(stored) == 2 and all(s > 0 for s in stored), text[-3000:]
    assert sum(stored) == 4 * 51
    # an acknowledgement for every report and every resend (the resends: duplicates), after the commit
    acks = [int(m) for m in re.findall(r"stopped; .*?'sent_ack': (\d+)", text)]
    dups = [int(m) for m in re.findall(r"stopped; .*?'duplicate': (\d+)", text)]
    assert sum(acks) == 4 * 51 + 4 * 5 and sum(dups) == 4 * 5, text[-3000:]


def _waited(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False
