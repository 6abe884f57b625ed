"""A table controller in-process, for the station's tests (test code, not product).

:class:`FakeTable` is the station's :class:`TablePort` (it records what the station sends) and plays
the controller when the test tells it: it opens a betting window (a snapshot), answers bets, deals a
round through the real :class:`RoundKernel` with the station's seat and other seats, asks the
station's seat for its decision, and sends each seat's result. The station's events object is the
:class:`TableEvents` the terminal gives the link.
"""

from __future__ import annotations

from typing import Any

from firmware.cabinet.table_port import TableEvents, TablePort
from firmware.cards.source import RngShoe
from firmware.games.registry import get_game, make_options
from firmware.kernel.limits import NO_LIMITS
from firmware.kernel.round import RoundKernel
from firmware.rng.service import RngService


class FakeTable(TablePort):
    """One table; ``others``: the other seats' wagers, dealt with the station's in every round."""

    def __init__(self, events: TableEvents, game: str = "baccarat-war", *, seed: int = 5,
                 others: dict[int, dict[str, int]] | None = None, stations: dict[int, str] | None = None) -> None:
        self.events = events
        self.game = get_game(game)
        self.options = make_options(game)
        self.kernel = RoundKernel(self.game, self.options, limits=NO_LIMITS)
        self.rng = RngService.seeded(seed)
        self.others = others if others is not None else {1: {"bac": 10, "war": 10}}
        self.stations = stations or {3: "EGM-0001"}
        self.up = True
        self.sent: list[dict[str, Any]] = []          #: every send_bet, in order
        self.decisions: list[dict[str, Any]] = []     #: every send_decision, in order
        self.round_no = 0
        self.round_id: str | None = None
        self.phase = "closed"
        self.accepted: dict[str, dict[str, Any]] = {}   #: bet_id -> bet, this round
        self.dealt: str | None = None                   #: the round dealt last
        self.auto: str | None = None                    #: the strategy's choice last sent with a request

    # --- TablePort ----------------------------------------------------------------------------
    def send_bet(self, bet: dict[str, Any]) -> None:
        self.sent.append(dict(bet))

    def send_decision(self, decision: dict[str, Any]) -> None:
        self.decisions.append(dict(decision))

    def connected(self) -> bool:
        return self.up

    # --- the controller -------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {"table_id": "TABLE-1", "game": self.game.id, "game_name": self.game.id, "source": "rng",
                "phase": self.phase, "round_id": self.round_id, "round_no": self.round_no,
                "betting_left_s": 5.0 if self.phase == "betting" else None, "decision_left_s": None,
                "min_bet": 1, "max_bet": 500,
                "seats": [{"seat": s, "station": self.stations.get(s), "online": s in self.stations,
                           "bet": None, "cards": [], "hand": None, "result": None, "deciding": False}
                          for s in range(1, 8)],
                "dealer": {"cards": [], "hand": None}, "record": None, "messages": [], "dealer_prompt": None}

    def join(self) -> None:
        self.events.link_state(True, "joined TABLE-1")
        self.events.table_snapshot(self.snapshot())

    def open_window(self) -> str:
        self.round_no += 1
        self.round_id = f"TABLE-1-{self.round_no:06d}"
        self.phase = "betting"
        self.accepted = {}
        self.events.table_snapshot(self.snapshot())
        return self.round_id

    def close_window(self) -> None:
        self.phase = "dealing"
        self.events.table_snapshot(self.snapshot())

    def answer(self, bet: dict[str, Any] | None = None, accepted: bool = True, reason: str = "") -> dict[str, Any]:
        """Answer ``bet`` (default: the last one sent); an accepted bet plays in this round."""
        bet = bet or self.sent[-1]
        answer = {"bet_id": bet["bet_id"], "accepted": accepted, "round_id": bet["round_id"],
                  "reason": "" if accepted else reason}
        if accepted:
            self.accepted[bet["bet_id"]] = bet
        self.events.bet_answered(answer)
        return answer

    def wagers(self) -> dict[int, dict[str, int]]:
        wagers = {s: dict(w) for s, w in self.others.items()}
        for bet in self.accepted.values():
            wagers[bet["seat"]] = dict(bet["wagers"])
        return wagers

    def deal(self) -> list[Any]:
        """Deal the round; ask the station's seat for its decision (the others decide
        automatically); return the requests still open."""
        self.phase = "dealing"
        self.dealt = self.round_id
        source = RngShoe(self.rng, self.game.shoe(self.options))
        pending = self.kernel.begin(self.wagers(), source, round_id=self.round_id)
        own = {b["seat"] for b in self.accepted.values()}
        while pending and pending[0].seat not in own:
            pending = self.kernel.decide(pending[0].seat,
                                         self.game.automatic_decision(self.kernel.round, pending[0]))
        for request in pending:
            if request.seat in own:
                self.phase = "decisions"
                self.events.table_snapshot(self.snapshot())
                self.auto = self.game.automatic_decision(self.kernel.round, request)
                self.events.decision_requested({
                    "round_id": self.round_id, "seat": request.seat, "kind": request.kind,
                    "actions": list(request.actions), "default": request.default, "auto": self.auto,
                    "view": self.kernel.decision_view(request.seat), "time_left_s": 10.0})
                break
        return pending

    def decide_sent(self) -> None:
        """Apply the decisions the station sent, then the others' automatic ones."""
        for decision in self.decisions:
            if decision["round_id"] == self.round_id and any(r.seat == decision["seat"] for r in self.kernel.pending()):
                self.kernel.decide(decision["seat"], decision["action"])
        while self.kernel.pending():
            request = self.kernel.pending()[0]
            self.kernel.decide(request.seat, self.game.automatic_decision(self.kernel.round, request))

    def results(self) -> list[dict[str, Any]]:
        """Each accepted bet's result, from the kernel's settlement (the round must be settled)."""
        settlement = self.kernel.settlement
        assert settlement is not None
        record = self.kernel.record()
        return [{"round_id": self.round_id, "bet_id": bet_id, "seat": bet["seat"],
                 "stakes": dict(settlement.stakes[bet["seat"]]),
                 "results": {n: r.to_json() for n, r in settlement.results[bet["seat"]].items()},
                 "record": record}
                for bet_id, bet in self.accepted.items()]

    def settle(self) -> list[dict[str, Any]]:
        """Play the round out (the station's decisions as sent) and send every result."""
        if self.dealt != self.round_id:
            self.deal()
        self.decide_sent()
        results = self.results()
        self.phase = "settled"
        self.events.table_snapshot(self.snapshot())
        for result in results:
            self.events.round_result(result)
        return results
