"""The table snapshot every table screen draws (docs/protocols/table.md, "The snapshot"), built from
the controller's state. Cards appear once they are in critical memory; while the seats decide, a
game with decisions shows no cards (each seat sees its own in its decision request's view)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.games.player_banker import seat_wagers

if TYPE_CHECKING:
    from firmware.table.controller import TableController


def betting_left_s(c: TableController) -> float | None:
    r = c.round
    if c.phase.value != "betting" or r.window_closes_at is None:
        return None
    return max(0.0, r.window_closes_at - c.clock())


def decision_left_s(c: TableController) -> float | None:
    kernel = c.round.kernel
    if c.phase.value != "decisions" or kernel is None or kernel.decisions_deadline is None:
        return None
    return max(0.0, kernel.decisions_deadline - c.clock())


def _hands(c: TableController) -> tuple[dict[int, dict[str, Any]], dict[str, Any]]:
    r, kernel = c.round, c.round.kernel
    doc: dict[str, Any] = {}
    if r.record is not None:
        doc = r.record
    elif kernel is not None and kernel.round is not None and not c.game.has_decisions:
        doc = c.game.record(kernel.round)
    return {int(s["seat"]): s for s in doc.get("seats", [])}, doc.get("dealer") or {}


def seat_result(results: dict[str, Any] | None, decision: str | None = None) -> dict[str, Any] | None:
    """A seat's settled result: its net over every wager, and one outcome for the screens."""
    if not results:
        return None
    net = sum(r["net"] for r in results.values())
    outcomes = {r["outcome"] for r in results.values()}
    if decision == "fold":
        outcome = "fold"
    elif net > 0:
        outcome = "win"
    elif net < 0:
        outcome = "lose"
    else:
        outcome = "void" if outcomes == {"void"} else "push"
    return {"net": net, "outcome": outcome}


def _message(c: TableController) -> str:
    r, phase = c.round, c.phase.value
    if phase == "betting":
        left = betting_left_s(c) or 0.0
        return f"Place your bets: {left:.0f} s left"
    if phase == "dealing":
        return "Dealing"
    if phase == "decisions":
        return "Waiting for the players' decisions"
    if phase == "settled":
        return f"Round {r.round_id} settled"
    if phase == "misdeal":
        return f"Misdeal: {r.misdeal or 'declared by the dealer'}; every wager is returned"
    if phase == "paused":
        return "The table is paused"
    return "Betting is closed"


def _prompt(c: TableController) -> str | None:
    if c.cards.kind != "physical":
        return None
    phase = c.phase.value
    if phase == "dealing":
        return "Deal the cards from the shoe" if c.round.kernel is not None else "Press deal to start dealing"
    if phase in ("settled", "misdeal"):
        return "Collect the cards"
    return None


def build_snapshot(c: TableController) -> dict[str, Any]:
    r = c.round
    seats, dealer = _hands(c)
    pending = {req.seat for req in r.kernel.pending()} if r.kernel is not None else set()
    by_seat = {b.seat: b for b in r.bets.values()}
    at = {s.seat: s for s in c.stations.values()}
    rows = []
    for n in range(1, c.game.max_seats + 1):
        hand, bet, station = seats.get(n, {}), by_seat.get(n), at.get(n)
        rows.append({
            "seat": n,
            "station": station.station if station is not None else None,
            "online": bool(station is not None and station.online),
            "bet": seat_wagers(bet.wagers, bet.cover, r.banker_seat, n) if bet is not None else None,
            "cards": list(hand.get("cards", [])) + list(hand.get("war_cards", [])),
            "hand": hand.get("hand"),
            "result": seat_result(hand.get("results"), hand.get("decision")) if r.record is not None else None,
            "deciding": n in pending,
        })
    return {
        "table_id": c.settings.table_id,
        "game": c.game.id,
        "game_name": c.game.name,
        "source": c.cards.kind,
        "phase": c.phase.value,
        "round_id": r.round_id,
        "round_no": r.round_no,
        "banker_seat": r.banker_seat,
        "betting_left_s": betting_left_s(c),
        "decision_left_s": decision_left_s(c),
        "min_bet": c.limits.min_bet,
        "max_bet": c.limits.max_bet,
        "seats": rows,
        "dealer": {"cards": list(dealer.get("cards", [])) + list(dealer.get("war_cards", [])),
                   "hand": dealer.get("hand")},
        "record": r.record,
        "messages": [_message(c)],
        "dealer_prompt": _prompt(c),
        "betting_closed_ns": r.closed_at_ns,
        "own_seat": None,
        "link": None,
    }
