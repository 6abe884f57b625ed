"""Reading critical memory's history: records by reference, kind or number, rounds for recall,
events and money transactions, newest first (``egm recall``, ``egm events``, the service menu's
pages, the host link's outbox). Read-only: nothing here commits a record; :class:`Ledger` inherits
it and keeps the writing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from firmware.ledger.errors import LedgerError

if TYPE_CHECKING:
    from firmware.ledger.ledger import OpenRound
    from firmware.ledger.store import DualStore


class LedgerHistory:
    """The queries over the log (both copies were verified when the ledger opened)."""

    _store: DualStore
    open_round: OpenRound | None
    table_bets: dict[str, dict[str, Any]]
    denom_cents: int

    def records_for(self, ref: str) -> list[dict[str, Any]]:
        """Every committed record with reference ``ref`` (a validation number, a round id, a setting
        name), oldest first: ``{"seq", "kind", "time", "body"}``. Records of an unfinished
        :meth:`batch` are not on disk yet and not listed."""
        rows = self._store.query("SELECT seq, kind, time, body FROM log WHERE ref = ? ORDER BY seq", (ref,))
        return [{"seq": seq, "kind": kind, "time": time, "body": json.loads(body)}
                for seq, kind, time, body in rows]

    def newest_of(self, kinds: Iterable[str], count: int) -> list[int]:
        """The seqs of the newest ``count`` records whose kind is one of ``kinds``, oldest first
        (read newest first on the log's kind index: the cost follows ``count``, not the history)."""
        kinds = sorted(set(kinds))
        if count <= 0 or not kinds:
            return []
        marks = ",".join("?" * len(kinds))
        rows = self._store.query(f"SELECT seq FROM log WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
                                 (*kinds, count))
        return [seq for (seq,) in reversed(rows)]

    def log_index(self, after: int = 0) -> list[tuple[int, str, str | None]]:
        """``(seq, kind, ref)`` of every record after ``after``, oldest first (no bodies)."""
        return [(seq, kind, ref) for seq, kind, ref in self._store.query(
            "SELECT seq, kind, ref FROM log WHERE seq > ? ORDER BY seq", (after,))]

    def log_record(self, seq: int) -> dict[str, Any]:
        """Record ``seq``: ``{"seq", "kind", "ref", "time", "body"}``; :class:`LedgerError` if none."""
        rows = self._store.query("SELECT kind, ref, time, body FROM log WHERE seq = ?", (seq,))
        if not rows:
            raise LedgerError(f"critical memory has no record {seq}")
        kind, ref, time, body = rows[0]
        return {"seq": seq, "kind": kind, "ref": ref, "time": time, "body": json.loads(body)}

    # --- recall --------------------------------------------------------------------------------
    def round_entries(self, round_id: str) -> list[dict[str, Any]]:
        rows = self._store.query("SELECT body FROM log WHERE ref = ? AND kind LIKE 'round.%' ORDER BY seq",
                                 (round_id,))

        return [json.loads(r[0])["entry"] for r in rows]

    def recall(self, last: int = 100) -> list[dict[str, Any]]:
        """The last ``last`` rounds, newest first, each in the ``egm round`` format plus ``round_id``,
        ``time``, ``credits_before`` and ``credits_after``; an unfinished round comes first with
        ``"status": "in_progress"``. A live table's rounds (a station's) are listed among them:
        the controller's record with this station's bet (``table``, ``own_seat``), a refused bet as
        ``"status": "refused"``, a bet not yet settled as ``in_progress``
        (:func:`firmware.ledger.table.recall_entry`)."""
        from firmware.ledger.table import CLOSING, recall_entry

        out: list[dict[str, Any]] = []
        if self.open_round is not None:
            data = self.open_round.resume_data()
            out.append({"round_id": data["round_id"], "game": data["game"], "status": "in_progress",
                        "wagers": data["wagers"], "cards_dealt": data["cards"],
                        "decisions": data["decisions"], "steps": len(data["entries"])})
        out.extend(recall_entry("table.bet", None, bet) for bet in reversed(self.table_bets.values()))
        out = out[:last]
        kinds = ("round.complete", *CLOSING)
        rows = self._store.query(
            f"SELECT kind, ref, time, body FROM log WHERE kind IN ({','.join('?' * len(kinds))}) "
            "ORDER BY seq DESC LIMIT ?", (*kinds, max(0, last - len(out))))
        for kind, ref, time, body in rows:
            if kind == "round.complete":
                out.append(self._complete_record(ref, time, json.loads(body)))
            else:
                out.append(recall_entry(kind, time, json.loads(body)))
        return out

    def round_record(self, round_id: str) -> dict[str, Any]:
        """The record of one completed round, in the :meth:`recall` format."""
        rows = self._store.query(
            "SELECT time, body FROM log WHERE kind = 'round.complete' AND ref = ?", (round_id,))
        if not rows:
            raise LedgerError(f"no completed round {round_id!r}")
        return self._complete_record(round_id, rows[0][0], json.loads(rows[0][1]))

    def _complete_record(self, ref: str, time: str, complete: dict[str, Any]) -> dict[str, Any]:
        from firmware.ledger.resume import rebuild_record

        record = rebuild_record(self.round_entries(ref))
        record["round_id"] = ref
        record["time"] = time
        record["status"] = "complete"
        record["credits_before"] = complete["credits_before"] // self.denom_cents
        data = complete["entry"]["data"]
        back = sum(b[n] + data["results"][s][n]["net"] for s, b in data["stakes"].items() for n in b)
        extra = sum(sum(b.values()) for b in data["stakes"].values()) - sum(
            sum(b.values()) for b in complete["initial_stakes"].values())
        staked = sum(sum(b.values()) for b in complete["initial_stakes"].values())
        record["credits_after"] = record["credits_before"] - staked - extra + back
        return record

    def events(self, last: int = 100) -> list[dict[str, Any]]:
        """The event log, newest first, with sequence numbers (the log's, gap-free over all records)."""

        rows = self._store.query(
            "SELECT seq, time, body FROM log WHERE kind = 'event' ORDER BY seq DESC LIMIT ?", (last,))
        return [{"seq": seq, "time": time, **json.loads(body)} for seq, time, body in rows]

    def transactions(self, kinds: tuple[str, ...], last: int) -> list[dict[str, Any]]:

        marks = ",".join("?" * len(kinds))
        rows = self._store.query(
            f"SELECT seq, kind, time, body FROM log WHERE kind IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (*kinds, last))
        return [{"seq": seq, "kind": kind, "time": time, **json.loads(body)} for seq, kind, time, body in rows]

    def cashless(self, last: int = 50) -> list[dict[str, Any]]:
        """Tickets in and out and handpays, newest first."""
        return self.transactions(("ticket_in", "ticket_out", "handpay"), last)

    def vouchers(self, last: int = 35) -> list[dict[str, Any]]:
        """Vouchers printed, newest first (the screen masks part of each validation number)."""
        return self.transactions(("ticket_out",), last)

    def notes(self, last: int = 10) -> list[dict[str, Any]]:
        """Notes accepted, newest first."""
        return self.transactions(("bill",), last)
