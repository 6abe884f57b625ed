"""A station's table view: the live table from a player's terminal.

The app (``firmware.ui.app``) draws it instead of the game's own table while the terminal's
``status()`` has a ``"table"`` entry (the table's snapshot, the station's ``own_seat`` and its
``link``). Every seat 1-7 is shown with its station, bets, cards as dealt, the hand's label and its
result; the own seat framed in the accent colour with YOU; the dealer's cards; the phase and the
betting window's time left; the war pool's contest. The player's controls are the terminal's own
(the chips, the own seat's wager areas, CLEAR / REPEAT / DEAL: DEAL places the bet in the open
window, ``terminal.play``), and PLAY / FOLD (the game's decision buttons) when the controller waits
for the own seat (``terminal.decide``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip
from firmware.ui.builders import overlay_detail_for, overlay_for
from firmware.ui.games.base import GameUi, paid_shown, result_view, stakes_of
from firmware.ui.layout import Rect, row
from firmware.ui.livetable.draw import draw_dealer, draw_messages, draw_phase, draw_pool, draw_seats
from firmware.ui.livetable.model import LiveTableView, live_table
from firmware.ui.messages import text
from firmware.ui.money import group
from firmware.ui.painter import Painter
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import BetAreaView, ChromeView, TableView
from firmware.ui.widgets import draw_banner, draw_bet_area


@dataclass(frozen=True, slots=True)
class StationFelt:
    table: LiveTableView
    bets_title: str                          #: YOUR BETS - SEAT 3 (or waiting for a seat)
    areas: tuple[BetAreaView, ...]           #: the own seat's wager areas


def own_entry(table: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The snapshot's entry of the station's own seat (None before it has one)."""
    own = table.get("own_seat")
    seats: list[Mapping[str, Any]] = list(table.get("seats", ()))
    return next((s for s in seats if own is not None and int(s["seat"]) == int(own)), None)


def table_betting(table: Mapping[str, Any]) -> bool:
    """Whether the player may place a bet now: the window is open, the link is up, the station has
    a seat and no bet in this round yet."""
    own = own_entry(table)
    return (table.get("phase") == "betting" and table.get("link") == "up" and own is not None
            and not own.get("bet"))


