"""A bet at the table: its answer (accepted into the open window, or refused with the reason: the
window closed, the seat, the game, the round, the limits) and what the controller keeps of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from firmware.games.errors import WagerError
from firmware.games.player_banker import check_bet_role, counterpart, seat_wagers
from firmware.kernel.limits import validate_wagers
from firmware.table.errors import TableError
from firmware.table.phases import TablePhase
from firmware.table.protocol import check_wagers

if TYPE_CHECKING:
    from firmware.table.controller import TableController


@dataclass
class Bet:
    bet_id: str
    station: str
    seat: int
    round_id: str
    wagers: dict[str, int]
    cover: int = 0

    @classmethod
    def of(cls, answer: dict[str, Any]) -> Bet:
        """The bet an accepted answer (its record) holds."""
        return cls(answer["bet_id"], answer["station"], answer["seat"], answer["round_id"], dict(answer["wagers"]),
                   answer.get("cover", 0))

    def answer(self, accepted: bool, reason: str) -> dict[str, Any]:
        return {"bet_id": self.bet_id, "station": self.station, "seat": self.seat, "round_id": self.round_id,
                "accepted": accepted, "reason": reason, "wagers": self.wagers, "cover": self.cover}


def judge_bet(c: TableController, station: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer to a new bet: accepted into the open window, or refused with the reason."""
    r = c.round
    known = c.stations.get(station)
    seat = known.seat if known is not None else body["seat"]
    bet = Bet(body["bet_id"], station, seat, body["round_id"] or r.round_id or "", {}, body["cover"])

    def refused(reason: str) -> dict[str, Any]:
        return bet.answer(False, reason)

    try:
        bet.wagers = check_wagers(body["wagers"], allow_empty=c.banking and body["cover"] > 0)
    except TableError as exc:
        return refused(str(exc))
    if known is None:
        return refused(f"{station} has not joined the table")
    if body["seat"] not in (0, seat):
        return refused(f"{station} sits at seat {seat}, not {body['seat']}")
    if body["game"] != c.game.id:
        return refused(f"this table plays {c.game.id}, not {body['game']}")
    if c.phase is not TablePhase.BETTING or r.round_id is None:
        return refused("the betting window is closed")
    if body["round_id"] not in (None, r.round_id):
        return refused(f"round {body['round_id']} is not open for bets (round {r.round_id} is)")
    if any(b.seat == seat for b in r.bets.values()):
        return refused(f"seat {seat} already has a bet in round {r.round_id}")
    try:
        if c.banking:
            _check_banked_bet(c, bet)
        else:
            validate_wagers(c.game, c.options, {seat: bet.wagers}, c.limits)
            validate_wagers(c.game, c.options, {**c.wagers(), seat: bet.wagers}, c.round_limits)
    except WagerError as exc:
        return refused(str(exc))
    bet.round_id = r.round_id
    return bet.answer(True, "accepted")


def _check_banked_bet(c: TableController, bet: Bet) -> None:
    """A bet at a player-banked table: it fits its seat's role (banker or player), and the seat's
    wagers pass the game's rules and the limits against a stand-in for the rest of the table (the
    banker's coverage of the whole table is checked before the deal: firmware.table.banker)."""
    banker = c.round.banker_seat
    check_bet_role(bet.seat, banker, bet.wagers, bet.cover)
    assert banker is not None
    mine = seat_wagers(bet.wagers, bet.cover, banker, bet.seat)
    validate_wagers(c.game, c.options,
                    {**counterpart(bet.seat, banker, c.game.max_seats, c.options, c.limits.min_bet), bet.seat: mine},
                    c.limits)
