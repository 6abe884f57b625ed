"""The fixtures shared by the driver tests that run real threads, ptys and FIFOs: the no-leak
check, and a module's simulator (its ``sim`` fixture) served on a pty."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from sim_hardware.pty_link import PtyLink, run_on_pty
from tests.drivers.leaks import open_fds


@pytest.fixture
def no_leaks() -> Iterator[None]:
    """Fail the test if it leaves a thread running or a file descriptor (pty, FIFO, pipe) open.

    Modules opt in with ``pytestmark = pytest.mark.usefixtures("no_leaks")``."""
    threads = set(threading.enumerate())
    fds = open_fds()
    yield
    deadline = time.monotonic() + 2.0
    while (extra := set(threading.enumerate()) - threads) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not extra, f"leaked threads: {extra}"
    leaked = {fd: target for fd, target in open_fds().items() if fds.get(fd) != target}
    assert not leaked, f"leaked file descriptors: {leaked}"


@pytest.fixture
def link(no_leaks, sim) -> Iterator[PtyLink]:
    """The module's ``sim`` fixture served on a pty (the driver opens ``link.path``)."""
    with run_on_pty(sim) as link:
        yield link
