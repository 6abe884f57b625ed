"""A station's rounds for the link's tests: a fake ``TableEvents`` that keeps its bets like a
terminal would (committed before sending, open until answered or settled) and bets in every window."""

from __future__ import annotations

import threading
from typing import Any

from firmware.cabinet.table_port import TableEvents, TablePort


class FakeRounds(TableEvents):
    def __init__(self, name: str, wagers: dict[str, int] | None = None, game: str = "baccarat-war") -> None:
        self.name = name
        self.wagers = wagers or {"bac": 5, "war": 5}
        self.game = game
        self.port: TablePort | None = None
        self.open: dict[str, dict[str, Any]] = {}
        self.answers: list[dict[str, Any]] = []
        self.results: dict[str, dict[str, Any]] = {}
        self.snapshots: list[dict[str, Any]] = []
        self.links: list[tuple[bool, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.bet_rounds: set[str] = set()
        self.changed = threading.Condition()
        self.betting = True

    def wait(self, check: Any, timeout: float = 60.0) -> bool:
        with self.changed:
            return self.changed.wait_for(check, timeout)

    def _tell(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def table_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshots.append(snapshot)
        round_id = snapshot["round_id"]
        if self.betting and snapshot["phase"] == "betting" and round_id not in self.bet_rounds and self.port:
            self.bet_rounds.add(round_id)
            bet = {"bet_id": f"{self.name}-{round_id}", "round_id": round_id, "seat": 0, "game": self.game,
                   "wagers": dict(self.wagers), "cover": 0}
            self.open[bet["bet_id"]] = bet
            self.port.send_bet(bet)
        self._tell()

    def bet_answered(self, answer: dict[str, Any]) -> None:
        self.answers.append(answer)
        if not answer["accepted"]:
            self.open.pop(answer["bet_id"], None)
        self._tell()

    def decision_requested(self, request: dict[str, Any]) -> None:
        self.requests.append(request)
        self._tell()

    def round_result(self, result: dict[str, Any]) -> None:
        if result["bet_id"] in self.open:
            del self.open[result["bet_id"]]
            self.results[result["bet_id"]] = result
        self._tell()

    def open_bets(self) -> list[dict[str, Any]]:
        return list(self.open.values())

    def link_state(self, up: bool, detail: str) -> None:
        self.links.append((up, detail))
        self._tell()

    def staked(self) -> int:
        return sum(sum(r["stakes"].values()) for r in self.results.values())

    def returned(self) -> int:
        return sum(r["stakes"][n] + r["results"][n]["net"] for r in self.results.values() for n in r["stakes"])


class RecordingPort(TablePort):
    """A station's table link that records the bets sent (a terminal's side without a controller)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def send_bet(self, bet: dict[str, Any]) -> None:
        self.sent.append(bet)

    def send_decision(self, decision: dict[str, Any]) -> None:
        return None

    def connected(self) -> bool:
        return True
