"""Critical memory on disk: one append-only log in two SQLite files, every row authenticated.

Layout (each of ``ledger.db`` and its mirror ``ledger-mirror.db``, WAL, ``synchronous=FULL``):

* ``log(seq, kind, ref, time, body, mac)``: every state change that matters, in order, never
  updated or deleted. ``mac`` is HMAC-SHA256 under the per-machine key over the row *and the
  previous row's mac*, so a changed, missing, reordered or inserted row breaks the chain.
* ``meters(name, value, seq, mac)``: the meters as of log row ``seq``, written in the same
  transaction as that row. They are derived data: start-up recomputes them from the log.
* ``meta(key, value, mac)``: format version, denomination, creation time.

Writes go to the primary, then to the mirror, each its own transaction; a power cut between the
two leaves the mirror one write behind, which start-up rolls forward. Start-up verification
(:meth:`DualStore.open`) walks both logs row by row: a row bad or missing in one copy is repaired
from the other; a row bad in both, or two authentic rows that differ, is a
:class:`~firmware.ledger.errors.CriticalMemoryError`. A copy SQLite cannot read at all is rebuilt
from the other.

The per-machine key (32 random bytes, ``ledger.key``, mode 0600) is made at first start. On a
production cabinet it belongs in the logic board's secure element; the file is this product's
stand-in, documented in docs/critical-memory.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.mark import MARK_FILE, HighWaterMark, Mark, check, fsync_dir

T = TypeVar("T")

FORMAT = "egm-ledger-1"
KEY_FILE = "ledger.key"
PRIMARY_FILE = "ledger.db"
MIRROR_FILE = "ledger-mirror.db"
GENESIS = b"\x00" * 32
#: Meta key of a ledger that keeps a high-water mark (every ledger made since the mark exists).
MARKED = "high_water_mark"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL, mac BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS log (
    seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, ref TEXT, time TEXT NOT NULL,
    body TEXT NOT NULL, mac BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS log_kind ON log(kind, seq);
CREATE INDEX IF NOT EXISTS log_ref ON log(ref, seq);
CREATE TABLE IF NOT EXISTS meters (
    name TEXT PRIMARY KEY, value INTEGER NOT NULL, seq INTEGER NOT NULL, mac BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoint (
    seq INTEGER PRIMARY KEY, mac BLOB NOT NULL, state TEXT NOT NULL, tag BLOB NOT NULL);
"""


@dataclass(frozen=True, slots=True)
class LogRow:
    seq: int
    kind: str
    ref: str | None
    time: str
    body: str
    mac: bytes

    def data(self) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.body)
        return body


def _h(key: bytes, *parts: bytes) -> bytes:
    return hmac.digest(key, b"\x1f".join(parts), "sha256")


def log_mac(key: bytes, seq: int, kind: str, ref: str | None, time: str, body: str, prev: bytes) -> bytes:
    return _h(key, b"log", str(seq).encode(), kind.encode(), (ref or "").encode(), time.encode(),
              body.encode(), prev)


def meter_mac(key: bytes, name: str, value: int, seq: int) -> bytes:
    return _h(key, b"meter", name.encode(), str(value).encode(), str(seq).encode())


def meta_mac(key: bytes, name: str, value: str) -> bytes:
    return _h(key, b"meta", name.encode(), value.encode())


