"""The terminal's notifications to systemd (firmware/cabinet/sd_notify.py, readiness.py) on a real
unix datagram socket standing for systemd's: READY=1 only once the cabinet reached attract with its
self-test passed, WATCHDOG=1 from the main loop at half WATCHDOG_USEC (a hung loop stops them),
STATUS= lines, STOPPING=1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from firmware.cabinet.readiness import ServiceNotifications
from firmware.cabinet.sd_notify import Notifier
from firmware.cabinet.states import CabinetState
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from tests.deploy.notify_socket import NotifySocket

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def notify_socket(tmp_path):
    sock = NotifySocket(tmp_path / "notify")
    yield sock
    sock.close()


def test_the_environment_names_the_socket_and_half_the_watchdog_interval():
    n = Notifier.from_environment({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "10000000"})
    assert n.enabled and n.interval == 5.0
    assert Notifier.from_environment({}).enabled is False
    assert Notifier.from_environment({}).send("READY=1") is False
    other = Notifier.from_environment({"NOTIFY_SOCKET": "/run/x", "WATCHDOG_USEC": "10000000",
                                       "WATCHDOG_PID": str(os.getpid() + 1)})
    assert other.interval is None                      # the watchdog is another process's
    assert Notifier.from_environment({"NOTIFY_SOCKET": "/x", "WATCHDOG_USEC": "ten"}).interval is None


def test_an_abstract_socket_is_reached_and_pings_are_spaced_by_half_the_interval(tmp_path):
    sock = NotifySocket(tmp_path / "abs", abstract=True)
    try:
        now = [0.0]
        n = Notifier(sock.address, 2_000_000, clock=lambda: now[0])
        assert n.ready("attract")
        sent = []
        for step in range(40):                         # 4 s of a loop turning every 0.1 s
            now[0] = step * 0.1
            sent.append(n.ping())
        assert sum(sent) == 4                          # at 0, 1, 2, 3 s
        assert sock.wait_for("READY", 2)[1] == {"READY": "1", "STATUS": "attract"}
        deadline = time.monotonic() + 2
        while len(sock.with_key("WATCHDOG")) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(sock.with_key("WATCHDOG")) == 4
    finally:
        sock.close()


def test_a_send_to_a_missing_socket_is_logged_and_does_not_raise(tmp_path, caplog):
    n = Notifier(str(tmp_path / "nobody"), 1_000_000)
    assert n.send("READY=1") is False
    assert "systemd notification" in caplog.text


def _terminal(state: Path, self_test, on_step=None) -> Terminal:
    ledger = Ledger.open(state)
    return Terminal(Config.model_validate({}), ledger, RngService.seeded(7), Devices(),
                    VoucherBook(ledger, terminal_id="T1"), self_test=self_test, on_step=on_step)


def test_ready_only_after_a_passed_self_test_and_a_hung_main_loop_stops_the_pings(tmp_path, notify_socket):
    notify = ServiceNotifications(Notifier(notify_socket.address, 100_000))     # a ping every 50 ms
    checked = threading.Event()

    def self_test(terminal):
        time.sleep(0.2)
        assert not notify_socket.with_key("READY")    # nothing said ready during the self-test
        checked.set()
        return {}

    terminal = _terminal(tmp_path / "state", self_test, on_step=notify.step)
    terminal.power_up()
    notify.step(terminal)
    assert checked.is_set() and terminal.cabinet.state is CabinetState.IDLE
    ready = notify_socket.wait_for("READY", 2)
    assert ready is not None and ready[1]["STATUS"] == "attract (self-test passed)"

    release = threading.Event()
    terminal.register(hang=lambda: release.wait(10))
    loop = threading.Thread(target=terminal.run, kwargs={"idle_wait": 0.01}, daemon=True)
    loop.start()
    try:
        time.sleep(0.6)
        before = len(notify_socket.with_key("WATCHDOG"))
        assert before >= 6                             # the loop pings every 50 ms
        terminal.submit("hang")                        # the main loop now hangs in a command
        time.sleep(0.15)
        hung_from = len(notify_socket.with_key("WATCHDOG"))
        time.sleep(0.6)
        assert len(notify_socket.with_key("WATCHDOG")) == hung_from        # no ping while hung
        release.set()
        time.sleep(0.4)
        assert len(notify_socket.with_key("WATCHDOG")) >= hung_from + 3    # pings again
    finally:
        release.set()
        terminal.stop()
        loop.join(5)
    assert len(notify_socket.with_key("READY")) == 1


def test_a_failed_self_test_never_says_ready_but_keeps_pinging_and_extending_the_start(tmp_path, notify_socket):
    notify = ServiceNotifications(Notifier(notify_socket.address, 100_000))
    terminal = _terminal(tmp_path / "state", lambda t: {"software_signature": "the manifest does not verify"})
    terminal.power_up()
    assert terminal.cabinet.state is CabinetState.TILT
    for _ in range(30):
        notify.step(terminal)
        terminal.step(0.01)
    assert notify_socket.wait_for("WATCHDOG", 2) is not None
    time.sleep(0.1)
    assert not notify_socket.with_key("READY")
    pings = notify_socket.with_key("WATCHDOG")
    assert all(m["EXTEND_TIMEOUT_USEC"] == "200000" for _, m in pings)
    assert notify_socket.with_key("STATUS")[0][1]["STATUS"].startswith("starting: tilt: ")


def _egm(*args: str, env=None, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "firmware.cli", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def test_egm_run_says_ready_after_the_door_found_open_is_closed_pings_and_says_stopping(tmp_path, notify_socket):
    """The real ``egm run`` as systemd starts it: a door open while the cabinet was off keeps it
    from attract (no READY=1, but pings extending the start), closing it reaches attract (READY=1),
    the pings go on, SIGTERM sends STOPPING=1."""
    state = tmp_path / "state"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1",
           "NOTIFY_SOCKET": notify_socket.address, "WATCHDOG_USEC": "400000"}
    proc = _egm("run", "--sim", "--headless", "--sim-door-open", "main", "--state-dir", str(state), env=env)
    try:
        started = notify_socket.wait_for("WATCHDOG", 60)
        assert started is not None, "no watchdog ping within 60 s of the start"
        time.sleep(1.0)
        assert not notify_socket.with_key("READY")
        assert all("EXTEND_TIMEOUT_USEC" in m for _, m in notify_socket.with_key("WATCHDOG"))
        statuses = [m["STATUS"] for _, m in notify_socket.with_key("STATUS")]
        assert statuses[0] == "power-up self-test" and any("tilt" in s for s in statuses)
        closed = subprocess.run([sys.executable, "-m", "firmware.cli", "simctl", "--state-dir", str(state),
                                 "door", "close", "main"], cwd=ROOT, env=env, capture_output=True, text=True,
                                timeout=30)
        assert closed.returncode == 0, closed.stdout + closed.stderr
        ready = notify_socket.wait_for("READY", 10)
        assert ready is not None, [m for _, m in notify_socket.messages]
        time.sleep(1.0)
        after = [t for t, m in notify_socket.with_key("WATCHDOG") if t > ready[0] and "EXTEND_TIMEOUT_USEC" not in m]
        assert len(after) >= 3                         # every 0.2 s
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert notify_socket.wait_for("STOPPING", 2) is not None


def test_the_critical_memory_lockup_pings_and_says_so_but_is_never_ready(tmp_path, notify_socket):
    """A cabinet that comes up in the critical-memory lock is alive (its loop serves the
    technician's RAM clear): it pings, so systemd does not restart it into the same lock, and says
    why it is not ready."""
    from tests.cli.test_memory_lock import broken_memory

    state = tmp_path / "state"
    broken_memory(state)
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[host]\nenabled = false\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NOTIFY_SOCKET": notify_socket.address, "WATCHDOG_USEC": "400000"}
    proc = _egm("run", "--sim", "--headless", "--config", str(cfg), "--state-dir", str(state), env=env)
    try:
        assert notify_socket.wait_for("WATCHDOG", 60) is not None, "no ping from the lock"
        time.sleep(1.0)
        assert len(notify_socket.with_key("WATCHDOG")) >= 3
        assert not notify_socket.with_key("READY")
        assert [m["STATUS"] for _, m in notify_socket.with_key("STATUS")][-1] == "critical memory LOCKED"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert notify_socket.wait_for("STOPPING", 2) is not None
