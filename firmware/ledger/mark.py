"""The high-water mark: how far critical memory has ever got, kept outside both copies.

The two SQLite copies share failure modes (the WAL files of both removed after a power cut, both
files deleted, both restored from an old backup): each copy is then consistent, authentic and
*behind*, and nothing inside them can tell. The mark is a third, tiny witness: the sequence number
and MAC of the last record committed to both copies, written after both commits with its own fsync.

``ledger.mark`` holds two fixed-size slots written alternately (slot ``gen % 2``), each one line::

    egm-mark-1 GEN SEQ LAST_MAC_HEX TAG_HEX

``TAG`` is HMAC-SHA256 under the ledger key over the rest, so a slot cannot be forged, moved to
another ledger, or survive a RAM clear (which makes a new key). A power cut while a slot is written
tears that slot only: the other still holds the previous mark, one write older. The newest
authentic slot is the mark. At start-up the log must reach the mark's sequence number and hold the
mark's MAC there (:func:`check`); a log *ahead* of it is normal after a cut (the copies committed,
the mark was not yet written) and the mark is rolled forward; a log *behind* it is the
critical-memory error.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from firmware.ledger.errors import CriticalMemoryError

MARK_FILE = "ledger.mark"
SLOT = 256
_MAGIC = "egm-mark-1"


@dataclass(frozen=True, slots=True)
class Mark:
    gen: int
    seq: int
    mac: bytes


def _tag(key: bytes, body: str) -> bytes:
    return hmac.digest(key, b"mark\x1f" + body.encode("ascii"), hashlib.sha256)


def encode(key: bytes, mark: Mark) -> bytes:
    body = f"{_MAGIC} {mark.gen} {mark.seq} {mark.mac.hex()}"
    line = f"{body} {_tag(key, body).hex()}\n".encode("ascii")
    return line.ljust(SLOT, b" ")


def decode(key: bytes, slot: bytes) -> Mark | None:
    """The mark a slot holds, or None when it is torn, damaged or not this ledger's."""
    try:
        text = slot.decode("ascii").rstrip(" ")
        magic, gen, seq, mac, tag = text.rstrip("\n").split(" ")
        body = f"{magic} {gen} {seq} {mac}"
        if magic != _MAGIC or not text.endswith("\n") or not hmac.compare_digest(bytes.fromhex(tag), _tag(key, body)):
            return None
        mark = Mark(int(gen), int(seq), bytes.fromhex(mac))
    except (UnicodeDecodeError, ValueError):
        return None
    if mark.gen < 0 or mark.seq < 0 or len(mark.mac) != 32 or encode(key, mark) != slot:
        return None
    return mark


class HighWaterMark:
    """The mark file of one ledger: read at start-up, advanced after every write to both copies."""

    def __init__(self, state_dir: Path, key: bytes, *, read_only: bool = False) -> None:
        self.path = state_dir / MARK_FILE
        self.key = key
        self.read_only = read_only
        self.current: Mark | None = None
        self.damaged = False            #: a slot was torn or damaged (the other one was used)
        self._fd: int | None = None

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> Mark | None:
        """The newest authentic slot (None: no file, or no authentic slot: see :attr:`damaged`)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            self.current, self.damaged = None, False
            return None
        slots = [decode(self.key, data[i * SLOT:(i + 1) * SLOT]) for i in (0, 1)]
        good = [m for i, m in enumerate(slots) if m is not None and m.gen % 2 == i]
        self.damaged = len(good) < 2 or len(data) != 2 * SLOT
        self.current = max(good, key=lambda m: m.gen) if good else None
        return self.current

    def create(self, seq: int, mac: bytes) -> None:
        """Both slots at ``(seq, mac)``: written beside the file, synced, renamed over it and the
        directory synced, so a cut leaves the old file or the new one, never a torn one."""
        if self.read_only:
            raise CriticalMemoryError("critical memory is open read-only")
        self.close()
        gen = self.current.gen + 1 if self.current is not None else 0
        tmp = self.path.with_name(self.path.name + ".new")
        slots = sorted([Mark(gen, seq, mac), Mark(gen + 1, seq, mac)], key=lambda m: m.gen % 2)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
            try:
                os.write(fd, b"".join(encode(self.key, m) for m in slots))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
            fsync_dir(self.path.parent)
        except OSError as exc:
            raise CriticalMemoryError(f"critical memory: the high-water mark could not be written: {exc}") from exc
        self.current, self.damaged = Mark(gen + 1, seq, mac), False

    def advance(self, seq: int, mac: bytes) -> None:
        """Write ``(seq, mac)`` over the older slot and sync it (the newer one stays intact)."""
        if self.read_only:
            raise CriticalMemoryError("critical memory is open read-only")
        if self.current is None or self.damaged:
            self.create(seq, mac)
            return
        mark = Mark(self.current.gen + 1, seq, mac)
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY)
        try:
            os.pwrite(self._fd, encode(self.key, mark), (mark.gen % 2) * SLOT)
            os.fsync(self._fd)
        except OSError as exc:
            raise CriticalMemoryError(f"critical memory: the high-water mark could not be written: {exc}") from exc
        self.current = mark

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None


def check(mark: Mark, last_seq: int, mac_at: bytes | None) -> None:
    """The log (ending at ``last_seq``, holding ``mac_at`` at the mark's sequence number) reaches
    the mark with the same record, or the critical-memory error: critical memory went back."""
    if last_seq < mark.seq:
        raise CriticalMemoryError(
            f"critical memory is behind its high-water mark: the log ends at record {last_seq}, "
            f"record {mark.seq} was committed (records were lost)")
    if mark.seq and (mac_at is None or not hmac.compare_digest(mac_at, mark.mac)):
        raise CriticalMemoryError(
            f"critical memory does not match its high-water mark: record {mark.seq} is not the "
            "record that was committed")


def fsync_dir(path: Path) -> None:
    """Make a file's creation, removal or renaming in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
