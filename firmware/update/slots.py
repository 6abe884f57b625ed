"""The A/B pair on disk: the slots' states, the primary (next boot) and the boot counter.

``<dir>/state.json`` holds what RAUC's bootloader backend keeps (primary slot, each slot's
good/bad, the boot attempts left) plus the versions and the events not yet in critical memory;
``<dir>/slots/A`` and ``<dir>/slots/B`` hold the application trees, and ``<dir>/current`` is a
symbolic link to the booted one. Writes are atomic (a temporary file, fsync, rename) and
serialised by a lock file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from firmware.ledger.mark import fsync_dir
from firmware.update.errors import UpdateError
from firmware.update.machine import STATES, next_state

SLOTS: tuple[str, str] = ("A", "B")
STATE_FILE = "state.json"
LOCK_FILE = "lock"
CURRENT_LINK = "current"
FORMAT = 1


@dataclass
class Slot:
    state: str = "empty"
    version: str | None = None


@dataclass
class UpdateState:
    primary: str = "A"                          #: the slot the next boot tries
    booted: str | None = None                   #: the slot booted now (None: not booted yet)
    attempts: int = 0                           #: boot attempts left for a trial primary
    slots: dict[str, Slot] = field(default_factory=lambda: {name: Slot() for name in SLOTS})
    pending: list[dict[str, Any]] = field(default_factory=list)   #: events for critical memory

    def other(self, name: str) -> str:
        return SLOTS[1] if name == SLOTS[0] else SLOTS[0]

    @property
    def inactive(self) -> str:
        """The slot an install writes: the one not booted (A before the first boot is B)."""
        return self.other(self.booted or self.primary)

    def move(self, slot: str, event: str) -> None:
        """Move ``slot`` along the table (:func:`firmware.update.machine.next_state`)."""
        self.slots[slot].state = next_state(self.slots[slot].state, event)

    def record(self, name: str, **data: Any) -> None:
        """Keep an event for critical memory (flushed by :func:`firmware.update.journal.flush`)."""
        self.pending.append({"event": name, **data})

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "primary": self.primary, "booted": self.booted,
                "attempts": self.attempts, "slots": {k: asdict(v) for k, v in self.slots.items()},
                "pending": list(self.pending)}

    @classmethod
    def from_json(cls, doc: Any, where: Path) -> UpdateState:
        def bad(what: str) -> UpdateError:
            return UpdateError(f"{where}: the update state is damaged ({what})")

        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise bad("not a format-1 state document")
        primary, booted, attempts = doc.get("primary"), doc.get("booted"), doc.get("attempts")
        if primary not in SLOTS or (booted is not None and booted not in SLOTS):
            raise bad("primary or booted is not A or B")
        if not isinstance(attempts, int) or isinstance(attempts, bool) or attempts < 0:
            raise bad("attempts is not a whole number")
        raw, pending = doc.get("slots"), doc.get("pending")
        if not isinstance(raw, dict) or set(raw) != set(SLOTS) or not isinstance(pending, list):
            raise bad("slots or pending")
        slots = {}
        for name in SLOTS:
            entry = raw[name]
            if not isinstance(entry, dict) or entry.get("state") not in STATES:
                raise bad(f"slot {name}")
            version = entry.get("version")
            if version is not None and not isinstance(version, str):
                raise bad(f"slot {name}'s version")
            slots[name] = Slot(entry["state"], version)
        return cls(primary, booted, attempts, slots, [e for e in pending if isinstance(e, dict)])


class SlotStore:
    """The update directory: its state file, its two slot trees and the ``current`` link."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)

    def slot_dir(self, name: str) -> Path:
        return self.dir / "slots" / name

    @property
    def exists(self) -> bool:
        return (self.dir / STATE_FILE).is_file()

    def init(self, version: str, tree: Path | None = None) -> UpdateState:
        """Start an A/B pair with slot A good at ``version`` (the factory install)."""
        if self.exists:
            raise UpdateError(f"{self.dir} already holds an A/B pair")
        for name in SLOTS:
            self.slot_dir(name).mkdir(parents=True, exist_ok=True)
        if tree is not None:
            from firmware.update.tree import copy_tree

            copy_tree(tree, self.slot_dir("A"))
        state = UpdateState()
        state.slots["A"] = Slot("good", version)
        self.save(state)
        return state

    def load(self) -> UpdateState:
        path = self.dir / STATE_FILE
        try:
            doc = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise UpdateError(f"{self.dir} holds no A/B pair (egm update init makes one)") from None
        except (OSError, ValueError) as exc:
            raise UpdateError(f"{path}: cannot read the update state: {exc}") from None
        return UpdateState.from_json(doc, path)

    def save(self, state: UpdateState) -> None:
        path = self.dir / STATE_FILE
        tmp = path.with_name(f".{STATE_FILE}.tmp")
        data = (json.dumps(state.to_json(), indent=1, sort_keys=True) + "\n").encode()
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
            fsync_dir(self.dir)
        except OSError as exc:
            raise UpdateError(f"{path}: cannot write the update state: {exc.strerror or exc}") from None

    def point_current(self, name: str) -> None:
        """Point ``<dir>/current`` at slot ``name`` (atomically)."""
        link = self.dir / CURRENT_LINK
        tmp = self.dir / f".{CURRENT_LINK}.tmp"
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        os.symlink(Path("slots") / name, tmp)
        os.replace(tmp, link)
        fsync_dir(self.dir)

    @contextlib.contextmanager
    def locked(self) -> Iterator[UpdateState]:
        """The state under the lock; saved when the block ends without an error."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / LOCK_FILE, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self.load()
            yield state
            self.save(state)
