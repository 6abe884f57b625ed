"""The ledger: the terminal's critical memory, as the rest of the firmware uses it.

Every operation that moves money or matters to an audit is one log record, committed to both copies
(with its meter changes in the same transaction) *before* the caller may show or pay anything:

* money: :meth:`Ledger.bill_in`, :meth:`ticket_in`, :meth:`ticket_out`, :meth:`handpay`,
  :meth:`transfer_in`, :meth:`transfer_out` (:class:`~firmware.ledger.money.MoneyBook`);
* a live table's bets, on a player station: :meth:`table_bet`, :meth:`table_answer`,
  :meth:`table_result` (:class:`~firmware.ledger.table.TableBook`);
* rounds: the kernel's write-ahead journal (:meth:`transition`, the ``RoundJournal`` hook): the
  stake leaves the credit meter with the ``deal`` entry, the returns come back with ``complete``;
* events: :meth:`event` (power up/down, doors, tilts, RAM clear, configuration, service entries).

Recall is rebuilt from the journal: a completed round's record is its journal entries replayed
through the same kernel, so the recall of a round can never disagree with the round that was played.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from firmware.kernel.journal import JournalEntry
from firmware.ledger import meters as M
from firmware.ledger.controller_book import ControllerBook
from firmware.ledger.errors import CriticalMemoryError, LedgerError, LedgerStateError
from firmware.ledger.mark import MARK_FILE
from firmware.ledger.money import MoneyBook
from firmware.ledger.store import (
    FORMAT,
    GENESIS,
    KEY_FILE,
    MARKED,
    MIRROR_FILE,
    PRIMARY_FILE,
    DualStore,
    load_or_create_key,
)
from firmware.ledger.table import TableBook, table_bets_after

ROLES = ("attendant", "technician", "auditor", "operator", "regulator")
#: meta key of the critical memory's epoch: a random id made with the ledger, so a RAM clear (a new
#: ledger) starts a new one; the host link's reports carry it (docs/protocols/host-session.md)
EPOCH_META = "epoch"
#: the setting that locks critical memory found behind a witness outside it (:meth:`Ledger.lock`)
LOCK_SETTING = "critical_memory_lock"


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class OpenRound:
    """The round in progress, as its journal holds it."""

    round_id: str
    game: str
    initial_stakes: dict[str, dict[str, int]]
    credits_before: int
    entries: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def after(cls, current: OpenRound | None, body: Mapping[str, Any]) -> OpenRound | None:
        """The round in progress after the journal entry of a ``round.*`` record (a deal opens one,
        its completion closes it)."""
        entry = body["entry"]
        if entry["trigger"] == "deal":
            return cls(body["round_id"], body["game"], entry["data"]["wagers"], body["credits_before"], [entry])
        if current is not None:
            current.entries.append(entry)
            if entry["trigger"] == "complete":
                return None
        return current

    def resume_data(self) -> dict[str, Any]:
        first = self.entries[0]["data"]
        return {
            "round_id": self.round_id,
            "game": self.game,
            "options": first["options"],
            "wagers": first["wagers"],
            "dice": first.get("dice"),
            "source": first.get("source", "rng"),
            "cards": [c for e in self.entries for c in e["cards"]],
            "decisions": [d for e in self.entries for d in e["decisions"]],
            "entries": list(self.entries),
        }


class Ledger(MoneyBook, TableBook, ControllerBook):
    """Critical memory of one terminal. Open it with :meth:`open`; one writer at a time."""

    def __init__(self, store: DualStore, state_dir: Path, denom_cents: int, clock: Callable[[], str]) -> None:
        self._store = store
        self.state_dir = state_dir
        self.denom_cents = denom_cents
        self._clock = clock
        self.meters: dict[str, int] = {}
        self._meter_seq: dict[str, int] = {}
        self.open_round: OpenRound | None = None
        #: The live table's bets committed and not yet settled or refused, by ``bet_id``: the
        #: ``table.bet`` body, with ``accepted`` (and the accepted ``round_id``) once answered.
        self.table_bets: dict[str, dict[str, Any]] = {}
        #: How many records of each kind the log holds (the host link numbers its reports from them).
        self.kind_counts: dict[str, int] = {}
        #: The highest report number a ``host_ack`` record holds (0: none).
        self.host_acked = 0
        self._doors: dict[str, bool] = {}         #: each door's last recorded state (True: open)
        self.repairs: list[str] = []
        #: why this critical memory is locked (:meth:`lock`), or None; a writable open refuses it
        self.locked: str | None = None
        self.rows = 0
        self._checkpoint_seq = 0                  #: the newest checkpoint's record
        #: the life of this critical memory (:func:`epoch_of`): 16 hex digits, new at each RAM clear
        self.epoch = ""
        self._batch: tuple[list[tuple[str, str | None, str, dict[str, Any]]], dict[str, tuple[int, int]]] | None = None
        #: Called with every record once it is durable: ``(seq, kind, ref, time, body)`` (the host
        #: link's outbox numbers its reports from them). A listener must not write to the ledger.
        self.listeners: list[Callable[[int, str, str | None, str, dict[str, Any]], None]] = []

    # --- opening -------------------------------------------------------------------------------
    @classmethod
    def open(cls, state_dir: str | Path, *, denomination: int = 1, clock: Callable[[], str] = utc_now,
             read_only: bool = False, full: bool = False) -> Ledger:
        """Open (or, the first time, create) critical memory in ``state_dir``, verifying both copies.

        Raises :class:`CriticalMemoryError` when the data cannot be trusted. A copy that can be
        repaired from the other is repaired (not in ``read_only`` mode) and the repair is logged.
        Start-up verifies the records after the newest checkpoint (constant time, however long the
        history); ``full`` verifies every record and every page of both copies (``egm ledger verify
        --full``).
        """
        path = Path(state_dir)
        # Only a first installation (none of the key, the mark or either copy) creates a ledger;
        # any of them left without the others is a loss that verification reports.
        present = any((path / name).exists() for name in (PRIMARY_FILE, MIRROR_FILE, KEY_FILE, MARK_FILE))
        if read_only and not present:
            raise LedgerError(f"no critical memory in {path}")
        if not read_only:
            path.mkdir(parents=True, exist_ok=True)
        # The key is made (and synced) first, then the high-water mark at record 0, then the
        # database files: a database or a mark without its key means the key was lost (nothing can
        # be authenticated any more), and copies missing or empty while the mark says records
        # were committed mean they were lost.
        key = load_or_create_key(path, create=not present)
        store = DualStore(path, key, read_only=read_only)
        try:
            if not present:
                store.mark.create(0, GENESIS)
            return cls._verified(store, path, denomination, clock, read_only, full)
        except BaseException:
            store.close()
            raise

    @classmethod
    def _verified(cls, store: DualStore, path: Path, denomination: int, clock: Callable[[], str],
                  read_only: bool, full: bool) -> Ledger:
        verified = store.verify(repair=not read_only, full=full)
        exists = bool(verified.meta or verified.rows)
        if not exists:
            # First start, or a first start the power cut short before anything was committed
            # (the mark, checked by verify, is still at record 0).
            if read_only:
                raise LedgerError(f"critical memory in {path} was never initialised")
            store.init_meta({"format": FORMAT, "denom_cents": str(denomination), "created": clock(),
                             MARKED: "1", EPOCH_META: secrets.token_hex(8)})
            verified = store.verify(repair=True)
        if verified.meta.get("format") != FORMAT:
            raise CriticalMemoryError(f"critical memory in {path} has an unknown format {verified.meta.get('format')!r}")
        denom = int(verified.meta["denom_cents"])
        ledger = cls(store, path, denom, clock)
        if verified.base is not None and not ledger._restore(verified.base.seq, json.loads(verified.base.state)):
            # A checkpoint from before its state grew (see _state): verified whole once, after
            # which the next checkpoint carries everything.
            verified = store.verify(repair=not read_only, full=True)
        newest = store.latest_checkpoint() if verified.base is None and verified.rows else None
        ledger.epoch = epoch_of(verified.meta)
        for row in verified.rows:
            ledger._absorb(row.seq, row.kind, row.data())
            if newest is not None and row.seq == newest.seq and (
                    row.mac != newest.mac or not ledger._agrees(json.loads(newest.state))):
                raise CriticalMemoryError(f"critical memory: the checkpoint at record {row.seq} does not "
                                          "agree with the log before it")
        ledger.rows = store.last_seq
        if (lock := ledger.setting(LOCK_SETTING)) is not None:
            ledger.locked = f"{lock['reason']} (locked {lock['at']}; a technician's RAM clear is needed)"
            if not read_only:
                raise CriticalMemoryError(ledger.locked)
        notes = store.check_meters(verified, ledger.meters, ledger._meter_seq, repair=not read_only)
        ledger.repairs = verified.repairs + notes
        if not read_only:
            if ledger.repairs:
                ledger.event("critical_memory_repaired", details=ledger.repairs)
            if not exists:
                ledger.event("ledger_created", denom_cents=denom)
            ledger._checkpoint_if_due()
            if denom != denomination:
                raise LedgerStateError(
                    f"critical memory holds denomination {denom} cents per credit, the configuration "
                    f"asks for {denomination}: a RAM clear is needed to change it"
                )
        return ledger

    def _absorb(self, seq: int, kind: str, body: Mapping[str, Any],
                changes: Mapping[str, int] | None = None) -> None:
        """Update the in-memory state with one authentic record (at open and after each commit).

        ``changes``: the record's meter deltas when the caller has them already (a commit computed
        them to check the credit meter first); otherwise they are computed here.
        """
        if changes is None:
            changes = M.deltas(kind, body)
        for name in M.apply(self.meters, changes):
            self._meter_seq[name] = seq
        self.kind_counts[kind] = self.kind_counts.get(kind, 0) + 1
        if kind == "event" and body.get("event") in ("door_open", "door_close") and isinstance(body.get("door"), str):
            self._doors[body["door"]] = body["event"] == "door_open"
        elif kind == "host_ack":
            self.host_acked = max(self.host_acked, body["upto"])
        if kind.startswith("round."):
            self.open_round = OpenRound.after(self.open_round, body)
        elif kind.startswith("table."):
            table_bets_after(self.table_bets, kind, body)

    # --- checkpoints -------------------------------------------------------------------------
    #: Records between checkpoints: start-up verifies at most about this many (and what a power
    #: cut left after the last one), whatever the length of the history.
    CHECKPOINT_EVERY = 1000

    #: What a checkpoint's state holds; one written before the last three were kept lacks them.
    _STATE_KEYS = frozenset({"meters", "meter_seq", "open_round", "kind_counts", "host_acked", "doors",
                             "table_bets"})

    def _state(self) -> str:
        """What a checkpoint keeps: the meters (and the record each last changed at), the round in
        progress, the records of each kind, the host's acknowledgement and the doors, so that
        start-up recomputes only from the checkpoint on and nothing at power-up reads the history."""
        round_ = self.open_round
        return json.dumps({"meters": self.meters, "meter_seq": self._meter_seq,
                           "open_round": None if round_ is None else {
                               "round_id": round_.round_id, "game": round_.game,
                               "initial_stakes": round_.initial_stakes, "credits_before": round_.credits_before,
                               "entries": round_.entries},
                           "kind_counts": self.kind_counts, "host_acked": self.host_acked, "doors": self._doors,
                           "table_bets": self.table_bets},
                          separators=(",", ":"), sort_keys=True)

    def _restore(self, seq: int, state: Mapping[str, Any]) -> bool:
        """Start from a checkpoint's state; False (nothing taken) if it lacks part of it."""
        if set(state) != self._STATE_KEYS:
            return False
        self.meters = dict(state["meters"])
        self._meter_seq = dict(state["meter_seq"])
        self.open_round = OpenRound(**state["open_round"]) if state["open_round"] else None
        self.kind_counts = dict(state["kind_counts"])
        self.host_acked = state["host_acked"]
        self._doors = dict(state["doors"])
        self.table_bets = {k: dict(v) for k, v in state["table_bets"].items()}
        self._checkpoint_seq = seq
        return True

    def _agrees(self, state: Mapping[str, Any]) -> bool:
        """A checkpoint's state is this ledger's as the log before it makes it (an older checkpoint:
        the part it holds)."""
        mine = json.loads(self._state())
        return set(state) <= set(mine) and all(state[k] == mine[k] for k in state)

    def _checkpoint_if_due(self) -> None:
        seq = self._store.last_seq
        if seq - self._checkpoint_seq >= self.CHECKPOINT_EVERY and self._batch is None:
            self._store.write_checkpoint(seq, self._store.last_mac, self._state())
            self._checkpoint_seq = seq

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- committing ----------------------------------------------------------------------------
    def _commit(self, kind: str, ref: str | None, body: dict[str, Any]) -> None:
        changes = M.deltas(kind, body)
        trial = dict(self.meters)
        changed = M.apply(trial, changes)
        if trial.get("credits", 0) < 0:
            raise LedgerStateError(f"not enough credits for {kind}")
        now = self._clock()
        if self._batch is not None:
            records, pending = self._batch
            seq = self._store.last_seq + len(records) + 1
            records.append((kind, ref, now, body))
            pending.update({n: (trial[n], seq) for n in changed})
        else:
            seq = self._store.last_seq + 1
            self._store.append([(kind, ref, now, body)], {n: (trial[n], seq) for n in changed})
        self._absorb(seq, kind, body, changes)
        self.rows += 1
        if self._batch is None:
            self._checkpoint_if_due()
            self._notify(seq, kind, ref, now, body)

    def _notify(self, seq: int, kind: str, ref: str | None, time: str, body: dict[str, Any]) -> None:
        for listener in self.listeners:
            listener(seq, kind, ref, time, body)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Commit every record made inside the block in one transaction per copy (all or nothing).

        For bulk work (imports, the 100,000-round benchmark): nothing inside the block is durable
        until the block ends, so the terminal's own operations never use it. If the final write
        fails, the in-memory state is ahead of the disk: discard this object and open the ledger again.
        """
        if self._batch is not None:
            raise LedgerStateError("batches do not nest")
        self._batch = ([], {})
        try:
            yield
            records, pending = self._batch
            if records:
                first = self._store.last_seq + 1
                self._store.append(records, pending)
                self._batch = None
                self._checkpoint_if_due()
                for i, (kind, ref, time, body) in enumerate(records):
                    self._notify(first + i, kind, ref, time, body)
        finally:
            self._batch = None

    @property
    def credits_cents(self) -> int:
        return self.meters.get("credits", 0)

    @property
    def credits(self) -> int:
        """The credit meter in credits."""
        return self.credits_cents // self.denom_cents

    # --- events --------------------------------------------------------------------------------
    def event(self, name: str, **data: Any) -> None:
        """Log an event (power up/down, door, tilt, RAM clear, configuration, service entry)."""
        if name == "door_open" and data.get("door") not in M.DOORS:
            raise LedgerError(f"unknown door {data.get('door')!r}; doors are {', '.join(M.DOORS)}")
        if name == "service_entry" and data.get("role") not in ROLES:
            raise LedgerError(f"unknown role {data.get('role')!r}; roles are {', '.join(ROLES)}")
        self._commit("event", None, {"event": name, **data})

    # --- device settings kept in critical memory ----------------------------------------------
    def store_setting(self, name: str, value: Mapping[str, Any]) -> None:
        """Keep a device setting (the touch calibration, ...) in critical memory: checksummed,
        mirrored and verified like every record; the newest one of a name wins."""
        if not name:
            raise LedgerError("a setting needs a name")
        self._commit("setting", name, {"name": name, "value": dict(value)})

    def setting(self, name: str) -> dict[str, Any] | None:
        """The newest stored value of setting ``name``, or None."""
        rows = self._store.query(
            "SELECT body FROM log WHERE kind = 'setting' AND ref = ? ORDER BY seq DESC LIMIT 1", (name,))
        return json.loads(rows[0][0])["value"] if rows else None

    def lock(self, reason: str) -> None:
        """Lock this critical memory: it verifies, but a witness outside it (the host) showed it is
        behind, so nothing may be paid from it. The lock is a record of its own, so it outlives a
        power cut: every later writable :meth:`open` raises :class:`CriticalMemoryError` with the
        reason until a RAM clear (read-only opens, for the meters and the audit, still work)."""
        self.store_setting(LOCK_SETTING, {"reason": reason, "at": self._clock()})
        self.locked = reason

    # --- TITO vouchers (firmware/cashless) -----------------------------------------------------
    def voucher_record(self, validation: str, state: str, **data: Any) -> None:
        """Commit a voucher's state change (``ref`` = its validation number). Meter-neutral: only
        :meth:`ticket_out` and :meth:`ticket_in` move money."""
        if not isinstance(validation, str) or not validation:
            raise LedgerError(f"a voucher record needs a validation number, not {validation!r}")
        if not isinstance(state, str) or not state:
            raise LedgerError(f"a voucher record needs a state, not {state!r}")
        self._commit("voucher", validation, {**data, "validation": validation, "state": state})

    # --- the host link (firmware/hostlink) ----------------------------------------------------------
    def meters_snapshot(self, reason: str) -> dict[str, Any]:
        """Record the meters as they stand (the host's periodic and on-request meter reports are
        these records, so a report is in critical memory before it is sent). Meter-neutral."""
        report = self.meters_report()
        self._commit("meters", None, {"reason": reason, **report})
        return report

    def host_ack(self, upto: int) -> None:
        """The host acknowledged every report numbered up to ``upto`` (the outbox watermark)."""
        if isinstance(upto, bool) or not isinstance(upto, int) or upto < 0:
            raise LedgerError(f"host_ack: {upto!r} is not a report number")
        self._commit("host_ack", str(upto), {"upto": upto})

    # --- the round journal (kernel hook) -------------------------------------------------------
    def transition(self, entry: JournalEntry) -> None:
        """Write one round transition ahead of its effects (the kernel's ``RoundJournal``)."""
        record = {
            "seq": entry.seq, "trigger": entry.trigger, "source": entry.source, "dest": entry.dest,
            "cards": list(entry.cards), "decisions": [list(d) for d in entry.decisions],
            "data": entry.data,
        }
        body: dict[str, Any] = {**self.round_tags, "round_id": entry.round_id, "denom_cents": self.denom_cents, "entry": record}
        current = self.open_round
        if entry.trigger == "deal":
            if current is not None:
                raise LedgerStateError(f"round {current.round_id} is still open")
            body["game"] = entry.data["game"]
            body["credits_before"] = self.credits_cents
        else:
            if current is None or current.round_id != entry.round_id:
                raise LedgerStateError(f"round {entry.round_id} is not the open round")
            if entry.seq != len(current.entries):
                raise LedgerStateError(f"round {entry.round_id}: journal step {entry.seq} out of order")
            body["game"] = current.game
            if entry.trigger == "complete":
                body["initial_stakes"] = current.initial_stakes
                body["credits_before"] = current.credits_before
        self._commit(f"round.{entry.trigger}", entry.round_id, body)

    def door_states(self) -> dict[str, bool]:
        """Each door's state as the event log last recorded it (True: open): kept as the records
        are absorbed and carried by the checkpoints, so no power-up reads the whole event log."""
        return dict(self._doors)

    def meters_report(self) -> dict[str, Any]:
        """The ``egm meters`` document (CONTRACTS.md): every meter and the credit balance in cents."""
        return {"meters": M.report(self.meters), "credits": self.credits_cents,
                "credit_count": self.credits, "denomination": self.denom_cents}

    # --- RAM clear -----------------------------------------------------------------------------
    @classmethod
    def ram_clear(cls, state_dir: str | Path, *, role: str, reason: str, denomination: int = 1,
                  clock: Callable[[], str] = utc_now) -> Ledger:
        """Erase critical memory (both copies and the key) and start afresh with the clear logged.

        Only a technician may clear; the first record of the new memory says who, why, and the
        meters as they stood (or that the old memory was unreadable).
        """
        if role != "technician":
            raise LedgerStateError(f"a RAM clear needs the technician role, not {role!r}")
        if not reason.strip():
            raise LedgerStateError("a RAM clear needs a reason")
        path = Path(state_dir)
        previous: dict[str, Any]
        try:
            with cls.open(path, read_only=True) as old:
                previous = {"meters": old.meters_report()["meters"], "credits": old.credits_cents,
                            "records": old.rows}
            if old.locked:
                previous["locked"] = old.locked
        except LedgerError as exc:
            previous = {"unreadable": str(exc)}
        for name in (PRIMARY_FILE, MIRROR_FILE):
            for suffix in ("", "-wal", "-shm"):
                (path / (name + suffix)).unlink(missing_ok=True)
        (path / MARK_FILE).unlink(missing_ok=True)
        (path / KEY_FILE).unlink(missing_ok=True)
        ledger = cls.open(path, denomination=denomination, clock=clock)
        ledger.event("ram_clear", role=role, reason=reason, previous=previous)
        return ledger


def epoch_of(meta: Mapping[str, str]) -> str:
    """The epoch of a ledger with this (authenticated) meta: the random id it was created with, or,
    for a ledger created before epochs, one derived from its creation time (stable for its life)."""
    if meta.get(EPOCH_META):
        return meta[EPOCH_META]
    return hashlib.sha256(f"epoch:{meta.get('created', '')}".encode()).hexdigest()[:16]


def accounting_difference(meters: Mapping[str, int]) -> int:
    """CONTRACTS.md accounting identity, in cents: 0 when the credit meter is exactly explained
    (credits held for a live table's open bet, ``table_held``, are neither on the meter nor played yet)."""
    g = meters.get
    expected = (g("bills_in", 0) + g("ticket_in", 0) + g("transfers_in", 0) - g("ticket_out", 0)
                - g("handpay_cancelled_credits", 0) - g("transfers_out", 0) - g("coin_in", 0)
                + g("coin_out", 0) - g(M.TABLE_HELD, 0))
    return g("credits", 0) - expected
