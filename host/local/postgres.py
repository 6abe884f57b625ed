"""A PostgreSQL server of our own: ``initdb`` into a temporary directory, ``postgres`` on a free
loopback port and its own unix-socket directory, for tests and benchmarks (never for a floor).

    with LocalPostgres() as pg:                      # or pg.start() ... pg.stop()
        url = pg.create_database("egm_host")         # postgresql+psycopg://postgres@127.0.0.1:PORT/egm_host
        pg.pause(); pg.resume()                      # SIGSTOP / SIGCONT of the postmaster and its backends

The binaries are found on ``PATH`` and then in ``/usr/lib/postgresql/*/bin`` (:func:`find_binaries`).
``initdb`` refuses to run as root, so as root the cluster is made and served as an unprivileged
user (``postgres`` if it exists, else ``nobody``) who owns the directory. ``fsync`` stays on unless
``durable=False`` (tests that measure nothing may turn it off). A server that does not come up is a
:class:`LocalPostgresError` carrying the end of its log.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

START_TIMEOUT_S = 30.0
SUPERUSER = "postgres"


class LocalPostgresError(RuntimeError):
    """The local PostgreSQL server could not be made, started or used."""


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``postgres``, or None if they are not installed."""
    found = shutil.which("initdb")
    if found and shutil.which("postgres"):
        return Path(os.path.realpath(found)).parent
    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(os.path.join(bindir, "initdb"), os.X_OK) and os.access(os.path.join(bindir, "postgres"), os.X_OK):
            return Path(bindir)
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged user to run as when we are root; None when we are not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise LocalPostgresError("running as root and neither a 'postgres' nor a 'nobody' user exists")


