"""A table snapshot as view models: the seats, the dealer, the phase, the clock, the link.

:func:`live_table` reads the snapshot (docs/ui.md, "A live table": the controller's document, and a
station's ``own_seat`` and ``link``) and nothing else; every string it puts in a view is catalogue
text, every amount integer credits. The war pool's panel comes from :func:`~.pool.pool_view`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from firmware.ui.games.base import result_view
from firmware.ui.livetable.pool import PoolView, pool_view
from firmware.ui.messages import key, text
from firmware.ui.money import Money, group
from firmware.ui.view import CardView, HandView, ResultView

#: Catalogue keys of the table's phases (the snapshot's ``phase``).
PHASES: dict[str, str] = {
    "closed": key("tbl.phase.closed"), "betting": key("tbl.phase.betting"), "dealing": key("tbl.phase.dealing"),
    "decisions": key("tbl.phase.decisions"), "showdown": key("tbl.phase.showdown"),
    "settled": key("tbl.phase.settled"), "misdeal": key("tbl.phase.misdeal"), "paused": key("tbl.phase.paused"),
}
#: ... and of where the cards come from (``source``).
SOURCES: dict[str, str] = {
    "rng": key("tbl.source_rng"), "physical": key("tbl.source_physical"), "stacked": key("tbl.source_stacked"),
}


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    label: str                      #: SEAT 3
    station: str                    #: the station's name, or "Open seat"
    taken: bool                     #: a station sits here
    online: bool
    own: bool                       #: the station's own seat (highlighted)
    bets: tuple[str, ...]           #: "BAC 10", "WAR 10"... ("No bet" when none)
    hand: HandView                  #: its cards and the game's label of the hand
    result: ResultView | None       #: once settled
    status: str = ""                #: DECIDING, OFFLINE


@dataclass(frozen=True, slots=True)
class LiveTableView:
    title: str                      #: the game and the table
    subtitle: str                   #: the round, the dealer (live or RNG)
    phase: str                      #: the phase's words
    phase_id: str                   #: the snapshot's phase
    clock: str                      #: "Bets close in 4 s", "Decide within 12 s" or ""
    seats: tuple[SeatView, ...]
    dealer: HandView
    pool: PoolView | None
    messages: tuple[str, ...]
    prompt: str                     #: what the live dealer must do next ("" when nothing)
    link: str = ""                  #: a station's link state ("" on the dealer's screen)
    link_down: bool = False
    seated: str = ""                #: "5 of 7 seats taken"


def seconds_left(value: Any) -> int | None:
    """Whole seconds left of a clock in the snapshot (rounded up: 0.2 s left is "1 s")."""
    if value is None:
        return None
    return max(0, math.ceil(float(value)))


def clock_text(snapshot: Mapping[str, Any]) -> str:
    phase = snapshot.get("phase")
    if phase == "betting":
        left = seconds_left(snapshot.get("betting_left_s"))
        return "" if left is None else text("tbl.betting_left", seconds=left)
    if phase == "decisions":
        left = seconds_left(snapshot.get("decision_left_s"))
        return "" if left is None else text("tbl.decision_left", seconds=left)
    return ""


def split_cards(cards: Sequence[str], doc: Mapping[str, Any] | None) -> tuple[tuple[CardView, ...],
                                                                               tuple[CardView, ...]]:
    """A hand's cards as dealt so far; once the record has it, its war cards apart (after a gap,
    outlined) as the game's own table shows them."""
    initial = len(doc.get("cards", ())) if doc is not None and doc.get("war_cards") else len(cards)
    return (tuple(CardView(c) for c in cards[:initial]),
            tuple(CardView(c, outline=True) for c in cards[initial:]))


def bet_lines(bet: Mapping[str, int] | None, label: Any) -> tuple[str, ...]:
    """A seat's wagers as ``"BAC 10"`` items (``label(wager)``: the game's name of the area)."""
    if not bet:
        return (text("tbl.no_bet"),)
    return tuple(text("tbl.bet_item", wager=label(name), amount=group(int(amount)))
                 for name, amount in bet.items() if int(amount))


def seat_view(seat: Mapping[str, Any], own_seat: int | None, doc: Mapping[str, Any] | None, label: Any) -> SeatView:
    n = int(seat["seat"])
    station = seat.get("station")
    bet = seat.get("bet")
    own = own_seat is not None and n == own_seat
    cards, extra = split_cards(list(seat.get("cards") or ()), doc)
    hand = HandView(f"seat.{n}.hand", "", cards, extra, str(seat.get("hand") or ""), highlight=own)
    result = seat.get("result")
    stake = sum(int(v) for v in (bet or {}).values())
    status = ""
    if seat.get("deciding"):
        status = text("tbl.deciding")
    elif station and not seat.get("online", True):
        status = text("tbl.offline")
    return SeatView(n, text("tbl.seat", n=n), str(station) if station else text("tbl.seat_open"), bool(station),
                    bool(seat.get("online", True)), own, bet_lines(bet, label),
                    hand, result_view(result, stake) if result else None, status)


def live_table(snapshot: Mapping[str, Any], *, game_name: str, label: Any, money: Money,
               own_seat: int | None = None, link: str | None = None) -> LiveTableView:
    """The snapshot as the table's view; ``label(wager)``: the game's name of a wager area."""
    record = snapshot.get("record") or None
    docs = {int(s["seat"]): s for s in (record or {}).get("seats", ())}
    seats = tuple(seat_view(s, own_seat, docs.get(int(s["seat"])), label) for s in snapshot.get("seats", ()))
    dealer = snapshot.get("dealer") or {}
    d_cards, d_extra = split_cards(list(dealer.get("cards") or ()), (record or {}).get("dealer"))
    dealer_hand = HandView("dealer", text("tbl.dealer_label"), d_cards, d_extra, str(dealer.get("hand") or ""))
    round_id = snapshot.get("round_id")
    source = SOURCES.get(str(snapshot.get("source")))
    subtitle = "   ".join(part for part in (
        text("tbl.round", round=round_id) if round_id else text("tbl.no_round"),
        text(source) if source else "") if part)
    phase = str(snapshot.get("phase", "closed"))
    taken = sum(1 for s in seats if s.taken)
    return LiveTableView(
        title=text("tbl.title", game=game_name, table=snapshot.get("table_id", "")),
        subtitle=subtitle, phase=text(PHASES[phase]) if phase in PHASES else phase.upper(), phase_id=phase,
        clock=clock_text(snapshot), seats=seats, dealer=dealer_hand,
        pool=pool_view(snapshot, record, money),
        messages=tuple(str(m) for m in snapshot.get("messages") or ()),
        prompt=str(snapshot.get("dealer_prompt") or ""),
        link="" if link is None else text("tbl.link_up") if link == "up" else text("tbl.link_down"),
        link_down=link == "down", seated=text("tbl.stations", n=taken, seats=len(seats)))
