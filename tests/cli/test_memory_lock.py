"""A critical-memory error at power-up locks the cabinet instead of ending the process: the control
socket answers ``status`` (HALTED, the error), a technician logs in and RAM-clears through the
service API, and the terminal then starts on the new memory."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from firmware.cabinet.control import ControlError, request
from firmware.ledger.ledger import Ledger
from firmware.ledger.store import MIRROR_FILE, PRIMARY_FILE
from tests.cli.processes import reaped


def broken_memory(state: Path) -> None:
    """A ledger with money in it whose two copies were then deleted (key and mark kept)."""
    with Ledger.open(state) as ledger:
        ledger.bill_in(5000)
    for name in (PRIMARY_FILE, MIRROR_FILE):
        for suffix in ("", "-wal", "-shm"):
            (state / (name + suffix)).unlink(missing_ok=True)


def start(tmp_path: Path, state: Path) -> subprocess.Popen:
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[host]\nenabled = false\n")
    return subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--config",
                             str(cfg), "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def status_when(proc: subprocess.Popen, state: Path, predicate, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        assert proc.poll() is None, f"the terminal exited: {proc.stderr.read() if proc.stderr else ''}"
        try:
            last = request(state, "status", timeout=10)
            if last and predicate(last):
                return last
        except ControlError as exc:         # not up yet, or between the lock and the terminal
            last = str(exc)
        assert time.monotonic() < deadline, f"waited {timeout} s: {last}"
        time.sleep(0.1)


def service(state: Path, *words: str):
    return request(state, "service", {"words": list(words)}, timeout=30)


def test_a_memory_error_at_power_up_locks_the_cabinet_until_a_technician_clears_it(tmp_path):
    state = tmp_path / "state"
    broken_memory(state)
    proc = start(tmp_path, state)
    with reaped(proc):
        s = status_when(proc, state, lambda s: s.get("state") == "HALTED")
        assert "behind its high-water mark" in s["halted"]
        assert s["tilts"][0]["tilt"] == "critical_memory:ledger" and s["accepting_notes"] is False
        assert s["critical_memory"]["locked"] is True
        with pytest.raises(ControlError, match="log in first"):
            service(state, "ram-clear", "CLEAR", "memory lost")
        with pytest.raises(ControlError, match="critical memory is locked"):
            request(state, "play", {"wagers": {"1": {"bac": 10}}})
        assert service(state, "login", "attendant", "1111")["role"] == "attendant"
        with pytest.raises(ControlError, match="may not use ram-clear"):
            service(state, "ram-clear", "CLEAR", "memory lost")
        with pytest.raises(ControlError, match="critical memory is locked"):
            service(state, "meters")
        assert service(state, "login", "technician", "2222")["role"] == "technician"
        with pytest.raises(ControlError, match="confirm"):
            service(state, "ram-clear", "memory lost")
        assert status_when(proc, state, lambda s: True)["state"] == "HALTED"    # still locked
        assert service(state, "ram-clear", "CLEAR", "both", "copies", "lost")["cleared"] is True
        s = status_when(proc, state, lambda s: s.get("state") == "IDLE")
        assert s["credits_cents"] == 0
        request(state, "stop")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "critical memory: LOCKED: " in out and "RAM cleared by a technician" in out and "cabinet: IDLE" in out
    with Ledger.open(state, read_only=True) as ledger:
        events = list(reversed(ledger.events(100)))
    names = [e["event"] for e in events]
    assert names[:2] == ["ledger_created", "ram_clear"]
    clear = events[1]
    assert clear["role"] == "technician" and clear["reason"] == "both copies lost"
    assert "behind its high-water mark" in clear["previous"]["unreadable"]
    locked = [e for e in events if e.get("while_locked")]
    assert [e["role"] for e in locked if e["event"] == "service_entry"] == ["attendant", "technician"]
    assert any(e["event"] == "service_action" and e["result"] == "refused" for e in locked)


def test_a_locked_cabinet_turned_off_fails_with_the_error(tmp_path):
    state = tmp_path / "state"
    broken_memory(state)
    proc = start(tmp_path, state)
    with reaped(proc):
        status_when(proc, state, lambda s: s.get("state") == "HALTED")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "critical memory" in err and "behind its high-water mark" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (state / "control.sock").exists()
    assert not (state / PRIMARY_FILE).exists()          # nothing was created or repaired


def test_the_screens_show_memory_error_with_the_reason(tmp_path, monkeypatch):
    """The player's window over the lock: the lockup notice and the error."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    from firmware.cabinet.memory_lock import MemoryLock
    from firmware.config import load_config
    from firmware.ledger.errors import CriticalMemoryError
    from firmware.ui.app import UiApp
    from firmware.ui.messages import text

    state = tmp_path / "state"
    broken_memory(state)
    with pytest.raises(CriticalMemoryError) as caught:
        Ledger.open(state)
    lock = MemoryLock(load_config(None), state, caught.value)
    app = UiApp(lock, size=(1280, 800), drive_terminal=False, par_cache=tmp_path / "par")
    app.step(1 / 30)
    overlay = " ".join(app.frame.texts_in("overlay"))
    assert text("overlay.halted") in overlay and "MEMORY ERROR" in overlay
    assert "behind its high-water mark" in " ".join(t.text for t in app.frame.texts)
    assert not app.betting
    assert not any(h.name in ("deal", "cash_out") for h in app.frame.hits)


