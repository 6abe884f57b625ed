"""The raw entropy source of a simulated cabinet, which a test can make fail on purpose.

Labs check the terminal's reseed and health-test behaviour on a forced entropy-source failure. A
real cabinet cannot be made to produce a broken ``os.urandom``, so ``egm run --sim`` gives its RNG
this source instead: it reads ``os.urandom`` (through the same :class:`~firmware.rng.health.
HealthTestedEntropy` as production) until :meth:`SwitchableSource.stick` makes every byte it
returns :data:`STUCK_BYTE`, the classic "stuck at" fault of a noise source. The SP 800-90B
repetition count test (cutoff 6 at H = 4) then fails on the first request (``egm simctl rng
entropy stuck``, docs/rng.md). :meth:`SwitchableSource.unstick` restores the OS source.

Only the simulated cabinet is built with it (``firmware/commands/run.py``); the production
cabinet's source is ``os.urandom`` itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

#: The byte a stuck source returns, every time.
STUCK_BYTE = 0x5A


class SwitchableSource:
    """``source(n)`` bytes, or ``n`` copies of :data:`STUCK_BYTE` while stuck (thread-safe)."""

    def __init__(self, source: Callable[[int], bytes] = os.urandom) -> None:
        self._source = source
        self._stuck = threading.Event()

    @property
    def stuck(self) -> bool:
        return self._stuck.is_set()

    def stick(self) -> None:
        """From now on every byte is :data:`STUCK_BYTE`."""
        self._stuck.set()

    def unstick(self) -> None:
        """From now on the bytes are the OS source's again."""
        self._stuck.clear()

    def __call__(self, n: int) -> bytes:
        if self._stuck.is_set():
            return bytes((STUCK_BYTE,)) * n
        return self._source(n)
