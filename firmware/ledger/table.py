"""A live table's bets in a player station's critical memory (issue 24, docs/protocols/table.md).

The table controller decides the round; the station keeps the player's money. Four record kinds,
each with the bet's ``bet_id`` as reference, carry one bet from the stake to the settlement:

* ``table.bet``: committed *before* the bet is sent: the stake (the wagers, the game's reserve for
  stakes a decision may still place, the cover a player-banker holds) leaves the credit meter and
  is held for the table (meter ``table_held``); no coin in yet.
* ``table.accepted``: the controller took the bet into its round: the wagers go into coin in (per
  game and wager, as a round's deal does).
* ``table.refused``: the controller refused it (the window had closed, limits...): the whole
  stake comes back to the credit meter; coin in untouched.
* ``table.result``: the round was settled: what came back goes into coin out, stakes placed by a
  decision (PLAY) into coin in, the unused reserve and cover back to the credits, games played,
  won and lost; the controller's whole round record is kept in the body for recall.

Every answer and result counts once per ``bet_id``: a repeat (the link sends again after a
reconnection, or after a power cut) finds the bet no longer open and changes nothing. The meter
arithmetic is :mod:`firmware.ledger.meters`'s (``_table_deltas``, sharing a round's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from firmware.ledger.errors import LedgerError, LedgerStateError
from firmware.ledger.history import LedgerHistory

KINDS = ("table.bet", "table.accepted", "table.refused", "table.result")
#: the kinds that close a bet (recall lists them)
CLOSING = ("table.refused", "table.result")


def table_bets_after(bets: dict[str, dict[str, Any]], kind: str, body: Mapping[str, Any]) -> None:
    """The open bets (by ``bet_id``) after one ``table.*`` record, updated in place."""
    bet_id = body["bet_id"]
    if kind == "table.bet":
        bets[bet_id] = {**body, "accepted": False}
    elif kind == "table.accepted" and bet_id in bets:
        bets[bet_id] = {**bets[bet_id], "accepted": True, "round_id": body["round_id"]}
    elif kind in CLOSING:
        bets.pop(bet_id, None)


def _credits(name: str, value: Any, *, positive: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        raise LedgerError(f"{name} must be a {'positive' if positive else 'non-negative'} whole number "
                          f"of credits, not {value!r}")
    return value


def _wagers(name: str, wagers: Any) -> dict[str, int]:
    if not isinstance(wagers, Mapping) or not wagers:
        raise LedgerError(f"{name} are {{name: credits}}, not {wagers!r}")
    return {str(n): _credits(f"{name}[{n}]", a) for n, a in wagers.items()}


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise LedgerError(f"a table bet needs a {name}, not {value!r}")
    return value


class TableBook(LedgerHistory):
    """The station's table bets, as the :class:`~firmware.ledger.ledger.Ledger` commits them (it
    inherits this; ``_commit`` and the state are the ledger's)."""

    table_bets: dict[str, dict[str, Any]]
    meters: dict[str, int]

    if TYPE_CHECKING:
        def _commit(self, kind: str, ref: str | None, body: dict[str, Any]) -> None: ...

    def table_bet(self, bet_id: str, round_id: str, seat: int, game: str, wagers: Mapping[str, int], *,
                  reserve: int = 0, cover: int = 0) -> dict[str, Any]:
        """Commit ``table.bet``: ``wagers + reserve + cover`` credits leave the credit meter, held
        for the table; returns the record's body. A ``bet_id`` is used once, ever."""
        bet_id = _text("bet_id", bet_id)
        round_id = _text("round_id", round_id)
        game = _text("game", game)
        # A player banker's bet may be its cover alone (its bank: docs/protocols/table.md).
        clean = {} if cover and isinstance(wagers, Mapping) and not wagers else _wagers("the wagers", wagers)
        if isinstance(seat, bool) or not isinstance(seat, int) or seat < 1:
            raise LedgerError(f"a seat is a number from 1, not {seat!r}")
        _credits("reserve", reserve)
        _credits("cover", cover)
        if self.open_round is not None:
            raise LedgerStateError(f"round {self.open_round.round_id} is still open")
        if bet_id in self.table_bets or self.records_for(bet_id):
            raise LedgerStateError(f"table bet {bet_id} was already made")
        held = sum(clean.values()) + reserve + cover
        if held <= 0:
            raise LedgerError("a table bet stakes at least one credit")
        body = {"bet_id": bet_id, "round_id": round_id, "seat": seat, "game": game, "wagers": clean,
                "reserve": reserve, "cover": cover, "held": held, "denom_cents": self.denom_cents,
                "credits_before": self.meters.get("credits", 0)}
        self._commit("table.bet", bet_id, body)
        return body

    def table_answer(self, bet_id: str, accepted: bool, round_id: str | None = None, reason: str = "") -> bool:
        """Commit the controller's answer to a bet (``table.accepted`` or ``table.refused``, the
        stake back); False, and nothing changes, for a bet already answered or not open."""
        bet = self.table_bets.get(bet_id)
        if bet is None or bet["accepted"]:
            return False
        base = {k: bet[k] for k in ("bet_id", "seat", "game", "wagers", "held", "denom_cents", "credits_before")}
        if accepted:
            self._commit("table.accepted", bet_id, {**base, "round_id": _text("round_id", round_id or bet["round_id"])})
        else:
            self._commit("table.refused", bet_id, {**base, "round_id": round_id or bet["round_id"],
                                                   "reason": str(reason or "refused")})
        return True

    def table_result(self, bet_id: str, round_id: str, stakes: Mapping[str, int],
                     results: Mapping[str, Mapping[str, Any]], record: Mapping[str, Any] | None) -> bool:
        """Commit ``table.result`` (a bet not yet answered is accepted first: the result proves it);
        False, and nothing changes, for a bet already settled or not open. A result that does not
        fit the bet (another round, a wager missing, more staked than held) is refused."""
        bet = self.table_bets.get(bet_id)
        if bet is None:
            return False
        if bet["accepted"] and round_id != bet["round_id"]:
            raise LedgerStateError(f"table bet {bet_id} is in round {bet['round_id']}, not {round_id!r}")
        clean_stakes = _wagers("the stakes", stakes)
        if not isinstance(results, Mapping):
            raise LedgerError(f"the results are {{name: {{outcome, net}}}}, not {results!r}")
        clean_results: dict[str, dict[str, Any]] = {}
        for name in clean_stakes:
            result = results.get(name)
            net = result.get("net") if isinstance(result, Mapping) else None
            if isinstance(net, bool) or not isinstance(net, int):
                raise LedgerError(f"table bet {bet_id}: the result of {name!r} has no net in credits: {result!r}")
            clean_results[name] = dict(result)  # type: ignore[arg-type]
        missing = set(bet["wagers"]) - set(clean_stakes)
        extra = sum(clean_stakes.values()) - sum(bet["wagers"].values())
        if missing or extra > bet["held"] - sum(bet["wagers"].values()):
            raise LedgerStateError(f"table bet {bet_id}: the result's stakes {clean_stakes} do not fit the "
                                   f"bet's wagers {bet['wagers']} and the {bet['held']} credits held")
        if not bet["accepted"]:
            self.table_answer(bet_id, True, round_id)
        self._commit("table.result", bet_id, {
            "bet_id": bet_id, "round_id": round_id, "seat": bet["seat"], "game": bet["game"],
            "wagers": bet["wagers"], "held": bet["held"], "denom_cents": bet["denom_cents"],
            "credits_before": bet["credits_before"], "stakes": clean_stakes, "results": clean_results,
            "record": dict(record or {})})
        return True


