"""The round kernel: one ``transitions`` state machine drives every game through the same states.

Each transition is journaled (write-ahead) in the machine's ``before_state_change`` callback, before
the state it leads to does anything, with the cards and decisions consumed since the previous entry.
A round is a function of (game, options, wagers, dice, decisions, cards); its record holds all of
them, and :func:`replay` plays a record again through this same code to an identical record.
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Generic

from firmware.cards.card import format_cards
from firmware.cards.source import CardSource
from firmware.games.base import DecisionRequest, Game, OptionsT, Settlement, StateT
from firmware.games.errors import DecisionError
from firmware.kernel.errors import KernelError
from firmware.kernel.journal import JournalEntry, NullJournal, RoundJournal
from firmware.kernel.limits import NO_LIMITS, BetLimits, validate_wagers
from firmware.kernel.machine import EnumMachine
from firmware.kernel.states import RoundState, transition_table

#: Answers a decision request with an action (``egm round --decision``, a player, a strategy).
Decider = Callable[[DecisionRequest], str]


@functools.cache
def round_machine(journaling: bool) -> EnumMachine:
    """The round machine, built once per process (for kernels that journal, and for those that do
    not) and shared by every kernel: each kernel is a model the machine drives without holding it
    (``Event.trigger(kernel)``; the state is the kernel's ``phase``). Building a ``transitions``
    machine per kernel cost about 0.5 ms, paid again by every round a ledger replays for its record.
    The machine keeps no state of its own between triggers (no queue), so kernels on several threads
    share it. Journaling kernels get the write-ahead callback, by name: each kernel's own
    ``_write_ahead``."""
    return EnumMachine(
        model=None,
        states=RoundState,
        transitions=transition_table(),
        initial=RoundState.BETTING,
        auto_transitions=False,
        model_attribute="phase",
        send_event=True,
        before_state_change="_write_ahead" if journaling else None,
    )


class RoundKernel(Generic[OptionsT, StateT]):
    """Plays rounds of one game with fixed options, driven by the process's one round machine
    (:func:`round_machine`).

    Typed by its game's options and round state: ``RoundKernel(ThreeCardPoker(), options)`` is a
    ``RoundKernel[ThreeCardPokerOptions, ThreeCardRound]``, and its ``round`` a ``ThreeCardRound``.
    """

    _round_id: str | None

    def __init__(
        self,
        game: Game[OptionsT, StateT],
        options: OptionsT,
        *,
        limits: BetLimits = NO_LIMITS,
        journal: RoundJournal | None = None,
        decision_timeout_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.game = game
        self.options = options
        self.limits = limits
        #: Seconds the players have, from the moment the round enters DECISIONS, before every
        #: open request takes its documented default (:meth:`expire`); the game's own limit
        #: (``Game.decision_time_limit``) wins over the terminal's. None: no limit.
        limit = game.decision_time_limit(options)
        self.decision_timeout_s = limit if limit is not None else decision_timeout_s
        if self.decision_timeout_s is not None and self.decision_timeout_s <= 0:
            raise KernelError(f"the decision time limit must be positive, not {self.decision_timeout_s}")
        self._clock = clock
        #: When the open decisions time out (``clock`` time), while in DECISIONS.
        self.decisions_deadline: float | None = None
        self.journal = journal if journal is not None else NullJournal()
        #: Simulation journals nothing: skip building entries nobody keeps.
        self._journaling = not isinstance(self.journal, NullJournal)
        self.phase: RoundState = RoundState.BETTING
        # The write-ahead callback is registered only when there is a journal to write: the
        # simulator's rounds then skip a no-op callback on every transition (about 10% of a
        # one-seat round). The machine itself, its states and its table are the same.
        self.machine = round_machine(self._journaling)
        self._reset()

    # --- the machine's triggers (kernel/states.py TRANSITIONS), fired on this kernel -------------
    def _fire(self, trigger: str) -> bool:
        return bool(self.machine.events[trigger].trigger(self))

    def deal(self) -> bool:
        return self._fire("deal")

    def await_decisions(self) -> bool:
        return self._fire("await_decisions")

    def showdown(self) -> bool:
        return self._fire("showdown")

    def settle(self) -> bool:
        return self._fire("settle")

    def complete(self) -> bool:
        return self._fire("complete")

    @property
    def round_id(self) -> str:
        """The round's id: given by the caller (the ledger numbers rounds), else a random UUID made
        the first time anyone asks (simulation never does)."""
        if self._round_id is None:
            self._round_id = uuid.uuid4().hex
        return str(self._round_id)

    @property
    def cards_dealt(self) -> int:
        """Cards dealt so far in the current round."""
        return len(self._source.dealt) if self._source is not None else 0

    def _reset(self) -> None:
        #: The game's state of the round in play (None before the first ``begin``).
        self.round: StateT | None = None
        self._round_id = None
        self.wagers: dict[int, dict[str, int]] = {}
        self.dice: tuple[int, ...] | None = None
        self.settlement: Settlement | None = None
        self.decisions: list[tuple[int, str]] = []
        #: Indexes into ``decisions`` of those taken by default on time-out.
        self.timed_out: list[int] = []
        self._source: CardSource | None = None
        self._seq = 0
        self._cards_mark = 0
        self._decisions_mark = 0
        self._entry_data: dict[str, Any] = {}
        self.decisions_deadline = None

    def _state(self) -> StateT:
        """The round in play's game state; only a step of a begun round asks for it."""
        if self.round is None:
            raise KernelError("no round has begun")
        return self.round

    # --- the journal hook ----------------------------------------------------------------------
    def _write_ahead(self, event: Any) -> None:
        if not self._journaling:
            return
        source = self._source
        dealt = source.dealt if source is not None else []
        entry = JournalEntry(
            round_id=self.round_id,
            seq=self._seq,
            trigger=event.event.name,
            source=event.transition.source,
            dest=event.transition.dest,
            cards=tuple(str(c) for c in dealt[self._cards_mark:]),
            decisions=tuple(self.decisions[self._decisions_mark:]),
            data=self._entry_data,
        )
        self.journal.transition(entry)
        self._seq += 1
        self._cards_mark = len(dealt)
        self._decisions_mark = len(self.decisions)
        self._entry_data = {}

    # --- stepping API (the terminal) -----------------------------------------------------------
    def begin(
        self,
        wagers: Mapping[int, Mapping[str, int]],
        source: CardSource,
        *,
        credits: int | None = None,
        dice: tuple[int, ...] | None = None,
        round_id: str | None = None,
    ) -> list[DecisionRequest]:
        """BETTING -> DEALING (-> DECISIONS): validate, deal, and return the decisions awaited.

        With no decision to wait for the round runs on to COMPLETE and an empty list is returned.
        """
        if self.phase not in (RoundState.BETTING, RoundState.COMPLETE):
            raise KernelError(f"a round is in progress ({self.phase.value})")
        clean = validate_wagers(self.game, self.options, wagers, self.limits, credits)
        if self.game.dice or dice is not None:
            self.game.check_dice(tuple(dice or ()))
        self.machine.set_state(RoundState.BETTING, model=self)
        self._reset()
        self._round_id = round_id or None
        self.wagers = clean
        self.dice = tuple(dice) if dice is not None else None
        state = self.round = self.game.new_round(self.options, clean, self.dice)
        source.new_round()
        self._source = source
        if self._journaling:
            self._entry_data = {
                "game": self.game.id,
                "options": self.options.to_json(),
                "wagers": {str(s): dict(b) for s, b in clean.items()},
                "source": source.kind,
            }
            if self.dice is not None:
                self._entry_data["dice"] = list(self.dice)
        self.deal()
        self.game.deal(state, source)
        pending = self.game.pending_decisions(state)
        if pending:
            self.await_decisions()
            if self.decision_timeout_s is not None:
                self.decisions_deadline = self._clock() + self.decision_timeout_s
            return pending
        self._play_out()
        return []

    def pending(self) -> list[DecisionRequest]:
        if self.phase is not RoundState.DECISIONS:
            return []
        return self.game.pending_decisions(self._state())

    def decision_view(self, seat: int) -> dict[str, Any]:
        """What ``seat``'s player may see while a decision is awaited (``{}`` otherwise)."""
        if self.phase is not RoundState.DECISIONS:
            return {}
        return self.game.decision_view(self._state(), seat)

    def decide(self, seat: int, action: str) -> list[DecisionRequest]:
        """Apply one player's decision; when none is left the round runs on to COMPLETE."""
        if self.phase is not RoundState.DECISIONS:
            raise KernelError(f"no decision is awaited ({self.phase.value})")
        state = self._state()
        if not any(r.seat == seat for r in self.game.pending_decisions(state)):
            raise DecisionError(f"seat {seat} has no decision to make")
        self.game.decide(state, seat, action)
        self.decisions.append((seat, action))
        pending = self.game.pending_decisions(state)
        if not pending:
            self._play_out()
        return pending

    def expire(self) -> list[tuple[int, str]]:
        """Called by whoever runs the clock (the cabinet's loop): past the deadline, time out."""
        if self.phase is RoundState.DECISIONS and self.decisions_deadline is not None \
                and self._clock() >= self.decisions_deadline:
            return self.time_out()
        return []

    def time_out(self) -> list[tuple[int, str]]:
        """The decision time limit ran out: every open request takes its documented default.

        Returns the ``(seat, action)`` pairs applied; the record lists them among the decisions and
        in ``timed_out``, and a replay applies them like any other decision.
        """
        applied: list[tuple[int, str]] = []
        while self.phase is RoundState.DECISIONS:
            request = self.game.pending_decisions(self._state())[0]
            self.timed_out.append(len(self.decisions))
            applied.append((request.seat, request.default))
            self.decide(request.seat, request.default)
        return applied

    def _play_out(self) -> None:
        assert self._source is not None
        state = self._state()
        self.showdown()
        self.game.showdown(state, self._source)
        self.settle()
        self.settlement = self.game.settle(state)
        if self._journaling:
            self._entry_data = {
                "net": self.settlement.players_net,
                "house_net": self.settlement.house_net,
                "stakes": {str(seat): dict(b) for seat, b in self.settlement.stakes.items()},
                "results": {
                    str(seat): {name: r.to_json() for name, r in res.items()}
                    for seat, res in self.settlement.results.items()
                },
            }
            if self.settlement.commission:   # the house's fee from the pool (meter pool_commission)
                self._entry_data["commission"] = self.settlement.commission
            if self.timed_out:       # which decisions the clock took, so recall shows them
                self._entry_data["timed_out"] = list(self.timed_out)
        self.complete()

    # --- one call (simulate, egm round, replay) ------------------------------------------------
    def play(
        self,
        wagers: Mapping[int, Mapping[str, int]],
        source: CardSource,
        *,
        credits: int | None = None,
        dice: tuple[int, ...] | None = None,
        decider: Decider | None = None,
        round_id: str | None = None,
    ) -> Settlement:
        """Play a whole round; decisions come from ``decider`` or the game's automatic strategy."""
        pending = self.begin(wagers, source, credits=credits, dice=dice, round_id=round_id)
        while pending:
            request = pending[0]
            if decider is not None:
                action = decider(request)
            else:
                action = self.game.automatic_decision(self._state(), request)
            pending = self.decide(request.seat, action)
        assert self.settlement is not None
        return self.settlement

    # --- the record ----------------------------------------------------------------------------
    def record(self) -> dict[str, Any]:
        """The round record (CONTRACTS.md ``egm round`` JSON) of the completed round."""
        if self.phase is not RoundState.COMPLETE or self.settlement is None:
            raise KernelError(f"the round is not complete ({self.phase.value})")
        source = self._source
        assert source is not None
        doc: dict[str, Any] = {"game": self.game.id, "round_id": self.round_id,
                               "options": self.options.to_json()}
        if self.dice is not None:
            doc["dice"] = list(self.dice)
        doc.update(self.game.record(self._state()))
        doc["net"] = self.settlement.players_net
        doc["house_net"] = self.settlement.house_net
        doc["decisions"] = [
            {"seat": s, "action": a, **({"timed_out": True} if i in self.timed_out else {})}
            for i, (s, a) in enumerate(self.decisions)
        ]
        doc["source"] = source.kind
        doc["cards_dealt"] = format_cards(source.dealt)
        return doc


def replay(record: Mapping[str, Any]) -> dict[str, Any]:
    """Play a recorded round again from its own cards, wagers, dice and decisions; return the new record.

    Decisions are applied in the order the record lists them (players answer in any order), and
    those marked ``timed_out`` are marked again, so the replayed record is identical.
    """
    from firmware.cards.card import parse_cards
    from firmware.cards.source import StackedSource
    from firmware.games.registry import get_game, make_options

    try:
        game = get_game(record["game"])
        options = make_options(game.id, record["options"])
        wagers = {int(s["seat"]): dict(s["wagers"]) for s in record["seats"]}
        cards = parse_cards(record["cards_dealt"])
        dice = tuple(record["dice"]) if "dice" in record else None
        decisions = [(int(d["seat"]), str(d["action"]), bool(d.get("timed_out")))
                     for d in record.get("decisions", [])]
    except (KeyError, TypeError, ValueError) as exc:
        raise KernelError(f"not a complete round record: {exc!r}") from None

    source = StackedSource(cards, exhaustion_is_misdeal=record.get("source") != "stacked", shoe=game.shoe(options))
    kernel = RoundKernel(game, options)
    pending = kernel.begin(wagers, source, dice=dice, round_id=str(record.get("round_id", "")))
    for seat, action, timed_out in decisions:
        if not pending:
            raise KernelError(f"the record has a decision for seat {seat} after the last one awaited")
        if timed_out:
            kernel.timed_out.append(len(kernel.decisions))
        pending = kernel.decide(seat, action)
    if pending:
        raise KernelError(f"the record has no decision for seat {pending[0].seat}")
    out = kernel.record()
    out["source"] = record.get("source", out["source"])
    return out
