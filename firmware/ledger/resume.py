"""Resuming a round after a power loss, and rebuilding a round's record from its journal.

The journal holds everything a round is a function of: game, options, wagers, dice, the cards dealt
(in order) and the decisions. Resuming replays the journaled part through the same kernel from a
stacked source of the journaled cards, checking that every regenerated journal entry equals the
stored one, and only then continues live: cards past the journal come from an RNG shoe holding
exactly the cards not yet dealt. No card that was journaled is ever drawn again.

Cards are shown, and wins paid, only after the transition that carries them is journaled, so a card
drawn but not yet journaled when the power went was never seen; it is drawn afresh on resume.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from firmware.cards.card import Card, parse_cards
from firmware.cards.errors import CardError, ShoeExhausted
from firmware.cards.shoe import rest_of_shoe
from firmware.cards.source import RngShoe, StackedSource
from firmware.games.base import DecisionRequest
from firmware.games.registry import get_game, make_options
from firmware.kernel.journal import JournalEntry
from firmware.kernel.limits import NO_LIMITS
from firmware.kernel.round import RoundKernel, replay
from firmware.ledger.errors import CriticalMemoryError
from firmware.rng.interface import RandomSource


def rebuild_record(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The ``egm round`` record of a completed round, replayed from its journal entries.

    A round a live table ended in a misdeal (the shoe misread: every wager returned) was never
    played out, so there is nothing to replay: its record is the wagers, the cards dealt and the
    misdeal's reason from its journal."""
    first = entries[0]["data"]
    last = entries[-1]["data"]
    if last.get("misdeal"):
        return {"game": first["game"], "options": first["options"], "source": first.get("source", "rng"),
                "seats": [{"seat": int(s), "wagers": w, "results": last["results"][s]}
                          for s, w in first["wagers"].items()],
                "cards_dealt": [c for e in entries for c in e["cards"]], "decisions": [],
                "misdeal": last["misdeal"], "net": 0, "house_net": 0}
    record = {
        "game": first["game"],
        "options": first["options"],
        "seats": [{"seat": int(s), "wagers": w} for s, w in first["wagers"].items()],
        "cards_dealt": [c for e in entries for c in e["cards"]],
        "decisions": [{"seat": d[0], "action": d[1]} for e in entries for d in e["decisions"]],
        "source": first.get("source", "rng"),
    }
    if first.get("dice") is not None:
        record["dice"] = first["dice"]
    for i in entries[-1]["data"].get("timed_out", []):    # the complete entry names them
        record["decisions"][i]["timed_out"] = True
    return replay(record)


class ResumeSource:
    """The journaled cards first, then the live cards: an RNG shoe of exactly the cards not yet
    dealt, or a given continuation (a physical shoe goes on from where it is)."""

    exhaustion_is_misdeal = True

    def __init__(self, journaled: Sequence[Card], shoe: Sequence[int], rng: RandomSource | None,
                 continuation: Any = None, kind: str = "rng") -> None:
        self.kind = kind
        self._stack = StackedSource(journaled)
        if continuation is not None:
            self._live = continuation
        else:
            try:
                remaining = rest_of_shoe(shoe, journaled)
            except CardError as exc:
                raise CriticalMemoryError(f"the journaled cards are not a part of the game's shoe: {exc}") from None
            if rng is None:
                raise CriticalMemoryError("resuming a round needs the RNG or a card source")
            self._live = RngShoe(rng, remaining) if remaining else None
        self.dealt: list[Card] = []

    def next_card(self) -> Card:
        if self._stack.remaining:
            card = self._stack.next_card()
        elif self._live is not None:
            card = self._live.next_card()
        else:
            raise ShoeExhausted("the shoe is empty")
        self.dealt.append(card)
        return card

    def new_round(self) -> None:
        self.dealt = []


class ResumeJournal:
    """Checks regenerated entries against the journal; writes only the new ones."""

    def __init__(self, ledger: Any, stored: Sequence[dict[str, Any]]) -> None:
        self._ledger = ledger
        self._stored = list(stored)

    def transition(self, entry: JournalEntry) -> None:
        if entry.seq < len(self._stored):
            old = self._stored[entry.seq]
            new = {"trigger": entry.trigger, "cards": list(entry.cards),
                   "decisions": [list(d) for d in entry.decisions], "data": entry.data}
            mine = {k: old[k] for k in new}
            if mine != new:
                raise CriticalMemoryError(
                    f"round resume diverged from its journal at step {entry.seq} ({entry.trigger})")
            return
        self._ledger.transition(entry)


def resume_round(
    ledger: Any,
    rng: RandomSource | None,
    *,
    decider: Callable[[DecisionRequest], str] | None = None,
    continuation: Any = None,
    decision_timeout_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> RoundKernel[Any, Any] | None:
    """Continue the ledger's unfinished round, if any; return its kernel (COMPLETE, or waiting in
    DECISIONS when ``decider`` is None and a decision is still needed), or None if no round was open.
    ``decision_timeout_s`` and ``clock``: the kernel's decision time limit (from the resume on)."""
    open_round = ledger.open_round
    if open_round is None:
        return None
    data = open_round.resume_data()
    game = get_game(data["game"])
    options = make_options(game.id, data["options"])
    cards = parse_cards(data["cards"])
    source = ResumeSource(cards, game.shoe(options), rng, continuation, data["source"])
    kernel = RoundKernel(game, options, limits=NO_LIMITS, journal=ResumeJournal(ledger, data["entries"]),
                         decision_timeout_s=decision_timeout_s, clock=clock)
    queue = [(int(s), a) for s, a in data["decisions"]]
    wagers = {int(s): dict(b) for s, b in data["wagers"].items()}
    dice = tuple(data["dice"]) if data["dice"] is not None else None
    pending = kernel.begin(wagers, source, dice=dice, round_id=data["round_id"])
    while pending:
        if queue:
            seat, action = queue.pop(0)
        elif decider is not None:
            seat, action = pending[0].seat, decider(pending[0])
        else:
            return kernel
        pending = kernel.decide(seat, action)
    return kernel
