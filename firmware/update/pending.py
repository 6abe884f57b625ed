"""The rauc backend's events awaiting critical memory: a small locked JSON file.

The directory backend keeps its pending events in its ``state.json``; on a partitioned cabinet
RAUC keeps the slots, so ``egm update`` run by a technician (without ``--state-dir``) leaves its
events here, in ``<dir>/pending.json``, until the terminal writes them into critical memory
(:func:`firmware.update.journal.flush`). Written atomically, serialised by a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.ledger.mark import fsync_dir
from firmware.update.errors import UpdateError

PENDING_FILE = "pending.json"


@dataclass
class Pending:
    pending: list[dict[str, Any]] = field(default_factory=list)

    def record(self, name: str, **data: Any) -> None:
        self.pending.append({"event": name, **data})


class PendingFile:
    """``<dir>/pending.json``: the events not yet in critical memory."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.path = self.dir / PENDING_FILE

    def load(self) -> Pending:
        try:
            doc = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return Pending()
        except (OSError, ValueError) as exc:
            raise UpdateError(f"{self.path}: cannot read the pending update events: {exc}") from None
        if not isinstance(doc, list):
            raise UpdateError(f"{self.path}: the pending update events are damaged (not a list)")
        return Pending([e for e in doc if isinstance(e, dict)])

    def _save(self, pending: Pending) -> None:
        tmp = self.path.with_name(f".{PENDING_FILE}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(pending.pending, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            fsync_dir(self.dir)
        except OSError as exc:
            raise UpdateError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[Pending]:
        """The pending events under the lock; saved when the block ends without an error."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.dir / "pending.lock", "a+b")   # noqa: SIM115 (held for the block)
        except OSError as exc:
            raise UpdateError(f"{self.dir}: {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            pending = self.load()
            yield pending
            self._save(pending)
