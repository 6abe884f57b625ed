"""The table controller: runs the live table's round for its player stations and alone decides it.

One seat per joined station; a betting window (``[table] betting_window_s``, closed early when every
joined station has bet); the round kernel (``firmware.kernel.round.RoundKernel``) with one seat per
accepted bet, journaled into the controller's own critical memory (``firmware.ledger``, its rounds
tagged ``table`` so they move no credit meter); the seats' decisions asked of their stations; the
results sent to each bet's station until it acknowledges them (docs/protocols/table.md).

Sans-I/O: the transport (``firmware.table.transport``) calls :meth:`TableController.join`,
:meth:`bet`, :meth:`decision`, :meth:`result_ack` and :meth:`leave` from its connections, and
:meth:`tick` on a clock; the controller answers through the :class:`Outbound` it is given. The
dealer's screen calls the operator methods (:meth:`open_betting`, :meth:`close_betting`,
:meth:`deal`, :meth:`declare_misdeal`, :meth:`pause`, :meth:`unpause`) and draws :meth:`snapshot`.
Every public method holds the controller's lock.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from firmware.cards.errors import ShoeExhausted
from firmware.config.schema import TableSection
from firmware.errors import EgmError
from firmware.games.base import DecisionRequest, Game
from firmware.games.errors import DecisionError, WagerError
from firmware.games.options import GameOptions
from firmware.games.player_banker import (
    BankerRotation,
    coverage_shortfall,
    player_banking,
    seat_wagers,
)
from firmware.kernel.journal import JournalEntry
from firmware.kernel.limits import BetLimits, validate_wagers
from firmware.kernel.round import RoundKernel
from firmware.kernel.states import RoundState
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger
from firmware.table.betting import Bet, judge_bet
from firmware.table.cards import CardSupply, ObservedSource
from firmware.table.errors import TableError
from firmware.table.phases import TABLE_PHASES, TablePhase
from firmware.table.protocol import check_id
from firmware.table.records import TableRecords, misdeal_entry, undealt_entry
from firmware.table.recovery import recover
from firmware.table.seating import Seating, Station
from firmware.table.snapshot import build_snapshot, decision_left_s

log = logging.getLogger("egm.table")
P = TablePhase


class Outbound(Protocol):
    """How the controller reaches a station (the transport queues; never blocks)."""

    def send(self, station: str, type_: str, body: dict[str, Any]) -> None: ...


class NoOutbound:
    def send(self, station: str, type_: str, body: dict[str, Any]) -> None:
        return None


@dataclass
class TableRound:
    """The round at the table now: its window, bets, kernel, record."""

    round_id: str | None = None
    round_no: int = 0
    bets: dict[str, Bet] = field(default_factory=dict)       # by bet id
    kernel: RoundKernel[Any, Any] | None = None
    source: ObservedSource | None = None
    window_closes_at: float | None = None
    closed_at_ns: int | None = None
    ended_at: float | None = None
    record: dict[str, Any] | None = None
    misdeal: str | None = None
    decision_ids: set[str] = field(default_factory=set)     # the decisions applied (sent again: ignored)
    banker_seat: int | None = None     # the player banker's seat (firmware.table.banker), None: none


def table_round_id(table_id: str, round_no: int) -> str:
    return f"{table_id}-{round_no:06d}"


class TableController:
    """The table of one game; see the module's docstring."""

    def __init__(self, ledger: Ledger, settings: TableSection, game: Game[Any, Any], options: GameOptions,
                 limits: BetLimits, cards: CardSupply, *, out: Outbound | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ledger = ledger
        self.settings = settings
        self.game = game
        self.options = options
        self.limits = limits
        #: A round's limits: each seat's bets are checked with ``limits`` when accepted; the round
        #: holds up to one seat per station, so its total is ``max_total_bet`` per seat.
        self.round_limits = BetLimits(limits.min_bet, limits.max_bet, limits.max_total_bet * game.max_seats)
        self.cards = cards
        self.out: Outbound = out or NoOutbound()
        self.clock = clock
        self.records = TableRecords(ledger)
        self.lock = threading.RLock()
        self.phase: TablePhase = TABLE_PHASES.initial          # type: ignore[assignment]
        self.seating = Seating(game.max_seats, settings.max_stations)
        self.round = TableRound()
        self.results: dict[str, dict[str, Any]] = {}            # sent, not yet acknowledged (by bet id)
        #: Betting window close -> first card at each station, in seconds (from the acks).
        self.latencies: list[float] = []
        #: Called with every snapshot (the dealer's screen); the stations get theirs over the link.
        self.listeners: list[Callable[[dict[str, Any]], None]] = []
        #: The player banker's rotation (Double Super 9 with ``banking = player``; else unused).
        self.banking = player_banking(options)
        self.rotation = BankerRotation()
        self._passed_over: int | None = None      # the last banker, passed over (it could not cover)
        ledger.round_tags = {"table": settings.table_id}
        recover(self)

    @property
    def stations(self) -> dict[str, Station]:
        """The seated stations by id (online or holding a seat for their bet)."""
        return self.seating.stations

    # --- power-up ------------------------------------------------------------------------------
    # --- the phases ----------------------------------------------------------------------------
    def _move(self, trigger: str, dest: object = None, *, from_: TablePhase | None = None) -> TablePhase:
        state = from_ if from_ is not None else self.phase
        moved = TABLE_PHASES.move(state, trigger) if dest is None else TABLE_PHASES.move(state, trigger, dest)
        assert isinstance(moved, TablePhase)
        return moved

    def _set(self, trigger: str, dest: object = None) -> None:
        self.phase = self._move(trigger, dest)
        self.broadcast()

    # --- stations (the transport's calls) ------------------------------------------------------
    def join(self, station: str, seat_wanted: int,
             on_seated: Callable[[dict[str, Any]], None] | None = None,
             open_bets: Iterable[str] | None = None) -> dict[str, Any]:
        """A station joins (or comes back): its welcome (its seat), or :class:`TableError` saying why
        not. ``on_seated`` is given the welcome before anything else is sent to the station (the
        snapshot, a decision awaited from its seat). ``open_bets``: the bet ids the station still
        waits on; a result of its kept for any other bet was settled there (its acknowledgement was
        lost) and is dropped."""
        with self.lock:
            seat = self.seating.seat(station, seat_wanted)
            if open_bets is not None:
                still = set(open_bets)
                for bet_id in [b for b, r in self.results.items() if r["station"] == station and b not in still]:
                    del self.results[bet_id]
            log.info("table: %s joined at seat %d", station, seat)
            welcome = {"table_id": self.settings.table_id, "station": station, "seat": seat, "game": self.game.id}
            if on_seated is not None:
                on_seated(welcome)
            self.broadcast()
            self._ask_decisions(station)
            return welcome

    def leave(self, station: str) -> None:
        """A station's connection ended: its seat stays while it has a bet in the round."""
        with self.lock:
            if not self.seating.leave(station, any(b.station == station for b in self.round.bets.values())):
                return
            log.info("table: %s left", station)
            self.broadcast()

    def bet(self, station: str, body: dict[str, Any]) -> None:
        """A bet (new or sent again): answered once per bet id; its result follows if settled."""
        with self.lock:
            bet_id = check_id(body["bet_id"], "bet_id")
            answer = self.records.answer_of(bet_id)
            if answer is None:
                answer = judge_bet(self, station, body)
                self.records.record_answer(answer)
                if answer["accepted"]:
                    self.round.bets[bet_id] = Bet.of(answer)
                    log.info("table: bet %s of %s accepted into %s", bet_id, station, answer["round_id"])
                else:
                    log.info("table: bet %s of %s refused: %s", bet_id, station, answer["reason"])
            elif answer["station"] != station:
                log.warning("table: %s re-sent bet %s of %s: ignored", station, bet_id, answer["station"])
                return
            self.out.send(station, "bet_answer", {k: answer[k] for k in ("bet_id", "accepted", "round_id", "reason")})
            if answer["accepted"]:
                self._send_result_if_settled(answer)
                self.broadcast()
                self._close_if_all_bet()

    def decision(self, station: str, body: dict[str, Any]) -> None:
        with self.lock:
            r, kernel = self.round, self.round.kernel
            decision_id = check_id(body["decision_id"], "decision_id")
            known = self.stations.get(station)
            if decision_id in r.decision_ids:
                return
            if kernel is None or self.phase is not P.DECISIONS or body["round_id"] != r.round_id:
                log.info("table: decision %s of %s for round %s: no decision is awaited", decision_id, station,
                         body["round_id"])
                return
            if known is None or known.seat != body["seat"]:
                log.warning("table: %s may not decide for seat %s", station, body["seat"])
                return
            try:
                kernel.decide(body["seat"], body["action"])
            except DecisionError as exc:
                log.warning("table: decision of %s refused: %s", station, exc)
                return
            r.decision_ids.add(decision_id)
            self._after_decisions()
            self._ask_decisions(station)       # the seat's next decision, if its game has one

    def result_ack(self, station: str, body: dict[str, Any]) -> None:
        with self.lock:
            result = self.results.pop(body["bet_id"], None)
            if result is not None and "latency_us" in body:
                self.latencies.append(body["latency_us"] / 1e6)

    # --- the clock -----------------------------------------------------------------------------
    def tick(self) -> None:
        """Called often (the transport's loop): closes the window, times decisions out, deals for
        a virtual dealer, opens the next window."""
        with self.lock:
            now = self.clock()
            r = self.round
            if self.phase is P.BETTING and r.window_closes_at is not None and now >= r.window_closes_at:
                self._close()
            elif self.phase is P.DEALING and r.kernel is None and self.settings.auto_open:
                self._deal()
            elif self.phase is P.DECISIONS and r.kernel is not None:
                if r.kernel.expire():
                    self._after_decisions()
            elif self.phase in (P.CLOSED, P.SETTLED, P.MISDEAL) and self.settings.auto_open and (
                    r.ended_at is None or now >= r.ended_at + self.settings.between_rounds_s):
                self._open()

    # --- operator ------------------------------------------------------------------------------
    def open_betting(self) -> None:
        with self.lock:
            self._open()

    def close_betting(self) -> None:
        with self.lock:
            self._close()

    def deal(self) -> None:
        """The live dealer confirms the deal (a table with ``auto_open`` false)."""
        with self.lock:
            if self.phase is not P.DEALING or self.round.kernel is not None:
                raise TableError(f"nothing to deal ({self.phase.value})")
            self._deal()

    def declare_misdeal(self, reason: str) -> None:
        """The dealer (or a misread of the shoe) ends the round: every wager returned."""
        with self.lock:
            TABLE_PHASES.move(self.phase, "misdeal")
            self._misdeal(reason)

    def pause(self) -> None:
        with self.lock:
            self._set("pause")

    def unpause(self) -> None:
        with self.lock:
            self.round.ended_at = self.clock()
            self._set("unpause")

    # --- the round -----------------------------------------------------------------------------
    def _open(self) -> None:
        phase = self._move("open")
        round_no = self.round.round_no + 1
        round_id = table_round_id(self.settings.table_id, round_no)
        stack = self.cards.stack
        self.seating.free_offline()
        banker = None
        if self.banking:
            present = {s.seat for s in self.stations.values() if s.online}
            banker = self.rotation.next(present, self._passed_over)
            log.info("table: %s is banked by %s (seats present %s, wagered last %s)", round_id,
                     f"seat {banker.spot} (turn {banker.term})" if banker is not None else "no one",
                     sorted(present), sorted(self.rotation.wagered))
            self._passed_over = None
        self.records.open_window(round_id, round_no, stack.pos if stack is not None else 0, banker)
        self.round = TableRound(round_id=round_id, round_no=round_no,
                                 window_closes_at=self.clock() + self.settings.betting_window_s,
                                 banker_seat=banker.spot if banker is not None else None)
        self.phase = phase
        log.info("table: betting open for %s", round_id)
        self.broadcast()

    def _close_if_all_bet(self) -> None:
        if not self.settings.close_when_all_bet or self.phase is not P.BETTING:
            return
        online = self.seating.online()
        if online and online <= {b.station for b in self.round.bets.values()}:
            self._close()

    def _close(self) -> None:
        r = self.round
        if r.bets:
            self.phase = self._move("close", P.DEALING)
            r.closed_at_ns = time.monotonic_ns()
            log.info("table: betting closed for %s with %d bets", r.round_id, len(r.bets))
            self.broadcast()
            if self.settings.auto_open:
                self._deal()
        else:
            self.phase = self._move("close", P.CLOSED)
            r.ended_at = self.clock()
            self.broadcast()

    def wagers(self) -> dict[int, dict[str, int]]:
        """The round's wagers by seat as the kernel takes them (a player banker's cover is its bank)."""
        banker = self.round.banker_seat
        return {b.seat: seat_wagers(b.wagers, b.cover, banker, b.seat) for b in self.round.bets.values()}

    def _deal(self) -> None:
        r = self.round
        assert r.round_id is not None
        if self.banking:
            self.rotation.played(b.seat for b in r.bets.values())
            shortfall = coverage_shortfall(self.wagers(), r.banker_seat)
            if shortfall is None:
                try:          # each bet was checked on its own; the table as a whole once more
                    validate_wagers(self.game, self.options, self.wagers(), self.round_limits)
                except WagerError as exc:
                    shortfall = f"the round's wagers do not stand together: {exc}"
            if shortfall is not None:
                self._pass_over(shortfall)
                return
        source = r.source = self.cards.observed()
        kernel = r.kernel = RoundKernel(self.game, self.options, limits=self.round_limits,
                                        journal=_ShowingJournal(self), clock=self.clock,
                                        decision_timeout_s=self.settings.decision_timeout_s)
        try:
            dice = self.game.roll_dice(self.cards.rng) if self.game.dice and self.cards.rng is not None else None
            kernel.begin(self.wagers(), source, round_id=r.round_id, dice=dice)
        except ShoeExhausted as exc:
            self._misdeal(f"the shoe could not deal: {exc}")
            return
        except CriticalMemoryError:
            raise
        except EgmError as exc:
            if kernel.phase is RoundState.BETTING:     # refused before anything was journaled
                raise
            self._misdeal(f"the round stopped: {exc}")
            return
        self._after_deal()

    def _pass_over(self, reason: str) -> None:
        """The banker cannot bank the round (rules: it is passed over): the round is journaled and
        ends at once with every wager returned and the reason recorded; the next window's banker is
        the next spot clockwise."""
        r = self.round
        assert r.round_id is not None
        log.warning("table: %s: %s", r.round_id, reason)
        self.ledger.event("table_banker_passed", round_id=r.round_id, banker_seat=r.banker_seat, reason=reason)
        self._passed_over = r.banker_seat
        self.ledger.transition(undealt_entry(r.round_id, self.game.id, self.options.to_json(), self.wagers(),
                                             self.cards.kind))
        self._misdeal(reason)

    def _after_deal(self) -> None:
        kernel = self.round.kernel
        assert kernel is not None
        if kernel.phase is RoundState.DECISIONS:
            if self.phase is not P.DECISIONS:
                self.phase = self._move("await_decisions")
            self.broadcast()
            for station in list(self.stations):
                self._ask_decisions(station)
        elif kernel.phase is RoundState.COMPLETE:
            self._settled()

    def _ask_decisions(self, station: str) -> None:
        kernel = self.round.kernel
        known = self.stations.get(station)
        if kernel is None or self.phase is not P.DECISIONS or known is None or not known.online:
            return
        for request in kernel.pending():
            if request.seat == known.seat:
                self.out.send(station, "decision_request", self._request_body(request))

    def _request_body(self, request: DecisionRequest) -> dict[str, Any]:
        kernel = self.round.kernel
        assert kernel is not None and self.round.round_id is not None
        left = decision_left_s(self)
        body = {"round_id": self.round.round_id, "seat": request.seat, "kind": request.kind,
                "actions": list(request.actions), "default": request.default,
                "view": kernel.decision_view(request.seat), "time_left_ms": None if left is None else round(left * 1000),
                "auto": self.game.automatic_decision(kernel.round, request)}
        if request.hint is not None:
            body["hint"] = request.hint
        return body

    def _after_decisions(self) -> None:
        kernel = self.round.kernel
        assert kernel is not None
        if kernel.phase is RoundState.COMPLETE:
            self._settled()
        else:
            self.broadcast()

    def _settled(self) -> None:
        r, kernel = self.round, self.round.kernel
        assert kernel is not None and r.round_id is not None
        if self.phase is not P.SHOWDOWN:
            self.phase = self._move("showdown")
        r.record = kernel.record()
        self.phase = self._move("settle")
        r.ended_at = self.clock()
        log.info("table: round %s settled (players net %d)", r.round_id, r.record["net"])
        self.broadcast()
        data = self.records.completed(r.round_id)
        assert data is not None
        for bet in r.bets.values():
            self._send_result(bet, data, r.record)

    def _misdeal(self, reason: str) -> None:
        """Journal the round's end with every wager returned (rules: a misdeal), then the results."""
        r, kernel = self.round, self.round.kernel
        assert r.round_id is not None
        open_round = self.ledger.open_round
        if open_round is not None and open_round.round_id == r.round_id:
            self.ledger.transition(misdeal_entry(
                open_round, r.source.dealt if r.source is not None else [], self.wagers(), reason,
                kernel.phase.value if kernel is not None else RoundState.DEALING.value))
        self.ledger.event("table_misdeal", round_id=r.round_id, reason=reason)
        log.warning("table: misdeal in %s: %s", r.round_id, reason)
        r.misdeal = reason
        r.kernel = None
        self.phase = self._move("misdeal")
        r.ended_at = self.clock()
        data_done = self.records.completed(r.round_id)
        r.record = self.records.round_record(r.round_id) if data_done is not None else None
        self.broadcast()
        if data_done is not None and r.record is not None:
            for bet in r.bets.values():
                self._send_result(bet, data_done, r.record)

    # --- results -------------------------------------------------------------------------------
    def _send_result(self, bet: Bet, data: dict[str, Any], record: dict[str, Any]) -> None:
        seat = str(bet.seat)
        result = {"round_id": bet.round_id, "bet_id": bet.bet_id, "seat": bet.seat,
                  "stakes": data["stakes"][seat], "results": data["results"][seat], "record": record}
        self.results[bet.bet_id] = {**result, "station": bet.station}
        if self.seating.is_online(bet.station):
            self.out.send(bet.station, "result", result)

    def _send_result_if_settled(self, answer: dict[str, Any]) -> None:
        """A bet sent again whose round is over: its result again (the station missed it)."""
        round_id = answer["round_id"]
        if round_id == self.round.round_id and self.phase not in (P.SETTLED, P.MISDEAL, P.CLOSED):
            return
        data = self.records.completed(round_id)
        if data is None:
            return
        record = self.round.record if round_id == self.round.round_id and self.round.record is not None \
            else self.records.round_record(round_id)
        self._send_result(Bet.of(answer), data, record)

    # --- what the screens draw -----------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """The table as it stands (docs/protocols/table.md, "The snapshot")."""
        with self.lock:
            return build_snapshot(self)

    def broadcast(self) -> None:
        snap = build_snapshot(self)
        for listener in self.listeners:
            listener(snap)
        for station in self.seating.online():
            self.out.send(station, "snapshot", snap)

    def meters(self) -> dict[str, int]:
        """The controller's meters in credits: coin in/out, games played and the pool's commission."""
        m, denom = self.ledger.meters, self.ledger.denom_cents
        return {"coin_in": m.get("coin_in", 0) // denom, "coin_out": m.get("coin_out", 0) // denom,
                "games_played": m.get("games_played", 0),
                "pool_commission": m.get("pool_commission", 0) // denom}


class _ShowingJournal:
    """The kernel's journal at the table: the controller's ledger, then a snapshot of what the entry
    made final (cards are shown only once they are in critical memory)."""

    def __init__(self, controller: TableController) -> None:
        self._controller = controller

    def transition(self, entry: JournalEntry) -> None:
        self._controller.ledger.transition(entry)
        if entry.cards:
            self._controller.broadcast()
