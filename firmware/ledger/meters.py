"""Meters: how each log record moves them. One pure function serves both the live update and the
start-up verification, which recomputes every meter from the log and compares.

All meters are integer cents (the credit meter included; ``credits`` in `egm meters` is cents, as
CONTRACTS.md says). Stored values are exact; reports roll them over like 10-digit counters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ROLLOVER = 10**10

#: The meters every report lists, with the contract's names.
CONTRACT_METERS: tuple[str, ...] = (
    "coin_in", "coin_out", "jackpot", "handpay_cancelled_credits", "bills_in", "ticket_in",
    "ticket_out", "transfers_in", "transfers_out", "games_played", "games_won", "games_lost",
    "door_open", "power_reset",
)

#: Further meters kept (GLI-11 lists): split ticket meters, per-door opens, games since events.
EXTRA_METERS: tuple[str, ...] = (
    "ticket_in_cashable", "ticket_in_noncashable", "ticket_out_cashable", "ticket_out_noncashable",
    "door_open.main", "door_open.cash_box", "door_open.logic", "games_since_power_up",
    "games_since_door_close", "credits",
)

#: Credits (in cents) taken off the credit meter for bets at a live table and not yet counted in
#: coin in or given back (the stake of a bet not yet answered, the reserve of a round not yet
#: settled); kept out of the reports, it closes the accounting identity while a table bet is open.
TABLE_HELD = "table_held"

#: Meters that reset on an event by definition (they count "since" something).
RESETTABLE = frozenset({"games_since_power_up", "games_since_door_close"})

DOORS = ("main", "cash_box", "logic")


def deltas(kind: str, body: Mapping[str, Any]) -> dict[str, int]:
    """The meter changes one log record makes (cents; counts for games and doors).

    A resettable meter is reset by the value ``-current`` — see :func:`apply` — so this function
    marks it with ``None`` semantics through the special key prefix ``reset:``.
    """
    d: dict[str, int] = {}
    if kind == "bill":
        cents = body["cents"]
        d["bills_in"] = cents
        d[f"bills_in_by_denom.{body['denom_cents']}"] = 1
        d["credits"] = cents
    elif kind == "ticket_in":
        cents = body["cents"]
        d["ticket_in"] = cents
        d["ticket_in_cashable" if body.get("cashable", True) else "ticket_in_noncashable"] = cents
        d["credits"] = cents
    elif kind == "ticket_out":
        cents = body["cents"]
        d["ticket_out"] = cents
        d["ticket_out_cashable" if body.get("cashable", True) else "ticket_out_noncashable"] = cents
        d["credits"] = -cents
    elif kind == "handpay":
        cents = body["cents"]
        d["handpay_cancelled_credits"] = cents
        d["credits"] = -cents
    elif kind == "transfer_in":
        d["transfers_in"] = body["cents"]
        d["credits"] = body["cents"]
    elif kind == "transfer_out":
        d["transfers_out"] = body["cents"]
        d["credits"] = -body["cents"]
    elif kind == "voucher":
        pass                     # a voucher's state change: meter-neutral (ticket_out/in move money)
    elif kind.startswith("round."):
        d.update(_round_deltas(body))
    elif kind.startswith("table."):
        d.update(_table_deltas(kind, body))
    elif kind == "event":
        event = body["event"]
        if event == "power_up":
            d["power_reset"] = 1
            d["reset:games_since_power_up"] = 0
        elif event == "door_open":
            d["door_open"] = 1
            d[f"door_open.{body['door']}"] = 1
        elif event == "door_close":
            d["reset:games_since_door_close"] = 0
    return d


def _round_deltas(body: Mapping[str, Any]) -> dict[str, int]:
    """A round transition: stakes leave the credit meter on ``deal``; returns come back on
    ``complete`` (with any stake placed by a decision, such as PLAY, taken at the same time).
    Coin in and out are also kept per game and per wager, games played, won and lost per game
    (``coin_in.GAME``, ``games_played.GAME``...: SAS reads them per game number).

    A live table's controller journals its rounds with ``table`` in the body: it holds no credits
    (each station keeps its player's), so its rounds move coin in/out and the games meters but not
    ``credits``. The pool's commission (the house's fee) is its own meter, ``pool_commission``."""
    d = _round_money(body)
    if body.get("table"):
        d.pop("credits", None)
    return d


def _round_money(body: Mapping[str, Any]) -> dict[str, int]:
    d: dict[str, int] = {}
    entry = body["entry"]
    denom = body["denom_cents"]
    game = body["game"]
    if entry["trigger"] == "deal":
        stake = _coin_in(d, game, entry["data"]["wagers"], denom)
        d["credits"] = -stake * denom
    elif entry["trigger"] == "complete":
        data = entry["data"]
        returned, extra = _settled(d, game, body["initial_stakes"], data["stakes"], data["results"], denom)
        d["credits"] = (returned - extra) * denom
        if data.get("commission"):
            d["pool_commission"] = data["commission"] * denom
    return d


def _coin_in(d: dict[str, int], game: str, wagers: Mapping[str, Mapping[str, int]], denom: int) -> int:
    """Coin in of the wagers ``{seat: {name: credits}}`` accepted into a round (in total, per game
    and per wager); returns their sum in credits."""
    stake = 0
    for bets in wagers.values():
        for name, amount in bets.items():
            stake += amount
            _add(d, f"coin_in.{game}.{name}", amount * denom)
    d["coin_in"] = stake * denom
    _add(d, f"coin_in.{game}", stake * denom)
    return stake


def _settled(d: dict[str, int], game: str, initial: Mapping[str, Mapping[str, int]],
             stakes: Mapping[str, Mapping[str, int]], results: Mapping[str, Mapping[str, Mapping[str, Any]]],
             denom: int) -> tuple[int, int]:
    """A settled round's meters: stakes added after the deal (``stakes`` above ``initial``) into
    coin in, the returns into coin out, games played/won/lost and the games since; returns
    ``(returned, extra)`` in credits (the credit meter's change is the caller's)."""
    extra = 0
    returned = 0
    for seat, bets in stakes.items():
        for name, amount in bets.items():
            added = amount - initial.get(seat, {}).get(name, 0)
            if added:
                extra += added
                _add(d, f"coin_in.{game}.{name}", added * denom)
            back = amount + results[seat][name]["net"]
            returned += back
            if back:
                _add(d, f"coin_out.{game}.{name}", back * denom)
    if extra:
        d["coin_in"] = extra * denom
        _add(d, f"coin_in.{game}", extra * denom)
    d["coin_out"] = returned * denom
    _add(d, f"coin_out.{game}", returned * denom)
    d["games_played"] = 1
    d[f"games_played.{game}"] = 1
    total_stake = sum(sum(b.values()) for b in stakes.values())
    if returned > total_stake:
        d["games_won"] = 1
        d[f"games_won.{game}"] = 1
    elif returned < total_stake:
        d["games_lost"] = 1
        d[f"games_lost.{game}"] = 1
    d["games_since_power_up"] = 1
    d["games_since_door_close"] = 1
    return returned, extra


def _table_deltas(kind: str, body: Mapping[str, Any]) -> dict[str, int]:
    """A live table's bet (issue 24), on the station: ``table.bet`` holds the stake (the wagers,
    the game's reserve and any cover) off the credit meter in ``table_held``; ``table.accepted``
    counts the wagers into coin in; ``table.refused`` gives the whole stake back; ``table.result``
    settles the seat like a round's ``complete`` (:func:`_settled`) and gives back what the round
    did not use of the reserve and cover."""
    d: dict[str, int] = {}
    denom = body["denom_cents"]
    held = body["held"]
    if kind == "table.bet":
        d["credits"] = -held * denom
        d[TABLE_HELD] = held * denom
    elif kind == "table.accepted":
        stake = _coin_in(d, body["game"], {str(body["seat"]): body["wagers"]}, denom)
        d[TABLE_HELD] = -stake * denom
    elif kind == "table.refused":
        d["credits"] = held * denom
        d[TABLE_HELD] = -held * denom
    elif kind == "table.result":
        seat = str(body["seat"])
        wagered = sum(body["wagers"].values())
        returned, extra = _settled(d, body["game"], {seat: body["wagers"]}, {seat: body["stakes"]},
                                   {seat: body["results"]}, denom)
        d["credits"] = (held - wagered + returned - extra) * denom
        d[TABLE_HELD] = -(held - wagered) * denom
    return d


def _add(d: dict[str, int], key: str, value: int) -> None:
    d[key] = d.get(key, 0) + value


def apply(meters: dict[str, int], changes: Mapping[str, int]) -> list[str]:
    """Apply :func:`deltas` output to ``meters`` in place; return the names that changed."""
    changed = []
    for key, value in changes.items():
        if key.startswith("reset:"):
            name = key[6:]
            if meters.get(name, 0) != 0:
                meters[name] = 0
                changed.append(name)
            continue
        if value:
            meters[key] = meters.get(key, 0) + value
            changed.append(key)
    return changed


def replay(records: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, int]:
    meters: dict[str, int] = {}
    for kind, body in records:
        apply(meters, deltas(kind, body))
    return meters


def rolled(value: int) -> int:
    """A meter as a 10-digit counter shows it."""
    return value % ROLLOVER


def report(meters: Mapping[str, int]) -> dict[str, Any]:
    """The ``egm meters`` document's ``meters`` object (CONTRACTS.md), rolled over for display."""
    out: dict[str, Any] = {name: rolled(meters.get(name, 0)) for name in CONTRACT_METERS}
    out["bills_in_by_denom"] = {
        k.split(".", 1)[1]: v for k, v in sorted(meters.items()) if k.startswith("bills_in_by_denom.")
    }
    for name in EXTRA_METERS:
        if name != "credits":
            out[name] = rolled(meters.get(name, 0))
    per_game: dict[str, dict[str, Any]] = {}
    for key, value in sorted(meters.items()):
        parts = key.split(".")
        if parts[0] in ("coin_in", "coin_out") and len(parts) >= 2:
            game = per_game.setdefault(parts[1], {"coin_in": 0, "coin_out": 0, "wagers": {}})
            if len(parts) == 2:
                game[parts[0]] = rolled(value)
            else:
                game["wagers"].setdefault(parts[2], {"coin_in": 0, "coin_out": 0})[parts[0]] = rolled(value)
    out["games"] = per_game
    if "pool_commission" in meters:       # a table controller's ledger: the house's war-pool fee
        out["pool_commission"] = rolled(meters["pool_commission"])
    return out
