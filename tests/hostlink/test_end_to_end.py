"""Acceptance: a whole terminal (simulated devices) and the reference host over a real MQTT broker.

* end to end: notes in, rounds, a cashout; the host's stored meters equal ``egm meters`` exactly and
  every report arrived once, numbered without a gap;
* outage: the host process (with its broker) is killed during autoplay and started again a few
  seconds later; the terminal keeps playing, and afterwards every report is in the host's store
  exactly once, without a gap.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

EGM = [sys.executable, "-m", "firmware.cli"]


def egm_json(*args: str) -> object:
    out = subprocess.run([*EGM, *args, "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def last_report_number(state: Path) -> int:
    from firmware.hostlink.outbox import Outbox
    from firmware.ledger.ledger import Ledger

    with Ledger.open(state, read_only=True) as ledger:
        return Outbox(ledger).last_number


def test_host_meters_equal_the_terminal_meters(tmp_path: Path) -> None:
    state = tmp_path / "t"
    proc = subprocess.run([*EGM, "run", "--sim", "--headless", "--autoplay", "40", "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "host link: mqtts://127.0.0.1:" in proc.stdout
    host = state / "host"
    terminal = egm_json("meters", "--state-dir", str(state))
    stored = egm_json("host", "meters", "--state-dir", str(host))["EGM-0001"]
    assert stored["meters"] == terminal["meters"]
    assert stored["credits"] == terminal["credits"]
    assert terminal["meters"]["ticket_out"] > 0 and terminal["meters"]["bills_in"] > 0
    sequence = egm_json("host", "sequence", "--state-dir", str(host), "EGM-0001")
    assert sequence == {"count": last_report_number(state), "first": 1, "last": last_report_number(state), "gaps": []}
    rounds = egm_json("host", "rounds", "--state-dir", str(host), "--last", "1000")
    assert len(rounds) == 40
    recall = egm_json("recall", "--state-dir", str(state), "--last", "1")[0]
    assert rounds[0]["record"]["round_id"] == recall["round_id"]
    assert egm_json("host", "rejections", "--state-dir", str(host)) == []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_host(host: Path, pki: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([*EGM, "host", "serve", "--state-dir", str(host), "--pki", str(pki), "--listen", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("egm host:"), proc.stderr.read() if proc.poll() is not None else line
    return proc


def test_a_host_outage_loses_nothing_and_stores_nothing_twice(tmp_path: Path) -> None:
    state, host = tmp_path / "t", tmp_path / "h"
    subprocess.run([*EGM, "certs", "dev", "--state-dir", str(state), "--terminal", "EGM-0001"],
                   check=True, capture_output=True, timeout=60)
    pki = state / "pki"
    port = _free_port()
    config = tmp_path / "egm.toml"
    config.write_text(f'[host]\nbroker = "mqtts://127.0.0.1:{port}"\npki = "{pki}"\nack_timeout_s = 1.0\n'
                      f'drain_s = 30.0\n')
    server = _start_host(host, pki, port)
    terminal = subprocess.Popen([*EGM, "run", "--sim", "--headless", "--autoplay", "150", "--config", str(config),
                                 "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        rounds = 0
        while rounds < 20:                                   # the host is taking reports
            line = terminal.stdout.readline()
            assert line, terminal.stderr.read()
            rounds += line.startswith("  round ")
        server.send_signal(signal.SIGKILL)                   # host and broker gone, mid-play
        server.wait(10)
        while rounds < 60:                                   # the terminal plays on
            line = terminal.stdout.readline()
            assert line, terminal.stderr.read()
            rounds += line.startswith("  round ")
        server = _start_host(host, pki, port)                # back: the terminal reconnects
        out, err = terminal.communicate(timeout=300)
        assert terminal.returncode == 0, err[-3000:]
    finally:
        if terminal.poll() is None:
            terminal.kill()
        server.send_signal(signal.SIGTERM)
        server.wait(20)
    last = last_report_number(state)
    sequence = egm_json("host", "sequence", "--state-dir", str(host), "EGM-0001")
    assert sequence == {"count": last, "first": 1, "last": last, "gaps": []}
    terminal_meters = egm_json("meters", "--state-dir", str(state))
    stored = egm_json("host", "meters", "--state-dir", str(host))["EGM-0001"]
    assert stored["meters"] == terminal_meters["meters"]
    assert len(egm_json("host", "rounds", "--state-dir", str(host), "--last", "1000")) == 150
