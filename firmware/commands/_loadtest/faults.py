"""``egm host loadtest --faults``: the floor's faults during the run (issue 27, docs/loadtest.md).

On a thread of its own, at fixed fractions of the duration: SIGKILL of one NATS node (restarted
:data:`NODE_DOWN_S` later), SIGKILL of one host worker (started again at once, as ``egm host serve
--workers`` does), and SIGSTOP of every PostgreSQL backend for :data:`PG_PAUSE_S` (then SIGCONT).
Each step is written to the timeline with its second since the start of the run, so the report can
set the latency of each moment against what was happening.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("egm.loadtest")

NODE_DOWN_S = 15.0
PG_PAUSE_S = 10.0
#: (fraction of the duration, fault)
PLAN = ((0.2, "kill_node"), (0.5, "kill_host"), (0.7, "pause_postgres"))


@dataclass
class FaultTargets:
    """What the faults act on: the cluster (``kill``/``restart``), the database (``pause``/``resume``),
    and the host workers (``kill_host(k)`` SIGKILLs worker k; ``start_host(k)`` starts it again)."""

    cluster: Any
    postgres: Any
    kill_host: Callable[[int], None]
    start_host: Callable[[int], None]
    node: int = 0
    worker: int = 0


@dataclass
class Faults:
    targets: FaultTargets
    duration: float
    t0: float = 0.0
    timeline: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self, t0: float) -> Faults:
        self.t0 = t0
        self._thread = threading.Thread(target=self._main, name="egm-loadtest-faults", daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float = 120.0) -> None:
        """Wait until every fault is over (each one ends with its repair)."""
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self.errors.append("the faults did not finish in time")

    def stop(self) -> None:
        self._stop.set()
        self.join(60.0)

    def _mark(self, what: str, **detail: Any) -> None:
        at = round(time.monotonic() - self.t0, 2)
        self.timeline.append({"t_s": at, "what": what, **detail})
        log.warning("fault timeline %.2f s: %s %s", at, what, detail or "")

    def _until(self, second: float) -> bool:
        return not self._stop.wait(max(0.0, self.t0 + second - time.monotonic()))

    def _main(self) -> None:
        steps: dict[str, Callable[[], None]] = {"kill_node": self._node, "kill_host": self._host,
                                                "pause_postgres": self._postgres}
        for fraction, name in PLAN:
            if not self._until(fraction * self.duration):
                return
            try:
                steps[name]()
            except Exception as exc:                      # reported; the check decides the run
                log.exception("fault %s failed", name)
                self.errors.append(f"{name}: {type(exc).__name__}: {exc}")

    def _node(self) -> None:
        t = self.targets
        self._mark("nats node killed (SIGKILL)", node=t.node)
        t.cluster.kill(t.node)
        self._stop.wait(NODE_DOWN_S)
        self._mark("nats node restarting", node=t.node)
        t.cluster.restart(t.node, wait=True)
        self._mark("nats node ready again", node=t.node)

    def _host(self) -> None:
        t = self.targets
        self._mark("host worker killed (SIGKILL)", worker=t.worker)
        t.kill_host(t.worker)
        t.start_host(t.worker)
        self._mark("host worker started again", worker=t.worker)

    def _postgres(self) -> None:
        t = self.targets
        self._mark("postgresql paused (SIGSTOP)")
        t.postgres.pause()
        try:
            self._stop.wait(PG_PAUSE_S)
        finally:
            t.postgres.resume()
        self._mark("postgresql resumed (SIGCONT)")


def kill(proc: Any) -> None:
    """SIGKILL a :class:`~firmware.commands._loadtest.procs.Proc` and reap it."""
    proc.sample()
    proc.popen.send_signal(signal.SIGKILL)
    proc.popen.wait(10)