def checkpoint_tag(key: bytes, seq: int, mac: bytes, state: str) -> bytes:
    return _h(key, b"checkpoint", str(seq).encode(), mac, state.encode())


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The ledger's state as of record ``seq`` (whose MAC is ``mac``): start-up verifies only what
    follows it. ``state`` is the JSON the ledger wrote (meters, their seqs, the open round)."""

    seq: int
    mac: bytes
    state: str


def finding(name: str, found: str, done: str, would: str, *, fixing: bool) -> str:
    """One line of a verification's report: the file, what was found in it, and what was ``done``
    or, when nothing is repaired (read-only, no ``--repair``), what ``--repair`` ``would`` do."""
    return f"{name}: {found}; {done if fixing else f'egm ledger verify --repair would {would}'}"


class _NeedFull(Exception):
    """Something about the copies does not fit a checkpoint start: verify them whole instead."""


def load_or_create_key(state_dir: Path, *, create: bool) -> bytes:
    path = state_dir / KEY_FILE
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise CriticalMemoryError(f"the per-machine ledger key {path} is missing") from None
        key = os.urandom(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "wb") as f:
            f.write(key)
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(state_dir)
    if len(key) != 32:
        raise CriticalMemoryError(f"the per-machine ledger key {path} is damaged")
    return key


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; anything raised inside (a power-fail test's kill aside)
    rolls it back."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class Copy:
    """One SQLite file of critical memory."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.name = path.name
        self.read_only = read_only
        self.conn: sqlite3.Connection | None = None
        self._ready = False
        #: What :meth:`load` found wrong with the file (``unreadable (...)``, ``damaged (...)``), or
        #: ``missing``, for the reports; None when it read whole.
        self.problem: str | None = None

    # A seam for the power-fail tests: called between the steps of every write. It does nothing in
    # the product; the crash-point test driver replaces it to kill the process at a chosen step.
    def checkpoint(self, label: str) -> None:
        return None

    def connect(self, *, writing: bool = False) -> sqlite3.Connection:
        """The connection; reading changes nothing in the file (nor creates it): the tables and
        WAL mode are set up only when ``writing``, so a start-up that fails leaves the evidence."""
        if self.conn is None:
            mode = "ro" if self.read_only else "rwc" if writing else "rw"
            self.conn = sqlite3.connect(f"file:{self.path}?mode={mode}", uri=True, isolation_level=None,
                                        check_same_thread=False)
            if not self.read_only:
                self.conn.execute("PRAGMA synchronous=FULL")
        if writing and not self._ready:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.executescript(SCHEMA)
            self._ready = True
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None
                self._ready = False

    def load_after(self, base: Checkpoint) -> Loaded:
        """The log after ``base`` (read on the table's b-tree, no whole-file check: that is the full
        verification's), the meters and meta; :class:`_NeedFull` if anything cannot be read or
        this copy does not hold the checkpoint's record."""
        try:
            conn = self.connect()
            at = conn.execute("SELECT mac FROM log WHERE seq = ?", (base.seq,)).fetchone()
            if at is None or not isinstance(at[0], bytes) or not hmac.compare_digest(at[0], base.mac):
                raise _NeedFull(f"{self.name} does not hold record {base.seq} of the checkpoint")
            return Loaded(_log_rows(conn.execute(_LOG_SELECT + " WHERE seq > ? ORDER BY seq", (base.seq,))),
                          _meters(conn), _meta(conn))
        except (sqlite3.DatabaseError, UnicodeDecodeError, TypeError, ValueError) as exc:
            self.close()
            raise _NeedFull(f"{self.name}: {exc}") from exc

    def checkpoints(self) -> list[tuple[int, bytes, str, bytes]]:
        """The newest few checkpoints in this file (none if it cannot say)."""
        try:
            return [(r[0], bytes(r[1]), r[2], bytes(r[3])) for r in self.connect().execute(
                "SELECT seq, mac, state, tag FROM checkpoint ORDER BY seq DESC LIMIT 3")]
        except (sqlite3.DatabaseError, UnicodeDecodeError, TypeError, ValueError):
            self.close()
            return []

    def write_checkpoint(self, checkpoint: tuple[int, bytes, str, bytes]) -> None:
        with _transaction(self.connect(writing=True)) as conn:
            conn.execute("INSERT OR REPLACE INTO checkpoint (seq, mac, state, tag) VALUES (?,?,?,?)", checkpoint)

    def load(self) -> Loaded | None:
        """Everything in the file that SQLite can still read, or None when it cannot open it at all.

        A file whose structure is whole (``integrity_check``: pages, b-trees, every index agreeing
        with its table) is read at once. A damaged one is read row by row, by ranges of sequence
        numbers on the table's own b-tree (no index), a range that fails split in two until each
        readable row is had: a damaged page costs only the rows on it (``Loaded.damaged``).
        :attr:`problem` says what was found: ``unreadable (...)`` when SQLite fails on the file
        itself (truncated, not a database), ``damaged (...)`` when the check or a row fails."""
        self.problem = None
        try:
            conn = self.connect()
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                return Loaded({}, {}, {})         # created, never written (a first start cut short)
            # integrity_check, not quick_check: a damaged index would mislead recall's queries.
            whole = conn.execute("PRAGMA integrity_check(1)").fetchone()[0] == "ok"
            if not whole:
                self.problem = "damaged (integrity check failed)"
        except sqlite3.DatabaseError as exc:
            self.problem = f"unreadable ({exc})"
            whole = False
            conn = None
        if whole and conn is not None:
            try:
                return Loaded(_log_rows(conn.execute(_LOG_SELECT + " ORDER BY seq")), _meters(conn), _meta(conn))
            except (sqlite3.DatabaseError, UnicodeDecodeError, TypeError, ValueError) as exc:
                self.problem = f"damaged ({exc})"
        return self._salvage()

    def _salvage(self) -> Loaded | None:
        self.close()
        try:
            conn = self.connect()
            conn.execute("SELECT 1 FROM log LIMIT 0")
        except sqlite3.DatabaseError:
            self.close()
            return None
        rows: dict[int, LogRow] = {}
        spans = [(1, _MAX_SEQ)]
        while spans:
            lo, hi = spans.pop()
            try:
                rows.update(_log_rows(conn.execute(_LOG_SELECT + " WHERE seq BETWEEN ? AND ? ORDER BY seq",
                                                   (lo, hi))))
            except (sqlite3.DatabaseError, UnicodeDecodeError, TypeError, ValueError):
                if lo < hi:
                    mid = (lo + hi) // 2
                    spans += [(mid + 1, hi), (lo, mid)]
        return Loaded(rows, _salvaged(_meters, conn), _salvaged(_meta, conn), damaged=True)

    def write(self, rows: Iterable[LogRow], meters: Iterable[tuple[str, int, int, bytes]],
              meta: Iterable[tuple[str, str, bytes]] = ()) -> None:
        conn = self.connect(writing=True)
        self.checkpoint("begin")
        with _transaction(conn):
            for row in rows:
                conn.execute("INSERT OR REPLACE INTO log (seq, kind, ref, time, body, mac) VALUES (?,?,?,?,?,?)",
                             (row.seq, row.kind, row.ref, row.time, row.body, row.mac))
            self.checkpoint("log")
            conn.executemany("INSERT OR REPLACE INTO meters (name, value, seq, mac) VALUES (?,?,?,?)", meters)
            conn.executemany("INSERT OR REPLACE INTO meta (key, value, mac) VALUES (?,?,?)", meta)
            self.checkpoint("meters")
        self.checkpoint("commit")

    def replace_meters(self, meters: Iterable[tuple[str, int, int, bytes]]) -> None:
        with _transaction(self.connect(writing=True)) as conn:
            conn.execute("DELETE FROM meters")
            conn.executemany("INSERT INTO meters (name, value, seq, mac) VALUES (?,?,?,?)", meters)

    def destroy(self) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(self.path) + suffix)


