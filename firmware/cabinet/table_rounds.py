"""A player station's rounds at a live table (issue 24): the terminal's side of :mod:`table_port`.

With ``[table] controller`` set the terminal does not deal: the table controller runs the round and
decides it; this station keeps the player's money. :class:`TableRounds` is the terminal's part for
it. The DEAL button (``Terminal.play``) checks the wagers against the limits and the credits, commits
``table.bet`` (the stake is held off the credit meter, :mod:`firmware.ledger.table`) and only then
sends the bet; the controller's answer and the round's result are committed once per ``bet_id``
(a repeat changes nothing), and every bet not settled is sent again when the link comes back
(:meth:`open_bets`), so a power cut or a lost link never loses or doubles a wager.

The link calls the :class:`~firmware.cabinet.table_port.TableEvents` methods on its own thread; each
is handed to the terminal's thread through its command queue (the ``table`` command, which the
control socket does not offer), and :meth:`bet_answered`, :meth:`round_result` and
:meth:`open_bets` wait for the terminal's thread to have done it, so the link acknowledges only what
is committed. While a bet is open the cabinet is PLAYING (a round is in progress for this player,
though this terminal's kernel does not deal it): a cash-out, a game change and a RAM clear wait.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from firmware.cabinet.errors import TerminalError
from firmware.cabinet.states import CabinetState
from firmware.cabinet.table_port import TableEvents, TablePort
from firmware.games.errors import WagerError
from firmware.games.player_banker import check_bet_role, counterpart, role_wagers, seat_wagers
from firmware.games.registry import get_game, table_options
from firmware.kernel.limits import BetLimits, validate_wagers
from firmware.ledger.errors import LedgerStateError
from firmware.ledger.table import recall_entry

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

log = logging.getLogger(__name__)
S = CabinetState

#: Seconds the link's thread waits for the terminal's thread to commit an answer or a result (it
#: does not acknowledge otherwise, and the controller sends it again).
COMMIT_WAIT_S = 30.0


class TableRounds(TableEvents):
    """The table rounds of ``terminal`` (a player station). The composition root hands this object
    to the table link and the link to :meth:`Terminal.connect_table`."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        table = terminal.cfg.table
        self.table_id = table.table_id
        #: this station's seat: the configured one, else the one the controller shows it in
        self.seat: int | None = table.seat or None
        self.snapshot: dict[str, Any] | None = None       #: the table as last sent
        self.link_up = False
        self.decision: dict[str, Any] | None = None       #: the controller's request awaiting us
        self.last_result: dict[str, Any] | None = None    #: the last settled (or refused) bet, as recall shows it
        self._joined = False
        self._decisions_sent = 0
        self._thread: int | None = None                   #: the terminal's thread, once seen

    # --- the terminal's thread ------------------------------------------------------------------
    @property
    def port(self) -> TablePort | None:
        return self.t.table_port

    def attach(self) -> None:
        """Called on the terminal's thread (power-up, every step): remember it, and keep the
        cabinet PLAYING exactly while a bet is open."""
        self._thread = threading.get_ident()
        t = self.t
        if t.ledger.table_bets:
            if t.cabinet.state is S.IDLE:
                t.cabinet.start_round()          # a bet a power cut left open: the round goes on
        elif t.cabinet.state is S.PLAYING and t.kernel is None and t.ledger.open_round is None:
            t.cabinet.complete_round()
            t.supervision.after_transition()

    def _on_terminal_thread(self, name: str, wait: bool, **data: Any) -> Any:
        """Run event ``name`` on the terminal's thread; ``wait``: return its result (else at once)."""
        if self._thread == threading.get_ident():
            return self.handle(name, **data)
        future = self.t.submit("table", event=name, data=data)
        return future.result(COMMIT_WAIT_S) if wait else None

    def handle(self, event: str, data: Mapping[str, Any] | None = None, **kw: Any) -> Any:
        """The ``table`` command: one of the link's events, on the terminal's thread."""
        handlers: dict[str, Callable[..., Any]] = {
            "snapshot": self._snapshot, "answer": self._answer, "decision": self._decision_requested,
            "result": self._result, "open_bets": self._open_bets, "link": self._link,
        }
        if event not in handlers:
            raise TerminalError(f"unknown table event {event!r}")
        return handlers[event](**dict(data or {}, **kw))

    # --- TableEvents (the link's thread) ----------------------------------------------------------
    def table_snapshot(self, snapshot: dict[str, Any]) -> None:
        self._on_terminal_thread("snapshot", False, snapshot=snapshot)

    def bet_answered(self, answer: dict[str, Any]) -> None:
        self._on_terminal_thread("answer", True, answer=answer)

    def decision_requested(self, request: dict[str, Any]) -> None:
        self._on_terminal_thread("decision", False, request=request)

    def round_result(self, result: dict[str, Any]) -> None:
        self._on_terminal_thread("result", True, result=result)

    def open_bets(self) -> list[dict[str, Any]]:
        bets: list[dict[str, Any]] = self._on_terminal_thread("open_bets", True)
        return bets

    def link_state(self, up: bool, detail: str) -> None:
        self._on_terminal_thread("link", False, up=up, detail=detail)

    # --- the events, handled ----------------------------------------------------------------------
    def _snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = dict(snapshot)
        if self.seat is None:
            station = self.t.cfg.terminal.id
            self.seat = next((s.get("seat") for s in snapshot.get("seats", [])
                              if isinstance(s, Mapping) and s.get("station") == station), None)
        request = self.decision
        if request is not None and (snapshot.get("round_id") != request.get("round_id")
                                    or snapshot.get("phase") not in ("decisions", "dealing")):
            self.decision = None              # decided (here, or by the controller's clock)

    def _answer(self, answer: Mapping[str, Any]) -> bool:
        t = self.t
        bet_id = str(answer.get("bet_id", ""))
        bet = t.ledger.table_bets.get(bet_id)
        accepted = answer.get("accepted") is True
        reason = str(answer.get("reason") or "")
        if not t.ledger.table_answer(bet_id, accepted, answer.get("round_id"), reason):
            log.info("table: answer to bet %s again (already answered): ignored", bet_id)
            return False
        if not accepted and bet is not None:
            t.ledger.event("table_bet_refused", bet_id=bet_id, round_id=bet["round_id"], reason=reason,
                           returned=bet["held"])
            self.last_result = recall_entry("table.refused", None, {**bet, "reason": reason})
            t.message = f"bet refused: {reason or 'refused by the table'}; {bet['held']} credits returned"
            self.attach()
        return True

    def _decision_requested(self, request: Mapping[str, Any]) -> None:
        if self.seat is not None and request.get("seat") == self.seat:
            self.decision = dict(request)

    def _result(self, result: Mapping[str, Any]) -> bool:
        t = self.t
        bet_id = str(result.get("bet_id", ""))
        try:
            done = t.ledger.table_result(bet_id, str(result.get("round_id")), result.get("stakes") or {},
                                         result.get("results") or {}, result.get("record"))
        except LedgerStateError as exc:
            t.ledger.event("table_result_refused", bet_id=bet_id, round_id=result.get("round_id"), reason=str(exc))
            raise TerminalError(f"the table's result does not fit bet {bet_id}: {exc}") from None
        if not done:
            log.info("table: result of bet %s again (already settled): ignored", bet_id)
            return False
        settled = t.ledger.records_for(bet_id)[-1]
        entry = recall_entry("table.result", settled["time"], settled["body"])
        self.last_result = entry
        self.decision = None
        t.rounds.last_record = entry
        t.rounds.rounds_played += 1
        t.message = f"round {entry['round_id']}: {entry['net']:+d}"
        self.attach()
        if t.on_round is not None:
            t.on_round(entry)
        return True

    def _open_bets(self) -> list[dict[str, Any]]:
        return [self._wire(bet) for bet in self.t.ledger.table_bets.values()]

    def _link(self, up: bool, detail: str) -> None:
        if up == self.link_up:
            return
        self.link_up = up
        if up:
            self.t.ledger.event("table_joined" if not self._joined else "table_link_up",
                                table_id=self.table_id, seat=self.seat, detail=detail)
            self._joined = True
        else:
            self.t.ledger.event("table_link_down", table_id=self.table_id, detail=detail)

    @staticmethod
    def _wire(bet: Mapping[str, Any]) -> dict[str, Any]:
        """A committed bet as :meth:`TablePort.send_bet` takes it."""
        return {"bet_id": bet["bet_id"], "round_id": bet["round_id"], "seat": bet["seat"], "game": bet["game"],
                "wagers": dict(bet["wagers"]), "cover": bet["cover"]}

    # --- the player (Terminal.play, Terminal.decide) --------------------------------------------
    def window(self) -> tuple[str, dict[str, Any]]:
        """The open betting window's round id and the snapshot; TerminalError saying why no bet
        can be placed now (link down, no window, a bet already open)."""
        port = self.port
        if port is None or not self.link_up or not port.connected():
            raise TerminalError("the table link is down: no bet can be placed")
        snap = self.snapshot
        if snap is None or snap.get("phase") != "betting" or not snap.get("round_id"):
            phase = "unknown" if snap is None else snap.get("phase")
            raise TerminalError(f"no betting window is open at the table (phase: {phase})")
        if self.seat is None:
            raise TerminalError("this station has no seat at the table yet")
        open_bets = self.t.ledger.table_bets
        if open_bets:
            bet = next(iter(open_bets.values()))
            raise TerminalError(f"bet {bet['bet_id']} of round {bet['round_id']} is not settled yet")
        return str(snap["round_id"]), snap

    def wagers_for(self, game_id: str) -> dict[int, dict[str, int]]:
        """The automatic wagers of one seat at the current bet, on this station's seat."""
        game = get_game(game_id)
        options = table_options(self.t.cfg, game_id)
        banker = (self.snapshot or {}).get("banker_seat")
        if banker is not None:                  # a player-banked round: this seat's role
            return {self.seat or 1: role_wagers(options, banker == self.seat, self.t.rounds.bet_unit)}
        one = game.automatic_wagers(options, 1, self.t.rounds.bet_unit)
        return {self.seat or 1: next(iter(one.values()))}

    def play(self, wagers: Mapping[Any, Mapping[str, int]] | None = None, game: str | None = None) -> dict[str, Any]:
        """Place a bet in the open betting window (committed, then sent); see the module. ``game``,
        if given, must be the table's."""
        t = self.t
        if game is not None and self.snapshot is not None and game != self.snapshot.get("game"):
            raise TerminalError(f"the table plays {self.snapshot.get('game')}, not {game}")
        if not t.cabinet.can_start_round:
            raise TerminalError(f"a bet cannot be placed now ({t.cabinet.state.name.lower()})")
        if (held := t.play_held()) is not None:
            raise TerminalError(f"a bet cannot be placed now ({held})")
        round_id, snap = self.window()
        seat = self.seat
        assert seat is not None
        game_id = str(snap.get("game") or t.rounds.game_id)
        rules = get_game(game_id)
        options = table_options(t.cfg, game_id)
        chosen = wagers if wagers is not None else self.wagers_for(game_id)
        if not isinstance(chosen, Mapping) or len(chosen) != 1:
            raise TerminalError("a station bets on its one seat: wagers are {seat: {name: credits}} for one seat")
        bets = next(iter(chosen.values()))
        if not isinstance(bets, Mapping):
            raise TerminalError(f"wagers are {{seat: {{name: credits}}}}, not {dict(chosen)!r}")
        own = t.limits
        limits = BetLimits(max(own.min_bet, int(snap.get("min_bet") or own.min_bet)),
                           min(own.max_bet, int(snap.get("max_bet") or own.max_bet)), own.max_total_bet)
        mine = {str(n): a for n, a in bets.items()}
        cover = 0
        if snap.get("banker_seat") is not None:
            clean, cover = self._banked(rules, options, snap, mine, limits)
        else:
            clean = validate_wagers(rules, options, {seat: mine}, limits, t.ledger.credits)
        reserve = rules.reserved_stake(options, clean)
        bet_id = f"{t.cfg.terminal.id}-{secrets.token_hex(8)}"
        t.ledger.table_bet(bet_id, round_id, seat, game_id, clean[seat], reserve=reserve, cover=cover)
        t.cabinet.start_round()
        t.message = ""
        self._send(t.ledger.table_bets[bet_id])
        return {**t.status(), "bet_id": bet_id}

    def _banked(self, rules: Any, options: Any, snap: Mapping[str, Any], bets: dict[str, int],
                limits: BetLimits) -> tuple[dict[int, dict[str, int]], int]:
        """A bet at a player-banked table (firmware.games.player_banker): its wagers by seat and its
        cover. The banker covers what it may owe, the table maximum for each other seated player,
        as far as its credits go; a banker whose credits cannot cover the table minimum passes."""
        t, seat, banker = self.t, self.seat, int(snap["banker_seat"])
        assert seat is not None
        cover = 0
        if seat == banker:
            cover = min(self.cover_wanted(limits.max_bet), t.ledger.credits - sum(bets.values()))
            if cover < limits.min_bet:
                raise TerminalError(f"this station banks the round but its {t.ledger.credits} credits cannot cover "
                                    f"the table minimum {limits.min_bet}: the bank passes on")
        try:
            check_bet_role(seat, banker, bets, cover)
            rest = counterpart(seat, banker, rules.max_seats, options, limits.min_bet)
            validate_wagers(rules, options, {**rest, seat: seat_wagers(bets, cover, banker, seat)}, limits)
        except WagerError as exc:
            raise TerminalError(str(exc)) from None
        if sum(bets.values()) + cover > t.ledger.credits:
            raise TerminalError(f"the bet needs {sum(bets.values()) + cover} credits; {t.ledger.credits} are on the meter")
        return {seat: bets}, cover

    def cover_wanted(self, max_bet: int | None = None) -> int:
        """What this station would hold to bank the open window (0: it does not bank it): the table
        maximum for each other seated player (what the banker may owe at most)."""
        snap = self.snapshot or {}
        if snap.get("banker_seat") is None or snap.get("banker_seat") != self.seat:
            return 0
        top = max_bet if max_bet is not None else min(self.t.limits.max_bet, int(snap.get("max_bet") or self.t.limits.max_bet))
        others = sum(1 for s in snap.get("seats", []) if isinstance(s, Mapping) and s.get("station")
                     and s.get("seat") != self.seat)
        return top * max(others, 1)

    def _send(self, bet: Mapping[str, Any]) -> None:
        port = self.port
        if port is None:
            return
        try:
            port.send_bet(self._wire(bet))
        except Exception as exc:        # the bet is committed: it goes again when the link is back
            log.warning("table: bet %s not sent now (%s); it is sent again on reconnection", bet["bet_id"], exc)

    def decide(self, seat: int, action: str) -> dict[str, Any]:
        """Answer the controller's decision request for this station's seat."""
        request = self.decision
        if request is None:
            raise TerminalError("no decision is awaited")
        if seat != request.get("seat"):
            raise TerminalError(f"seat {seat} has no decision to make; the table waits for seat {request.get('seat')}")
        actions = list(request.get("actions") or ())
        if action not in actions:
            raise TerminalError(f"{action!r} is not an answer here; answers are {', '.join(map(str, actions))}")
        port = self.port
        if port is None or not self.link_up:
            raise TerminalError("the table link is down: the decision cannot be sent")
        self._decisions_sent += 1
        decision_id = f"{request.get('round_id')}:{seat}:{self._decisions_sent}"
        port.send_decision({"round_id": request.get("round_id"), "seat": seat, "action": action,
                            "decision_id": decision_id})
        self.decision = None
        return self.t.status()

    def automatic_decision(self) -> str | None:
        """Autoplay's answer to the request awaiting: the game's automatic strategy's choice when
        the controller sends it (``auto``, else ``hint``), else the request's default (the station
        does not hold the round's state the game's strategy reads)."""
        request = self.decision
        if request is None:
            return None
        actions = list(request.get("actions") or ())
        choice = next((request[k] for k in ("auto", "hint") if request.get(k) in actions), request.get("default"))
        return str(choice)

    # --- what the screens show --------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """``status()["table"]``: the last snapshot (docs/briefs snapshot) with ``own_seat``,
        ``link`` ("up"/"down"), ``open_bet`` (the bet committed and not settled, or None),
        ``decision`` (the request awaiting this seat, or None) and ``last_result`` (the last
        settled or refused bet as recall shows it, or None)."""
        bets = list(self.t.ledger.table_bets.values())
        open_bet = None if not bets else {**self._wire(bets[0]), "accepted": bets[0]["accepted"],
                                          "held": bets[0]["held"]}
        return {**(self.snapshot or {"table_id": self.table_id, "phase": None}),
                "own_seat": self.seat, "link": "up" if self.link_up else "down",
                "open_bet": open_bet, "decision": self.decision, "last_result": self.last_result}
