"""``egm sim ...`` as a child process, driven over its standard input and output."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def egm_sim(*args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    """Run ``egm sim ARGS``; on the way out kill it if still running and close its pipes."""
    proc = subprocess.Popen([sys.executable, "-m", "firmware.cli", "sim", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1, env=env)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


def send(proc: subprocess.Popen, text: str) -> None:
    """Write ``text`` (one or more lines) to the process and flush."""
    proc.stdin.write(text)
    proc.stdin.flush()


def ask(proc: subprocess.Popen, line: str) -> str:
    """Send one command line; its one-line answer."""
    send(proc, line + "\n")
    return proc.stdout.readline().strip()
