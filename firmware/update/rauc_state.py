"""What the rauc backend keeps beside RAUC: a small locked JSON file, ``<dir>/rauc-state.json``.

- ``committed``: the slot and version last committed (or found running at the first power-up).
  GRUB's boot counter leaves *every* booted slot not-good until ``rauc status mark-good`` (its
  script sets ``<slot>_TRY=1`` at each boot), so RAUC alone cannot tell a trial from the committed
  version booting again; this record can.
- ``pending``: the events not yet in critical memory (``egm update`` run by a technician without
  ``--state-dir``), until the terminal writes them (:func:`firmware.update.journal.flush`).

Written atomically (temporary file, fsync, rename), serialised by a lock file.
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

STATE_FILE = "rauc-state.json"


@dataclass
class RaucState:
    pending: list[dict[str, Any]] = field(default_factory=list)
    committed: dict[str, str | None] | None = None      #: {"slot": "A", "version": "1.0.0"}

    def record(self, name: str, **data: Any) -> None:
        self.pending.append({"event": name, **data})


class RaucStateFile:
    """``<dir>/rauc-state.json``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.path = self.dir / STATE_FILE

    def load(self) -> RaucState:
        try:
            doc = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            return RaucState()
        except (OSError, ValueError) as exc:
            raise UpdateError(f"{self.path}: cannot read the update state: {exc}") from None
        pending, committed = (doc.get("pending"), doc.get("committed")) if isinstance(doc, dict) else (None, None)
        if not isinstance(pending, list) or not (committed is None or isinstance(committed, dict)):
            raise UpdateError(f"{self.path}: the update state is damaged")
        return RaucState([e for e in pending if isinstance(e, dict)], committed)

    def _save(self, state: RaucState) -> None:
        tmp = self.path.with_name(f".{STATE_FILE}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"pending": state.pending, "committed": state.committed}, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            fsync_dir(self.dir)
        except OSError as exc:
            raise UpdateError(f"{self.path}: cannot write: {exc.strerror or exc}") from None

    @contextlib.contextmanager
    def locked(self) -> Iterator[RaucState]:
        """The state under the lock; saved when the block ends without an error."""
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.dir / "rauc-state.lock", "a+b")   # noqa: SIM115 (held for the block)
        except OSError as exc:
            raise UpdateError(f"{self.dir}: {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.load()
            yield state
            self._save(state)
