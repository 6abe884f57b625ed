"""PAR sheets computed in the background for the service menu's configuration changes.

A configuration change (``config set``, ``package approve``) is checked against the jurisdiction
profile from the game's PAR sheet. Exact sheets take seconds at most; a game only Monte Carlo reaches
(Hold'em War, Split 21 Stud with the jackpot, options no shipped sheet covers) takes minutes. That
work must not run on the terminal's thread, which keeps the devices, the doors and the host link
answered: the change is refused for now, the sheet is computed on a worker thread (one process,
so nothing is forked from the running terminal) into the PAR cache, and the same change asked again
once it is done finds the sheet there and is checked and applied as usual.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class ParJob:
    """One configuration's sheet being computed."""

    game: str
    options: dict[str, Any]
    rounds: int
    started: float = field(default_factory=time.time)
    state: str = "running"           #: running, done, failed
    error: str | None = None
    finished: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "options": self.options, "rounds": self.rounds, "state": self.state,
                "started": self.started, "finished": self.finished, "error": self.error}


class ParJobs:
    """The background computations, one per configuration (a key the caller chooses)."""

    def __init__(self) -> None:
        self._jobs: dict[str, ParJob] = {}
        self._lock = threading.Lock()

    def start(self, key: str, job: ParJob, work: Callable[[], Any]) -> ParJob:
        """The job for ``key``: the running or finished one, or ``job`` started now on a worker
        thread running ``work`` (which stores the sheet where the next check finds it)."""
        with self._lock:
            existing = self._jobs.get(key)
            if existing is not None:
                return existing
            self._jobs[key] = job

        def run() -> None:
            try:
                work()
            except Exception as exc:        # reported to the technician through the job
                log.exception("PAR sheet of %s failed", job.game)
                job.error = f"{type(exc).__name__}: {exc}"[:300]
                job.state = "failed"
            else:
                job.state = "done"
            job.finished = time.time()

        threading.Thread(target=run, name=f"egm-par-{job.game}", daemon=True).start()
        return job

    def forget(self, key: str) -> None:
        with self._lock:
            self._jobs.pop(key, None)

    def wait(self, timeout: float) -> bool:
        """Whether every job has finished within ``timeout`` seconds (tests, a clean shutdown)."""
        deadline = time.monotonic() + timeout
        while any(j.state == "running" for j in self.all()):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def all(self) -> list[ParJob]:
        with self._lock:
            return list(self._jobs.values())