def recall_entry(kind: str, time: str | None, body: Mapping[str, Any]) -> dict[str, Any]:
    """One table round as ``egm recall`` lists it: the controller's record (its seats, this
    station's marked ``own``) with this station's bet (``table``), net and credits before/after;
    a refused bet shows as ``refused`` with its reason; an open one as ``in_progress``."""
    denom = body["denom_cents"]
    seat = body["seat"]
    wagered = sum(body["wagers"].values())
    before = body["credits_before"] // denom
    table: dict[str, Any] = {"bet_id": body["bet_id"], "seat": seat, "wagers": body["wagers"],
                             "held": body["held"]}
    if kind in ("table.bet", "table.accepted"):
        return {"round_id": body["round_id"], "game": body["game"], "status": "in_progress",
                "wagers": {str(seat): body["wagers"]}, "cards_dealt": [], "own_seat": seat,
                "table": {**table, "accepted": bool(body.get("accepted"))}, "credits_before": before}
    if kind == "table.refused":
        return {"round_id": body["round_id"], "game": body["game"], "time": time, "status": "refused",
                "own_seat": seat, "net": 0, "table": {**table, "reason": body["reason"]},
                "credits_before": before, "credits_after": before}
    record = dict(body["record"])
    record["seats"] = [{**s, "own": s.get("seat") == seat} for s in record.get("seats", [])
                       if isinstance(s, Mapping)]
    stakes, results = body["stakes"], body["results"]
    returned = sum(a + results[n]["net"] for n, a in stakes.items())
    staked = sum(stakes.values())
    record.update({
        "round_id": body["round_id"], "game": body["game"], "time": time, "status": "complete",
        "own_seat": seat, "table_net": record.get("net"), "net": returned - staked,
        "table": {**table, "stakes": stakes, "results": results},
        "credits_before": before, "credits_after": before - wagered - (staked - wagered) + returned,
    })
    return record