class LocalPostgres:
    """One throw-away PostgreSQL cluster and server (see the module docstring)."""

    def __init__(self, *, durable: bool = True, bindir: Path | None = None,
                 settings: dict[str, Any] | None = None) -> None:
        self.durable = durable
        self.bindir = bindir or find_binaries()
        if self.bindir is None:
            raise LocalPostgresError("PostgreSQL is not installed (no initdb/postgres on PATH or in "
                                     "/usr/lib/postgresql/*/bin)")
        self.settings = dict(settings or {})
        self.port = 0
        self.root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._user = _run_as()

    # --- paths ------------------------------------------------------------------------------------
    @property
    def data(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        assert self.root is not None
        return self.root / "sock"

    @property
    def log_path(self) -> Path:
        assert self.root is not None
        return self.root / "postgres.log"

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def url(self, database: str = "postgres") -> str:
        """The SQLAlchemy URL of ``database`` on this server (TCP on loopback, trust auth)."""
        if not self.port:
            raise LocalPostgresError("the local PostgreSQL server is not started")
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    # --- life cycle ---------------------------------------------------------------------------------
    def start(self) -> LocalPostgres:
        """initdb (once) and start the server; returns self once it accepts connections."""
        if self._proc is not None:
            return self
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="egm-pg-"))
            self.socket_dir.mkdir()
            self._own(self.root, self.socket_dir)
            self._initdb()
        for attempt in range(3):               # a port taken between free_port() and bind: try another
            self.port = free_port()
            try:
                self._launch()
                return self
            except LocalPostgresError:
                if attempt == 2 or "could not bind" not in self._log_tail():
                    raise
        return self

    def stop(self, *, remove: bool = True) -> None:
        """Stop the server (fast shutdown) and, unless ``remove`` is False, delete its directory."""
        if self._proc is not None and self._proc.poll() is None:
            self.resume()                            # a paused server cannot shut down
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if remove and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
        self.port = 0

    def pause(self) -> None:
        """SIGSTOP the postmaster and every backend: the database stops answering (a stall; new
        connections wait in the listen queue). Linux only (/proc)."""
        self._signal_all(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT what :meth:`pause` stopped."""
        self._signal_all(signal.SIGCONT)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def create_database(self, name: str) -> str:
        """``CREATE DATABASE name`` (a plain identifier) through the unix socket; its URL."""
        if not name.replace("_", "").isalnum() or not name.isascii():
            raise LocalPostgresError(f"database name must be letters, digits and _, got {name!r}")
        self._psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self._psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    # --- plumbing -----------------------------------------------------------------------------------
    def _own(self, *paths: Path) -> None:
        if self._user is not None:
            for p in paths:
                os.chown(p, self._user.pw_uid, self._user.pw_gid)
        for p in paths:
            os.chmod(p, 0o700)

    def _subprocess_user(self) -> dict[str, Any]:
        if self._user is None:
            return {}
        return {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}

    def _initdb(self) -> None:
        assert self.bindir is not None
        cmd = [str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
               "--encoding=UTF8", "--locale=C", "--no-instructions"]
        if not self.durable:
            cmd.append("--no-sync")
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root, check=False,
                              **self._subprocess_user())
        if done.returncode != 0:
            raise LocalPostgresError(f"initdb failed ({done.returncode}): "
                                     f"{(done.stderr or done.stdout).strip()[-2000:]}")

    def _options(self) -> list[str]:
        opts: dict[str, Any] = {
            "listen_addresses": "127.0.0.1", "port": self.port,
            "unix_socket_directories": str(self.socket_dir), "max_connections": 100,
            "shared_buffers": "64MB", "logging_collector": "off",
        }
        if not self.durable:
            opts.update(fsync="off", synchronous_commit="off", full_page_writes="off")
        opts.update(self.settings)
        out: list[str] = []
        for key, value in opts.items():
            out += ["-c", f"{key}={value}"]
        return out

    def _launch(self) -> None:
        assert self.bindir is not None
        logf = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps it; closed below
        try:
            self._proc = subprocess.Popen(
                [str(self.bindir / "postgres"), "-D", str(self.data), *self._options()],
                stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.root,
                start_new_session=True, **self._subprocess_user())
        finally:
            logf.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._proc = None
                raise LocalPostgresError(f"postgres exited at start; its log ends:\n{self._log_tail()}")
            if self._ready():
                log.info("local PostgreSQL on 127.0.0.1:%d (%s)", self.port, self.root)
                return
            time.sleep(0.05)
        self.stop(remove=False)
        raise LocalPostgresError(f"postgres did not come up in {START_TIMEOUT_S:.0f} s; its log ends:\n"
                                 f"{self._log_tail()}")

    def _ready(self) -> bool:
        """postmaster.pid's last line says ``ready`` once it accepts connections."""
        try:
            lines = (self.data / "postmaster.pid").read_text().splitlines()
        except OSError:
            return False
        return len(lines) >= 8 and lines[7].strip() == "ready"

    def _log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"

    def _psql(self, sql: str) -> None:
        assert self.bindir is not None
        psql = self.bindir / "psql"
        if not psql.exists():
            psql = Path(shutil.which("psql") or "psql")
        done = subprocess.run([str(psql), "-h", str(self.socket_dir), "-p", str(self.port), "-U", SUPERUSER,
                               "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql],
                              capture_output=True, text=True, check=False, **self._subprocess_user())
        if done.returncode != 0:
            raise LocalPostgresError(f"{sql!r} failed: {done.stderr.strip()}")

    def _signal_all(self, sig: signal.Signals) -> None:
        """``sig`` to the postmaster and each of its children (every backend calls setsid(), so
        the postmaster's process group alone is not the server)."""
        if self._proc is None:
            raise LocalPostgresError("the local PostgreSQL server is not running")
        pids = [self._proc.pid, *_children(self._proc.pid)]
        for pid in pids if sig == signal.SIGSTOP else reversed(pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)


def _children(parent: int) -> list[int]:
    """The pids whose parent is ``parent`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ')'
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(parent):
            found.append(int(entry))
    return found