_LOG_SELECT = "SELECT seq, kind, ref, time, body, mac FROM log"
_MAX_SEQ = 2**62


def _log_rows(cursor: Iterable[tuple[Any, ...]]) -> dict[int, LogRow]:
    out = {}
    for seq, kind, ref, time, body, mac in cursor:
        if not (isinstance(seq, int) and isinstance(kind, str) and isinstance(ref, str | None)
                and isinstance(time, str) and isinstance(body, str) and isinstance(mac, bytes)):
            raise TypeError(f"log row {seq!r} has the wrong types")
        out[seq] = LogRow(seq, kind, ref, time, body, mac)
    return out


def _salvaged(read: Callable[[sqlite3.Connection], dict[str, T]], conn: sqlite3.Connection) -> dict[str, T]:
    """What ``read`` gets from a damaged copy's table, or nothing (the copy is rebuilt whole)."""
    try:
        return read(conn)
    except (sqlite3.DatabaseError, UnicodeDecodeError, TypeError, ValueError):
        return {}


def _meters(conn: sqlite3.Connection) -> dict[str, tuple[int, int, bytes]]:
    return {r[0]: (r[1], r[2], bytes(r[3])) for r in conn.execute("SELECT name, value, seq, mac FROM meters")}


def _meta(conn: sqlite3.Connection) -> dict[str, tuple[str, bytes]]:
    return {r[0]: (r[1], bytes(r[2])) for r in conn.execute("SELECT key, value, mac FROM meta")}