def own_requests(status: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The decisions the controller waits for from the own seat: the table entry's ``decision``
    (the controller's request: ``seat``, ``actions``...) while that seat is ``deciding``."""
    table = status.get("table") or {}
    own = own_entry(table)
    request = table.get("decision")
    if own is None or not own.get("deciding") or not isinstance(request, Mapping):
        return []
    return [request] if int(request.get("seat", -1)) == int(own["seat"]) else []


def wagers_offered(gui: GameUi[Any, Any]) -> list[str]:
    """The game's wager areas of one seat, in its drawing order."""
    return list(dict.fromkeys(wager for _, wager in gui.bet_areas()))


def bet_areas(gui: GameUi[Any, Any], table: Mapping[str, Any], slip: BetSlip, betting: bool) -> tuple[BetAreaView, ...]:
    """The own seat's wager areas: the slip's chips while betting, then the bet the table accepted
    with each wager's result once the round is settled (the record's)."""
    own = own_entry(table)
    if own is None:
        return ()
    seat = int(own["seat"])
    accepted = own.get("bet") or {}
    doc = next((s for s in (table.get("record") or {}).get("seats", ()) if int(s["seat"]) == seat), None)
    results = (doc or {}).get("results", {})
    stakes = stakes_of(doc) if doc is not None else {}
    out = []
    for wager in wagers_offered(gui):
        amount = slip.amount(seat, wager) if betting else int(accepted.get(wager, 0))
        result = result_view(results[wager], int(stakes.get(wager, 0))) if wager in results else None
        out.append(BetAreaView(seat, wager, gui.area_label(wager), amount, gui.ctx.money.credits(amount) if amount else "",
                               result, enabled=betting))
    return tuple(out)


def station_view(gui: GameUi[Any, Any], status: Mapping[str, Any], slip: BetSlip, *, betting: bool,
                 message: str = "") -> TableView:
    """The station's table view of ``status["table"]``; ``betting``: the player may place chips."""
    table = status["table"]
    own = table.get("own_seat")
    view = live_table(table, game_name=gui.name, label=gui.area_label, money=gui.ctx.money,
                      own_seat=None if own is None else int(own), link=table.get("link"))
    areas = bet_areas(gui, table, slip, betting)
    credits = int(status.get("credits", 0))
    bet = slip.total if betting else sum(a.amount for a in areas)
    decisions = tuple(b for request in own_requests(status) for b in gui.decision_buttons(request))
    if not message:
        message = view.link if view.link_down else (view.messages[0] if view.messages else view.clock)
    state = status.get("state", "IDLE")
    chrome = gui.chrome(
        credits=credits, bet=bet, win=paid_shown(areas), chip=slip.chip, betting=betting, extra=decisions,
        can_deal=bool(slip.wagers) or bool(slip.last), can_repeat=bool(slip.last), can_clear=bool(slip.wagers),
        can_cash_out=int(status.get("credits_cents", credits)) > 0 and state in ("IDLE", "DISABLED")
        and not status.get("printing"),
        message=message, overlay=overlay_for(status, gui), overlay_detail=overlay_detail_for(status))
    chrome = replace(chrome, title=view.title, subtitle="   ".join((view.subtitle, chrome.subtitle)),
                     top=tuple(b for b in chrome.top if b.name != "button.games"))
    title = text("tbl.your_bets", n=own) if own is not None else text("tbl.no_seat")
    return TableView(chrome, StationFelt(view, title, areas))


class StationScreen(TableScreen):
    """The live table on a station: the shared chrome (meters, chips, DEAL...) around it."""

    name: ClassVar[str] = "table"

    PHASE = Rect(24, 84, 560, 150)
    LINK = Rect(1336, 84, 560, 60)
    SEATED = Rect(1336, 150, 560, 30)
    DEALER = Rect(700, 80, 520, 204)
    SEATS = Rect(24, 290, 1872, 384)
    BETS = Rect(24, 684, 900, 188)
    POOL = Rect(944, 684, 952, 188)
    DEALER_CARD_H = 124
    SEAT_CARD_H = 104

    def draw_felt(self, p: Painter, felt: StationFelt, chrome: ChromeView) -> None:
        view = felt.table
        draw_phase(p, self.PHASE, view)
        draw_link(p, self.LINK, view)
        p.text(view.seated, self.SEATED, theme.SMALL, theme.TEXT_DIM, align="right")
        draw_dealer(p, self.DEALER, view, card_h=self.DEALER_CARD_H)
        draw_seats(p, self.SEATS, view.seats, card_h=self.SEAT_CARD_H)
        draw_own_bets(p, self.BETS, felt.bets_title, felt.areas)
        if view.pool is not None:
            draw_pool(p, self.POOL, view.pool)
        else:
            draw_messages(p, self.POOL, view.messages[1:])
        if view.link_down:
            draw_banner(p, view.link, self.BANNER)


def draw_link(p: Painter, r: Rect, view: LiveTableView) -> None:
    """The link to the table: quiet while it is up, the accent colour when it is down."""
    p.region("link", r)
    p.rect(r, theme.ACCENT if view.link_down else theme.PANEL, radius=12)
    p.text(view.link, r.inset(12, 4), theme.BODY, theme.TEXT_DARK if view.link_down else theme.TEXT_DIM)


def draw_own_bets(p: Painter, r: Rect, title: str, areas: Sequence[BetAreaView]) -> None:
    p.region("bets", r)
    p.rect(r, theme.FELT_DARK, radius=16)
    p.text(title, Rect(r.x + 16, r.y + 6, r.w - 32, 34), theme.LABEL, theme.FELT_LINE, align="left")
    boxes = row(Rect(r.x + 12, r.y + 46, r.w - 24, r.h - 58), len(areas), 200, 12)
    for box, area in zip(boxes, areas, strict=True):
        action = UiAction("bet", (area.seat, area.wager)) if area.enabled else None
        draw_bet_area(p, box, area, action, chip_label=group(area.amount) if area.amount else "")
