"""``egm sim ...`` as a child process, driven over its standard input and output."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
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


def line(proc: subprocess.Popen) -> str:
    """The next line the process prints, stripped."""
    return proc.stdout.readline().strip()


def lines(proc: subprocess.Popen, n: int) -> list[str]:
    """The next ``n`` lines the process prints, stripped."""
    return [line(proc) for _ in range(n)]


def pty_path(proc: subprocess.Popen) -> str:
    """The pty ``egm sim ... --pty`` prints first (fails with its standard error if none)."""
    path = line(proc)
    assert path.startswith("/dev/pts/"), proc.stderr.read()
    return path


def ask_until(proc: subprocess.Popen, text: str, answer: str, timeout: float = 5.0) -> str:
    """Ask ``text`` again every 50 ms until it is answered ``answer`` or ``timeout`` passes; the
    last answer."""
    deadline = time.monotonic() + timeout
    while True:
        got = ask(proc, text)
        if got == answer or time.monotonic() > deadline:
            return got
        time.sleep(0.05)


def quit_sim(proc: subprocess.Popen) -> None:
    """``quit``: the simulator answers ``bye`` and exits with status 0."""
    assert ask(proc, "quit") == "bye"
    assert proc.wait(timeout=5) == 0