def _autoplay(tmp_path: Path, state: Path, rounds: int) -> None:
    """``rounds`` rounds, then a stop that waits (up to 30 s) until the host stored every report."""
    cfg = tmp_path / "deliver.toml"
    cfg.write_text("[host]\ndrain_s = 30\n")
    proc = subprocess.run([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless", "--autoplay",
                           str(rounds), "--config", str(cfg), "--state-dir", str(state)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def _ledger_files(state: Path) -> list[Path]:
    from firmware.ledger.mark import MARK_FILE
    from firmware.ledger.store import KEY_FILE

    return [state / (name + suffix) for name in (PRIMARY_FILE, MIRROR_FILE) for suffix in ("", "-wal", "-shm")] \
        + [state / KEY_FILE, state / MARK_FILE]


def test_memory_found_behind_the_hosts_witness_locks_the_cabinet_across_power_cuts(tmp_path):
    """Critical memory put back as it was earlier (all its files, the high-water mark too) verifies
    locally; the embedded host, answering the hello, holds later reports: the running terminal
    halts into the lock (not an exit), the lock outlives turning the cabinet off, and only a
    technician's RAM clear ends it."""
    import shutil

    state, early = tmp_path / "state", tmp_path / "early"
    _autoplay(tmp_path, state, 2)
    early.mkdir()
    for f in _ledger_files(state):
        if f.exists():
            shutil.copy2(f, early / f.name)
    _autoplay(tmp_path, state, 3)                     # more reports, stored at the host
    from firmware.config import load_config
    from firmware.hostlink.outbox import REPORTED
    from host.store import HostStore

    # the premise: the host holds reports beyond the last one of the copy put back
    with Ledger.open(early, read_only=True) as old, Ledger.open(state, read_only=True) as new:
        store = HostStore.open(str(state / "host" / "host.db"))
        try:
            held = store.held(load_config(None).terminal.id, new.epoch)
        finally:
            store.close()
        assert held > sum(old.kind_counts.get(k, 0) for k in REPORTED)
    for f in _ledger_files(state):
        f.unlink(missing_ok=True)
        if (early / f.name).exists():
            shutil.copy2(early / f.name, f)

    def boot() -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "firmware.cli", "run", "--sim", "--headless",
                                 "--state-dir", str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    proc = boot()
    with reaped(proc):
        s = status_when(proc, state, lambda s: (s.get("critical_memory") or {}).get("locked"))
        assert s["state"] == "HALTED" and "behind the host's witness" in s["halted"]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "behind the host's witness" in err, (out, err)
    assert "critical memory: HALTED" in out and "cabinet: IDLE" in out

    with Ledger.open(state, read_only=True) as ledger:        # read-only: the audit still reads it
        assert "behind the host's witness" in (ledger.locked or "")
    verify = subprocess.run([sys.executable, "-m", "firmware.cli", "ledger", "verify", "--state-dir", str(state)],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 1 and "LOCKED: critical memory is behind the host's witness" in verify.stdout

    proc = boot()                                              # powered up again: still locked
    with reaped(proc):
        s = status_when(proc, state, lambda s: s.get("state") == "HALTED")
        assert "behind the host's witness" in s["halted"] and "RAM clear is needed" in s["halted"]
        assert service(state, "login", "technician", "2222")["role"] == "technician"
        assert service(state, "ram-clear", "CLEAR", "restored", "copies")["cleared"] is True
        s = status_when(proc, state, lambda s: s.get("state") == "IDLE")
        request(state, "stop")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with Ledger.open(state, read_only=True) as ledger:
        assert ledger.locked is None
        clear = next(e for e in ledger.events(100) if e["event"] == "ram_clear")
    assert "behind the host's witness" in clear["previous"]["locked"]
