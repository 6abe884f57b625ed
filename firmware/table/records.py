"""The controller's own records in its critical memory (the ledger, ``tablectl.*``), and what a
restarted controller reads back from them.

* ``tablectl.window`` (ref: the round id): a betting window opened: ``round_no`` and where a
  stacked card list stood (``stack_pos``).
* ``tablectl.answer`` (ref: the bet id): the one answer a bet gets, accepted into a round or
  refused with the reason; the same bet sent again gets this record's answer, also after a restart.

The round itself is the kernel's journal (``round.deal`` ... ``round.complete``, every seat), so
``egm recall --state-dir DIR`` replays the whole table round.
"""

from __future__ import annotations

from typing import Any

from firmware.ledger.ledger import Ledger

WINDOW = "window"
ANSWER = "answer"


class TableRecords:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def open_window(self, round_id: str, round_no: int, stack_pos: int) -> None:
        self.ledger.controller_record(WINDOW, round_id, {"round_id": round_id, "round_no": round_no,
                                                         "stack_pos": stack_pos})

    def last_window(self) -> tuple[int, dict[str, Any]] | None:
        """The newest window's record ``(seq, body)``, or None before the first."""
        seqs = self.ledger.newest_of([f"tablectl.{WINDOW}"], 1)
        if not seqs:
            return None
        return seqs[0], self.ledger.log_record(seqs[0])["body"]

    def answer_of(self, bet_id: str) -> dict[str, Any] | None:
        for record in self.ledger.records_for(bet_id):
            if record["kind"] == f"tablectl.{ANSWER}":
                body: dict[str, Any] = record["body"]
                return body
        return None

    def record_answer(self, answer: dict[str, Any]) -> None:
        self.ledger.controller_record(ANSWER, answer["bet_id"], answer)

    def accepted_since(self, seq: int) -> list[dict[str, Any]]:
        """The bets accepted after record ``seq`` (a window's), oldest first."""
        out = []
        for row_seq, kind, _ref in self.ledger.log_index(seq):
            if kind == f"tablectl.{ANSWER}":
                body = self.ledger.log_record(row_seq)["body"]
                if body["accepted"]:
                    out.append(body)
        return out

    def round_entries(self, round_id: str) -> list[dict[str, Any]]:
        return self.ledger.round_entries(round_id)

    def completed(self, round_id: str) -> dict[str, Any] | None:
        """The journal's ``complete`` entry data of ``round_id``, or None while it is not complete."""
        entries = self.round_entries(round_id)
        if entries and entries[-1]["trigger"] == "complete":
            data: dict[str, Any] = entries[-1]["data"]
            return data
        return None

    def round_record(self, round_id: str) -> dict[str, Any]:
        """The completed round's record as recall rebuilds it (the controller has no credits)."""
        record = self.ledger.round_record(round_id)
        for key in ("credits_before", "credits_after", "time", "status"):
            record.pop(key, None)
        return record
