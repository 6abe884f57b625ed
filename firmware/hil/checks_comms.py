"""What the lab suite's communication tests need beside the terminal: a reference casino host in
its own process (``egm host serve --listen PORT``, the product's host, the one the simulated
cabinet otherwise embeds) that a test can take away and bring back, and what that host stored
(``egm host meters|sequence``)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO, Any, cast

from firmware.hil.errors import TargetError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class HostProcess:
    """``egm host serve --state-dir STATE --pki PKI --listen PORT``: started by :meth:`start`,
    killed (SIGKILL: host and broker gone at once, as a cut cable) by :meth:`kill`."""

    def __init__(self, state: Path, pki: Path, port: int, log: Path) -> None:
        self.state, self.pki, self.port, self.log = state, pki, port, log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def broker(self) -> str:
        return f"mqtts://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        if self.proc is not None and self.proc.poll() is None:
            raise TargetError("the host is already running")
        self.state.mkdir(parents=True, exist_ok=True)
        out = self.log.open("ab")
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "host", "serve", "--state-dir",
                                          str(self.state), "--pki", str(self.pki), "--listen", str(self.port)],
                                         stdout=subprocess.PIPE, stderr=out, stdin=subprocess.DEVNULL,
                                         start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        finally:
            out.close()
        stdout = cast(IO[bytes], self.proc.stdout)
        line = stdout.readline().decode("utf-8", "replace")
        if not line.startswith("egm host:"):
            self.kill()
            raise TargetError(f"the host did not start: {line.strip() or 'nothing printed'} (log {self.log})")

    def kill(self) -> None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()

    def stop(self) -> None:
        """SIGTERM (the host stops cleanly), SIGKILL if it does not within 20 s."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()
        if proc.stdout is not None:
            proc.stdout.close()

    def query(self, *words: str) -> Any:
        """``egm host WORDS --state-dir STATE --json``: what the host stored."""
        done = subprocess.run([sys.executable, "-m", "firmware.cli", "host", *words, "--state-dir", str(self.state),
                               "--json"], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise TargetError(f"egm host {' '.join(words)}: {done.stderr.strip()[-300:]}")
        return json.loads(done.stdout)
