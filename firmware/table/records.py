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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from firmware.cards.card import Card
from firmware.games.player_banker import turn_to_json
from firmware.kernel.journal import JournalEntry
from firmware.kernel.states import RoundState
from firmware.ledger.ledger import Ledger, OpenRound

if TYPE_CHECKING:
    from firmware.games.double_super_9 import BankerTurn

WINDOW = "window"
ANSWER = "answer"


class TableRecords:
    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def open_window(self, round_id: str, round_no: int, stack_pos: int, banker: BankerTurn | None = None) -> None:
        """``banker``: the player banker's turn in this window (firmware.table.banker), if any."""
        body: dict[str, Any] = {"round_id": round_id, "round_no": round_no, "stack_pos": stack_pos}
        if banker is not None:
            body["banker"] = turn_to_json(banker)
        self.ledger.controller_record(WINDOW, round_id, body)

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


def misdeal_entry(open_round: OpenRound, dealt: Sequence[Card], wagers: dict[int, dict[str, int]], reason: str,
                  phase: str) -> JournalEntry:
    """The journal entry that ends ``open_round`` in a misdeal (rules step 5): every wager returned
    (``void``, net 0), the cards seen since the last entry, and the reason (recall shows it)."""
    journaled = sum(len(e["cards"]) for e in open_round.entries)
    stakes = {str(seat): dict(w) for seat, w in wagers.items()}
    data = {"net": 0, "house_net": 0, "stakes": stakes, "misdeal": reason,
            "results": {s: {n: {"outcome": "void", "net": 0} for n in w} for s, w in stakes.items()}}
    return JournalEntry(round_id=open_round.round_id, seq=len(open_round.entries), trigger="complete",
                        source=phase, dest=RoundState.COMPLETE.value,
                        cards=tuple(str(c) for c in dealt[journaled:]), data=data)


def undealt_entry(round_id: str, game: str, options: dict[str, Any], wagers: dict[int, dict[str, int]],
                  source: str) -> JournalEntry:
    """The journal entry that opens a round no card will be dealt to (its banker passed over): the
    wagers taken, as a deal's; :func:`misdeal_entry` then ends it with every wager returned."""
    data = {"game": game, "options": options, "wagers": {str(s): dict(w) for s, w in wagers.items()},
            "source": source}
    return JournalEntry(round_id=round_id, seq=0, trigger="deal", source=RoundState.BETTING.value,
                        dest=RoundState.DEALING.value, data=data)