@dataclass(slots=True)
class Loaded:
    """What one copy held: its log rows by seq, meters, meta, and whether its file was damaged."""

    rows: dict[int, LogRow]
    meters: dict[str, tuple[int, int, bytes]]
    meta: dict[str, tuple[str, bytes]]
    damaged: bool = False


@dataclass(slots=True)
class Verified:
    """The result of start-up verification: the authentic log, and what was repaired."""

    rows: list[LogRow]
    meta: dict[str, str]
    repairs: list[str]
    meter_tables: list[dict[str, tuple[int, int, bytes]] | None]
    #: The checkpoint the verification started from (``rows`` are the records after it), or None.
    base: Checkpoint | None = None


class DualStore:
    """The primary and mirror copies, written in step and verified against each other."""

    def __init__(self, state_dir: Path, key: bytes, *, read_only: bool = False) -> None:
        self.state_dir = state_dir
        self.key = key
        self.read_only = read_only
        self.copies = [Copy(state_dir / PRIMARY_FILE, read_only=read_only),
                       Copy(state_dir / MIRROR_FILE, read_only=read_only)]
        self.mark = HighWaterMark(state_dir, key, read_only=read_only)
        self.last_seq = 0
        self.last_mac = GENESIS
        self.readable = 0

    # --- start-up ------------------------------------------------------------------------------
    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint authentic in either copy, or None."""
        found = [c for copy in self.copies for c in copy.checkpoints()
                 if hmac.compare_digest(c[3], checkpoint_tag(self.key, c[0], c[1], c[2]))]
        if not found:
            return None
        seq, mac, state, _ = max(found, key=lambda c: c[0])
        return Checkpoint(seq, mac, state)

    def write_checkpoint(self, seq: int, mac: bytes, state: str) -> None:
        row = (seq, mac, state, checkpoint_tag(self.key, seq, mac, state))
        for copy in self.copies:
            try:
                copy.write_checkpoint(row)
            except sqlite3.Error as exc:
                raise CriticalMemoryError(f"critical memory write failed in {copy.name}: {exc}") from exc

    def verify(self, *, repair: bool, full: bool = True) -> Verified:
        """Check both copies row by row; repair one from the other where ``repair`` allows.

        Not ``full``: start from the newest checkpoint and verify only the records after it (the
        start-up's constant time); anything that does not fit (no checkpoint, a copy that cannot
        be read or does not hold the checkpoint's record, a mark older than it) verifies whole."""
        if not full:
            base = self.latest_checkpoint()
            if base is not None:
                try:
                    return self._verify(repair=repair, base=base)
                except _NeedFull:
                    for copy in self.copies:
                        copy.close()
        return self._verify(repair=repair, base=None)

    def _verify(self, *, repair: bool, base: Checkpoint | None) -> Verified:
        """Each line of ``repairs`` names the file, what was found in it, and what was done about it
        or, when nothing is repaired (``repair`` off, or read-only), what ``--repair`` would do."""
        key = self.key
        fixing = repair and not self.read_only
        # A missing file reads as an empty copy: rebuilt from the other one, or, both missing,
        # a new ledger only if the high-water mark says nothing was ever committed.
        # The mark first, then the copies: the writer commits both copies before it advances the
        # mark, so a reader beside a running terminal (read-only) never sees a mark ahead of the
        # log it loads afterwards (read the other way round, a commit in between would look like
        # lost records).
        mark, mark_damaged = self.mark.read(), self.mark.damaged
        missing = [not c.path.exists() for c in self.copies]
        if base is not None and any(missing):
            raise _NeedFull("a copy is missing")
        loaded: list[Loaded | None] = (
            [c.load_after(base) for c in self.copies] if base is not None else
            [Loaded({}, {}, {}) if gone else c.load() for c, gone in zip(self.copies, missing, strict=True)])
        repairs: list[str] = []

        def note(i: int, found: str, done: str, would: str) -> None:
            other = self.copies[1 - i].name
            repairs.append(finding(self.copies[i].name, found, done.format(other=other), would.format(other=other),
                                   fixing=fixing))

        if all(x is None for x in loaded):
            raise CriticalMemoryError("neither copy of critical memory can be read")
        for i, (copy, x) in enumerate(zip(self.copies, loaded, strict=True)):
            gone = missing[i] and not all(missing)
            if gone:
                copy.problem = "missing"
            if x is None or gone:
                note(i, copy.problem or "unreadable", "rebuilt from {other}", "rebuild it from {other}")
        logs = [x.rows if x else {} for x in loaded]
        metas = [x.meta if x else {} for x in loaded]
        damaged = [x is not None and x.damaged for x in loaded]

        # meta: each key authentic in at least one copy
        meta: dict[str, str] = {}
        bad_meta = [False, False]
        for name in sorted(set(metas[0]) | set(metas[1])):
            good = [m[name][0] for m in metas if name in m and hmac.compare_digest(m[name][1], meta_mac(key, name, m[name][0]))]
            if not good:
                raise CriticalMemoryError(f"critical memory: meta '{name}' is bad in both copies")
            if len(set(good)) > 1:
                raise CriticalMemoryError(f"critical memory: meta '{name}' differs between the copies")
            meta[name] = good[0]
            for i, m in enumerate(metas):
                if loaded[i] is None or missing[i] or damaged[i]:
                    continue                    # rebuilt whole, and reported as such
                if name not in m or m[name][0] != good[0] or not hmac.compare_digest(
                        m[name][1], meta_mac(key, name, good[0])):
                    bad_meta[i] = True
                    note(i, f"meta '{name}' bad or missing", "restored from {other}", "restore it from {other}")

        rows: list[LogRow] = []
        fix: list[list[LogRow]] = [[], []]
        start = base.seq if base is not None else 0
        prev = base.mac if base is not None else GENESIS
        last = max([max(log, default=start) for log in logs])
        for seq in range(start + 1, last + 1):
            valid = []
            for log in logs:
                row = log.get(seq)
                ok = row is not None and hmac.compare_digest(
                    row.mac, log_mac(key, row.seq, row.kind, row.ref, row.time, row.body, prev))
                valid.append(row if ok else None)
            agreed = [r for r in valid if r is not None]
            if not agreed:
                raise CriticalMemoryError(f"critical memory: log record {seq} is bad in both copies")
            if len(agreed) == 2 and agreed[0] != agreed[1]:
                raise CriticalMemoryError(f"critical memory: log record {seq} differs between the copies")
            row = agreed[0]
            for i in (0, 1):
                if valid[i] is None and loaded[i] is not None:
                    fix[i].append(row)
            rows.append(row)
            prev = row.mac
        held = [loaded[i] is not None and not missing[i] and len(fix[i]) < len(rows) for i in (0, 1)]
        for i in (0, 1):
            if damaged[i]:
                # Rebuilt from the verified log: the other copy's when it holds every record of it,
                # else whatever is authentic in either.
                source = ("{other}" if held[1 - i] and not fix[1 - i] else
                          "both copies, record by record" if held[1 - i] else "the records authentic in it")
                note(i, f"{self.copies[i].problem or 'damaged'}, {len(rows) - len(fix[i])} of {len(rows)} "
                        "log records authentic in it", f"rebuilt from {source}", f"rebuild it from {source}")
            elif fix[i] and loaded[i] is not None and not missing[i]:
                tail = all(r.seq > max(logs[i], default=0) for r in fix[i])
                what = "behind" if tail else "bad or missing"
                seqs = f"record {fix[i][0].seq}" if len(fix[i]) == 1 else f"records {fix[i][0].seq}..{fix[i][-1].seq}"
                note(i, f"{len(fix[i])} log record(s) {what} ({seqs})", "restored from {other}",
                     "restore them from {other}")
        # Recall and the event log are queried from a copy whose file and log are whole (read-only,
        # the other copy stays as it was found); failing that, one that is at least there.
        usable = [i for i in (0, 1) if loaded[i] is not None and not missing[i] and not damaged[i]]
        clean = [i for i in usable if not fix[i]]
        self.readable = (clean or usable or [0 if loaded[0] is not None and not missing[0] else 1])[0]
        self.last_seq = rows[-1].seq if rows else start
        self.last_mac = rows[-1].mac if rows else base.mac if base is not None else GENESIS

        def mac_at(seq: int) -> bytes | None:
            if base is not None and seq == base.seq:
                return base.mac
            if base is not None and seq < base.seq:
                raise _NeedFull("the high-water mark is older than the checkpoint")
            return rows[seq - start - 1].mac if start < seq <= start + len(rows) else None

        self._check_mark(meta, mac_at, repairs, repair=repair, mark=mark, mark_damaged=mark_damaged)

        # A missing or damaged copy's meters are rewritten after its rebuild, not reported apart.
        meter_tables = [x.meters if x and not x.damaged and not gone else None
                        for x, gone in zip(loaded, missing, strict=True)]
        if repair and not self.read_only:
            meta_rows = [(k, v, meta_mac(key, k, v)) for k, v in meta.items()]
            for i, copy in enumerate(self.copies):
                if loaded[i] is None or damaged[i] or (missing[i] and not all(missing)):
                    self._rebuild(copy, rows, meta_rows)
                elif fix[i] or bad_meta[i]:
                    try:
                        copy.write(fix[i], [], meta_rows)
                    except sqlite3.DatabaseError:
                        repairs.append(f"{copy.name}: could not be repaired in place; rebuilt from the verified log")
                        self._rebuild(copy, rows, meta_rows)
                        meter_tables[i] = None
        return Verified(rows=rows, meta=meta, repairs=repairs, meter_tables=meter_tables, base=base)

    def _check_mark(self, meta: Mapping[str, str], mac_at: Callable[[int], bytes | None], repairs: list[str],
                    *, repair: bool, mark: Mark | None, mark_damaged: bool) -> None:
        """The verified log against the high-water ``mark`` (read before the log was loaded): behind
        it is the critical-memory error; ahead of it (a cut after the copies committed, before the
        mark) rolls the mark forward."""
        fixing = repair and not self.read_only
        if mark is None and mark_damaged:
            raise CriticalMemoryError(f"critical memory: the high-water mark {MARK_FILE} is damaged "
                                      "(no authentic slot): it cannot be told whether records were lost")
        if mark is None:
            if MARKED in meta or not meta.get("format"):
                raise CriticalMemoryError(f"critical memory: the high-water mark {MARK_FILE} is missing "
                                          "(it cannot be told whether records were lost)")
            # A ledger made before the mark existed: adopt it as it verified.
            repairs.append(finding(MARK_FILE, "missing, for a ledger made before the high-water mark",
                                   "created from the log", "create it from the log", fixing=fixing))
        else:
            check(mark, self.last_seq, mac_at(mark.seq))
            if mark_damaged:
                repairs.append(finding(MARK_FILE, "a torn or damaged slot", "rewritten from the log",
                                       "rewrite it from the log", fixing=fixing))
        if fixing:
            if mark is None:
                meta_row = [(MARKED, "1", meta_mac(self.key, MARKED, "1"))]
                for copy in self.copies:
                    copy.write([], [], meta_row)
            if mark is None or mark_damaged:
                self.mark.create(self.last_seq, self.last_mac)
            elif mark.seq != self.last_seq:
                self.mark.advance(self.last_seq, self.last_mac)

    @staticmethod
    def _rebuild(copy: Copy, rows: list[LogRow], meta_rows: list[tuple[str, str, bytes]]) -> None:
        """Recreate a damaged copy from the verified log (its meters are rewritten afterwards)."""
        copy.destroy()
        copy.write(rows, [], meta_rows)

    def check_meters(self, verified: Verified, meters: Mapping[str, int], meter_seq: Mapping[str, int],
                     *, repair: bool) -> list[str]:
        """Compare each copy's meters table with the meters recomputed from the log."""
        key = self.key
        expected = {name: (value, meter_seq[name]) for name, value in meters.items()}
        notes: list[str] = []
        for i, table in enumerate(verified.meter_tables):
            if table is None:
                bad = True
            else:
                bad = set(table) != set(expected) or any(
                    table[n][0] != v or table[n][1] != s or not hmac.compare_digest(table[n][2], meter_mac(key, n, v, s))
                    for n, (v, s) in expected.items()
                )
            if bad and table is not None:
                name = self.copies[i].name
                notes.append(f"{name}: meters did not match the log, rewritten from it" if repair and not self.read_only
                             else f"{name}: meters do not match the log; egm ledger verify --repair would "
                                  "rewrite them from the log")
            if bad and repair and not self.read_only:
                self.copies[i].replace_meters(
                    [(n, v, s, meter_mac(key, n, v, s)) for n, (v, s) in expected.items()])
        return notes

    # --- writing -------------------------------------------------------------------------------
    def append(self, records: Sequence[tuple[str, str | None, str, Mapping[str, Any]]],
               meters: Mapping[str, tuple[int, int]]) -> list[LogRow]:
        """Append ``(kind, ref, time, body)`` records and the changed meters, to both copies."""
        if self.read_only:
            raise CriticalMemoryError("critical memory is open read-only")
        key = self.key
        rows = []
        seq, prev = self.last_seq, self.last_mac
        for kind, ref, time, body in records:
            seq += 1
            text = json.dumps(body, separators=(",", ":"), sort_keys=True)
            mac = log_mac(key, seq, kind, ref, time, text, prev)
            rows.append(LogRow(seq, kind, ref, time, text, mac))
            prev = mac
        meter_rows = [(n, v, s, meter_mac(key, n, v, s)) for n, (v, s) in meters.items()]
        for copy in self.copies:
            try:
                copy.write(rows, meter_rows)
            except sqlite3.Error as exc:
                raise CriticalMemoryError(f"critical memory write failed in {copy.name}: {exc}") from exc
        self.mark.advance(seq, prev)        # after both copies: a cut before it leaves the log ahead
        self.last_seq, self.last_mac = seq, prev
        return rows

    def init_meta(self, values: Mapping[str, str]) -> None:
        meta = [(k, v, meta_mac(self.key, k, v)) for k, v in values.items()]
        for copy in self.copies:
            copy.write([], [], meta)

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Read from the first readable copy (recall, events): both were verified at open."""
        return list(self.copies[self.readable].connect().execute(sql, params))

    def close(self) -> None:
        for copy in self.copies:
            copy.close()
        self.mark.close()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


Clock = Callable[[], str]
