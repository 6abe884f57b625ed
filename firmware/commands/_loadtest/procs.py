"""The load test's processes: the embedded broker, the host workers (``egm host serve``) and the
simulator processes; and the CPU each used (``/proc/<pid>/stat``, read before it is stopped).

``python -m firmware.commands._loadtest.procs broker PKI`` runs the embedded broker alone (TLS with
the host's certificate, client certificates required, the CRL followed) on a free loopback port,
prints its URL and serves until stdin closes.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from firmware.errors import EgmError

log = logging.getLogger("egm.loadtest")

PY = [sys.executable]
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class LoadTestError(EgmError):
    """A process of the load test did not start or answer."""


#: the simulator processes' niceness: the load generator yields the CPU to the system under test (the
#: host, the broker, the database), so a machine too small for both shows as a shortfall of reports
#: made (a problem of the run), not as the host's latency
SIM_NICE = 10


def _stat(pid: int) -> list[str] | None:
    try:
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process ``pid`` so far (None: gone, or not Linux)."""
    fields = _stat(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / _TICKS


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds of ``pid``, of its children it has waited for, and of its live children (a
    PostgreSQL server: the postmaster and its backends)."""
    fields = _stat(pid)
    if fields is None:
        return None
    total = sum(int(f) for f in fields[11:15]) / _TICKS
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (child := _stat(int(entry))) is not None and child[1] == str(pid):
            total += (int(child[11]) + int(child[12])) / _TICKS
    return total


def machine_busy_seconds() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, every core (/proc/stat)."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return 0.0, 0.0
    ticks = [int(x) for x in first[:8]]
    idle = ticks[3] + ticks[4]                       # idle + iowait
    return (sum(ticks) - idle) / _TICKS, sum(ticks) / _TICKS


class Proc:
    """A child process with a role; its CPU is sampled before it stops."""

    def __init__(self, role: str, argv: Sequence[str], *, stdin: bool = False, env: dict[str, str] | None = None,
                 stderr: IO[Any] | None = None, nice: int = 0) -> None:
        self.role = role
        self.popen = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stdin=subprocess.PIPE if stdin else None,
                                      stderr=stderr if stderr is not None else subprocess.DEVNULL, text=True,
                                      env=env, start_new_session=True,
                                      preexec_fn=(lambda: os.nice(nice)) if nice else None)
        self.cpu_s: float | None = None

    def line(self) -> str:
        """The next line it prints ('' once it is gone)."""
        assert self.popen.stdout is not None
        return self.popen.stdout.readline()

    def tell(self, word: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(word + "\n")
        self.popen.stdin.flush()

    def sample(self) -> None:
        cpu = cpu_seconds(self.popen.pid)
        if cpu is not None:
            self.cpu_s = cpu

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> None:
        if self.popen.poll() is not None:
            return
        self.sample()
        self.popen.send_signal(sig)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            log.warning("%s (pid %d) did not stop: killed", self.role, self.popen.pid)
            self.popen.kill()
            self.popen.wait(5)


def child_env() -> dict[str, str]:
    """The environment of a child: this interpreter's path to the product."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def start_broker(pki: Path, log_file: IO[Any]) -> tuple[Proc, str]:
    proc = Proc("broker", [*PY, "-m", "firmware.commands._loadtest.procs", "broker", str(pki)], stdin=True,
                env=child_env(), stderr=log_file)
    url = proc.line().strip()
    if not url.startswith("mqtt"):
        proc.stop()
        raise LoadTestError(f"the embedded broker did not start (see {log_file.name})")
    return proc, url


def start_host(index: int, state: Path, pki: Path, url: str, db: str | None, extra: Sequence[str],
               log_file: IO[Any]) -> Proc:
    """Host worker ``index``: on ``url``'s broker (MQTT), or with ``extra`` = ``--jetstream URLS``
    (``url`` empty) on the floor cluster."""
    argv = [*PY, "-m", "firmware.cli", "host", "serve", "--state-dir", str(state), "--pki", str(pki),
            *(["--broker", url] if url else []), "--packages-bind", "127.0.0.1:0", *extra]
    if db:
        argv += ["--db", db]
    proc = Proc(f"host-{index}", argv, env=child_env(), stderr=log_file)
    line = proc.line()
    if not line.startswith("egm host:"):
        proc.stop()
        raise LoadTestError(f"host worker {index} did not start (see {log_file.name})")
    return proc


def start_worker(index: int, spec: dict[str, Any], spec_path: Path, log_file: IO[Any]) -> Proc:
    spec_path.write_text(json.dumps(spec))
    return Proc(f"sim-{index}", [*PY, "-m", "firmware.commands._loadtest.worker", str(spec_path)], stdin=True,
                env=child_env(), stderr=log_file, nice=SIM_NICE)


def _serve_broker(pki: Path) -> int:
    from firmware.hostlink.broker import EmbeddedBroker

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s broker %(name)s %(levelname)s %(message)s")
    issued = pki / "issued"
    broker = EmbeddedBroker("127.0.0.1", 0, tls=(issued / "egm-host.cert.pem", issued / "egm-host.key.pem",
                                                  pki / "ca.cert.pem"), crl=pki / "crl.pem")
    broker.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def until_stdin_closes() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    sys.stdout.write(broker.url + "\n")
    sys.stdout.flush()
    while not stop.wait(0.2):
        pass
    broker.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["broker"]:
        sys.exit(_serve_broker(Path(sys.argv[2])))
    sys.exit(f"usage: {sys.argv[0]} broker PKI")
