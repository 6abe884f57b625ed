"""Service view builders: the menu's state and the service API's answers -> a :class:`ServiceView`.

These functions read only :class:`MenuState` (what the technician chose, what the API answered, the
cabinet's published status) and never call the API: the controller (``firmware.ui.service.menu``
and its parts) asks, the builders show. ``egm screenshot service|recall`` builds a state from
demonstration answers and draws it through the same functions.

What a role sees comes from the API: the menu lists the pages whose action is in the login
answer's ``allowed`` list (the permission table, ``firmware.cabinet.service.ACTIONS``), and each
page shows only the buttons of actions in that list. Amounts are integer cents from the API,
shown in the currency and in credits (``firmware.ui.money.Money``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from firmware.cabinet.service import ROLES
from firmware.ui.games.base import GAME_NAMES, coin_out, result_view
from firmware.ui.games.war import WAGER_LABELS as WAR_WAGER_LABELS
from firmware.ui.games.war import war_scores
from firmware.ui.money import Money, group
from firmware.ui.service.actions import ServiceAction as A
from firmware.ui.service.calibration import CalibrationView
from firmware.ui.service.link import Answer
from firmware.ui.service.options import OptionSpec, flatten, option_specs
from firmware.ui.service.text import mkey, msg
from firmware.ui.service.view import (
    CardGroup,
    KeypadView,
    PanelView,
    RecallHand,
    RoundView,
    RowView,
    ServiceView,
    TableView,
    WagerLine,
)
from firmware.ui.view import ButtonView, ResultView

# --- the menu ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Page:
    page: str                  #: page id (``open`` action argument, region ``menu.<page>``)
    label: str                 #: catalogue key of its menu button
    needs: str                 #: the permission-table action that opens it
    request: tuple[str, ...]   #: what the page asks the API for when opened (empty: nothing)


#: The menu, in order. A role sees a page only if the API lets it use ``needs``.
PAGES: tuple[Page, ...] = (
    Page("meters", mkey("service.page.meters"), "meters", ("meters",)),
    Page("recall", mkey("service.page.recall"), "recall", ("recall", "50")),
    Page("bills", mkey("service.page.bills"), "bills", ("bills", "100")),
    Page("tickets", mkey("service.page.tickets"), "tickets", ("tickets", "100")),
    Page("events", mkey("service.page.events"), "events", ("events", "500")),
    Page("attendant", mkey("service.page.attendant"), "handpay", ()),
    Page("diagnostics", mkey("service.page.diagnostics"), "diagnostics", ("diagnostics",)),
    Page("calibration", mkey("service.page.calibration"), "touch calibrate", ()),
    Page("config", mkey("service.page.config"), "config show", ("config", "show")),
    Page("software", mkey("service.page.software"), "software", ("software",)),
    Page("packages", mkey("service.page.packages"), "packages", ("packages",)),
    Page("ram_clear", mkey("service.page.ram_clear"), "ram-clear", ()),
    Page("demo", mkey("service.page.demo"), "demo start", ()),
)
PAGE_BY_ID: dict[str, Page] = {p.page: p for p in PAGES}

ROLE_LABELS: dict[str, str] = {
    "attendant": mkey("service.role.attendant"), "technician": mkey("service.role.technician"),
    "auditor": mkey("service.role.auditor"), "regulator": mkey("service.role.regulator"),
}
assert set(ROLE_LABELS) == set(ROLES), "a label for every service role"

#: The device tests of the diagnostics page: (region name, catalogue key, words, action needed).
DEVICE_TESTS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("test.note_return", mkey("service.test.note_return"), ("test", "note-return"), "test note-return"),
    ("test.ticket", mkey("service.test.ticket"), ("test", "ticket"), "test ticket"),
    ("test.ticket_print", mkey("service.test.ticket_print"), ("test", "ticket", "print"), "test ticket"),
    ("test.lamps_on", mkey("service.test.lamps_on"), ("test", "lamps", "on"), "test lamps"),
    ("test.lamps_off", mkey("service.test.lamps_off"), ("test", "lamps", "off"), "test lamps"),
    ("test.tower", mkey("service.test.tower"), ("test", "tower", "0", "flash-fast"), "test tower"),
    ("test.tower_off", mkey("service.test.tower_off"), ("test", "tower", "off"), "test tower"),
    ("test.touch", mkey("service.test.touch"), ("test", "touch"), "test touch"),
    ("test.shoe", mkey("service.test.shoe"), ("test", "shoe"), "test shoe"),
    ("test.inputs", mkey("service.test.inputs"), ("test", "meters"), "test meters"),
)

#: Why a RAM clear is done (the reason logged with it).
RAM_CLEAR_REASONS: tuple[str, ...] = (
    mkey("service.ram_clear.reason_repair"), mkey("service.ram_clear.reason_software"),
    mkey("service.ram_clear.reason_lab"),
)

#: The lab's digest algorithms (firmware.cabinet.software.LAB_ALGORITHMS); hmac ones take a seed.
HASH_ALGORITHMS: tuple[str, ...] = ("sha1", "sha256", "hmac-sha1", "hmac-sha256")
HEX_DIGITS = "0123456789ABCDEF"
MAX_PIN = 12
MAX_SEED = 64

#: Meters in cents (shown in the currency and in credits); the others are counts.
MONEY_METERS: tuple[str, ...] = (
    "coin_in", "coin_out", "jackpot", "handpay_cancelled_credits", "bills_in", "ticket_in", "ticket_out",
    "ticket_in_cashable", "ticket_in_noncashable", "ticket_out_cashable", "ticket_out_noncashable",
    "transfers_in", "transfers_out",
)
COUNT_METERS: tuple[str, ...] = (
    "games_played", "games_won", "games_lost", "games_since_power_up", "games_since_door_close",
    "door_open", "door_open.main", "door_open.cash_box", "door_open.logic", "power_reset",
)
METER_LABELS: dict[str, str] = {
    "coin_in": mkey("service.meter.coin_in"), "coin_out": mkey("service.meter.coin_out"),
    "jackpot": mkey("service.meter.jackpot"),
    "handpay_cancelled_credits": mkey("service.meter.handpay_cancelled_credits"),
    "bills_in": mkey("service.meter.bills_in"), "ticket_in": mkey("service.meter.ticket_in"),
    "ticket_out": mkey("service.meter.ticket_out"),
    "ticket_in_cashable": mkey("service.meter.ticket_in_cashable"),
    "ticket_in_noncashable": mkey("service.meter.ticket_in_noncashable"),
    "ticket_out_cashable": mkey("service.meter.ticket_out_cashable"),
    "ticket_out_noncashable": mkey("service.meter.ticket_out_noncashable"),
    "transfers_in": mkey("service.meter.transfers_in"), "transfers_out": mkey("service.meter.transfers_out"),
    "games_played": mkey("service.meter.games_played"), "games_won": mkey("service.meter.games_won"),
    "games_lost": mkey("service.meter.games_lost"),
    "games_since_power_up": mkey("service.meter.games_since_power_up"),
    "games_since_door_close": mkey("service.meter.games_since_door_close"),
    "door_open": mkey("service.meter.door_open"), "door_open.main": mkey("service.meter.door_open_main"),
    "door_open.cash_box": mkey("service.meter.door_open_cash_box"),
    "door_open.logic": mkey("service.meter.door_open_logic"), "power_reset": mkey("service.meter.power_reset"),
}

#: Wager names of the games beyond the war family's (the core catalogue has those).
WAGER_LABELS: dict[str, str] = {
    **WAR_WAGER_LABELS,
    "ante": mkey("service.wager.ante"), "play": mkey("service.wager.play"),
    "pair_plus": mkey("service.wager.pair_plus"), "six_card": mkey("service.wager.six_card"),
    "commission": mkey("service.wager.commission"), "bank": mkey("service.wager.bank"),
    "low": mkey("service.wager.low"), "high": mkey("service.wager.high"),
    "jackpot": mkey("service.wager.jackpot"), "bet": mkey("service.wager.bet"),
    "collection": mkey("service.wager.collection"),
}


# --- the state -----------------------------------------------------------------------------------
@dataclass
class MenuState:
    """Everything the service screens show; the controller changes it, the builders read it."""

    money: Money = field(default_factory=Money)
    status: Mapping[str, Any] = field(default_factory=dict)   #: the terminal's published status
    page: str = "login"            #: login, pin, menu, seed, or a page id of PAGES
    role: str | None = None        #: the role logged in
    allowed: tuple[str, ...] = ()  #: actions the API lets the role use (its login answer)
    pin_role: str | None = None    #: the role whose PIN is being typed
    pin: str = ""
    answers: dict[str, Answer | Refused] = field(default_factory=dict)  #: page id -> the API's answer
    list_page: int = 0             #: the page of a long list
    selected: int = 0              #: the round shown (recall), the row chosen (packages)
    config_game: str | None = None
    option: str | None = None      #: the option being edited (dotted key)
    option_value: str | None = None
    reason: str | None = None      #: catalogue key of the RAM clear's reason (confirming)
    algorithm: str | None = None   #: the hmac algorithm whose seed is being typed
    seed: str = ""
    test: tuple[str, Answer] | None = None  #: the last device test: (region name, answer)
    message: str = ""
    message_tone: str = "normal"   #: normal, good, alert
    busy: bool = False             #: a request is on its way
    calibration: CalibrationView | None = None  #: the calibration screen's view while it runs

    def can(self, action: str) -> bool:
        return action in self.allowed

    def answer(self, page: str) -> Answer | None:
        """The API's answer for ``page`` (None while it is awaited or if it was refused)."""
        answer = self.answers.get(page)
        return None if isinstance(answer, Refused) else answer


@dataclass(frozen=True, slots=True)
class Refused:
    """What the API answered instead of a page's data: its refusal."""

    reason: str


# --- helpers -------------------------------------------------------------------------------------
def button(name: str, label: str, action: A, *, enabled: bool = True, style: str = "normal") -> ButtonView:
    """A core :class:`ButtonView` carrying a service action."""
    return ButtonView(name, label, action, enabled, style)  # type: ignore[arg-type]


def when(stamp: Any) -> str:
    """``2026-11-23T18:26:48.123Z`` -> ``2026-11-23 18:26:48``."""
    if not isinstance(stamp, str) or not stamp:
        return "-"
    return stamp.replace("T", " ")[:19]


def mask_validation(number: Any) -> str:
    """A voucher's validation number with all but its last four digits hidden."""
    digits = "".join(ch for ch in str(number or "") if ch.isdigit())
    if len(digits) <= 4:
        return digits or "-"
    return "*" * (len(digits) - 4) + digits[-4:]


def game_name(game_id: Any) -> str:
    key = GAME_NAMES.get(str(game_id))
    return msg(key) if key else str(game_id)


def wager_label(name: str) -> str:
    key = WAGER_LABELS.get(name)
    return msg(key) if key else name.replace("_", " ").upper()


def role_label(role: str | None) -> str:
    return msg(ROLE_LABELS[role]) if role in ROLE_LABELS else "-"


def money_cells(money: Money, cents: int) -> tuple[str, str]:
    """An amount in cents: in the currency, and in credits (whole credits and any cents over)."""
    credits, over = divmod(int(cents), money.denomination)
    shown = money.credits(credits)
    if over:
        shown = msg("service.meters.credits_and_cents", credits=shown, cents=group(over))
    return money.amount(int(cents)), shown


def detail_lines(doc: Any, *, limit: int = 14, skip: Sequence[str] = ()) -> tuple[str, ...]:
    """An API answer as ``key: value`` lines (nested keys dotted), at most ``limit``."""
    lines: list[str] = []

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, Mapping):
            if not value and prefix:
                lines.append(f"{prefix}: -")
            for k, v in value.items():
                if str(k) in skip:
                    continue
                walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(value, list | tuple) and value and all(isinstance(v, Mapping) for v in value):
            for i, v in enumerate(value):
                walk(v, f"{prefix}[{i}]")
        elif isinstance(value, list | tuple):
            lines.append(f"{prefix}: {', '.join(str(v) for v in value) or '-'}")
        else:
            lines.append(f"{prefix}: {'-' if value is None else value}")

    walk(doc, "")
    if len(lines) > limit:
        lines = lines[:limit - 1] + [msg("service.more_lines", n=len(lines) - limit + 1)]
    return tuple(lines)


def _top(state: MenuState) -> tuple[ButtonView, ...]:
    if state.role is None:
        return ()
    out = []
    if state.page != "menu":
        out.append(button("button.menu", msg("service.button.menu"), A("menu"), style="top"))
    out.append(button("button.logout", msg("service.button.logout"), A("logout"), style="top"))
    return tuple(out)


def _subtitle(state: MenuState) -> str:
    cabinet = str(state.status.get("state") or "-")
    if state.role is None:
        return msg("service.subtitle_out", state=cabinet)
    return msg("service.subtitle_in", role=role_label(state.role), state=cabinet)


def _view(state: MenuState, layout: str, title: str, **parts: Any) -> ServiceView:
    return ServiceView(page=state.page, layout=layout, title=title, subtitle=_subtitle(state),
                       top=_top(state), message=state.message, message_tone=state.message_tone, **parts)


def _loading(state: MenuState, title: str) -> ServiceView:
    """A page whose data has not come (yet), or that the API refused."""
    answer = state.answers.get(state.page)
    if isinstance(answer, Refused):
        panel = PanelView("panel.unavailable", title, (msg("service.unavailable", reason=answer.reason),), "alert")
    else:
        panel = PanelView("panel.loading", title, (msg("service.loading"),), "dim")
    return _view(state, "split", title, panels=(panel,))


# --- the pages -----------------------------------------------------------------------------------
def build(state: MenuState) -> ServiceView:
    """The view of the page the state is on."""
    builder = BUILDERS.get(state.page)
    if builder is None:
        raise ValueError(f"no service page {state.page!r}")
    return builder(state)


def login_view(state: MenuState) -> ServiceView:
    buttons = tuple(button(f"role.{role}", msg(ROLE_LABELS[role]), A("role", role)) for role in ROLES)
    panel = PanelView("panel.login", msg("service.login.choose"), (msg("service.login.explain"),))
    return _view(state, "grid", msg("service.login.title"), panels=(panel,), buttons=buttons)


def _pad(entry: str, *, hexadecimal: bool) -> tuple[ButtonView, ...]:
    digits = HEX_DIGITS if hexadecimal else "123456789"
    keys = [button(f"key.{d}", d, A("digit", d)) for d in digits]
    if not hexadecimal:
        keys += [button("key.erase", msg("service.button.erase"), A("erase"), enabled=bool(entry)),
                 button("key.0", "0", A("digit", "0")),
                 button("key.clear", msg("service.button.clear"), A("clear_entry"), enabled=bool(entry))]
    else:
        keys += [button("key.erase", msg("service.button.erase"), A("erase"), enabled=bool(entry)),
                 button("key.clear", msg("service.button.clear"), A("clear_entry"), enabled=bool(entry))]
    return tuple(keys)


def pin_view(state: MenuState) -> ServiceView:
    role = role_label(state.pin_role)
    entry = "*" * len(state.pin) if state.pin else "-"
    keys = _pad(state.pin, hexadecimal=False)
    pad = KeypadView("keypad", msg("service.login.pin_title", role=role), msg("service.login.pin_prompt"),
                     entry, keys, columns=3)
    buttons = (button("button.cancel", msg("service.button.cancel"), A("cancel")),
               button("button.enter", msg("service.button.enter"), A("enter"),
                      enabled=4 <= len(state.pin) <= MAX_PIN and not state.busy, style="deal"))
    return _view(state, "keypad", msg("service.login.title"), keypad=pad, buttons=buttons)


def menu_view(state: MenuState) -> ServiceView:
    buttons = tuple(button(f"menu.{p.page}", msg(p.label), A("open", p.page))
                    for p in PAGES if state.can(p.needs))
    lines = [msg("service.menu.pages", n=len(buttons))]
    if not buttons:
        lines = [msg("service.menu.nothing")]
    panel = PanelView("panel.menu", msg("service.menu.heading", role=role_label(state.role)), tuple(lines))
    return _view(state, "grid", msg("service.title"), panels=(panel,), buttons=buttons)


def meters_view(state: MenuState) -> ServiceView:
    title = msg("service.page.meters")
    doc = state.answer("meters")
    if doc is None:
        return _loading(state, title)
    meters: Mapping[str, Any] = doc.get("meters", {})
    money = state.money
    rows = [RowView((msg(METER_LABELS[name]), *money_cells(money, int(meters.get(name, 0)))),
                    name=f"meter.{name}") for name in MONEY_METERS]
    rows.append(RowView((msg("service.meter.credits"), *money_cells(money, int(doc.get("credits", 0)))),
                        tone="heading", name="meter.credits"))
    counts = [RowView((msg(METER_LABELS[name]), group(int(meters.get(name, 0)))), name=f"meter.{name}")
              for name in COUNT_METERS]
    for denom, n in sorted(dict(meters.get("bills_in_by_denom", {})).items(), key=lambda kv: int(kv[0])):
        counts.append(RowView((msg("service.meter.notes_of", amount=money.amount(int(denom))), group(int(n))),
                              name=f"meter.notes.{denom}"))
    for game, figures in sorted(dict(meters.get("games", {})).items()):
        for which, key in (("coin_in", mkey("service.meter.game_coin_in")),
                           ("coin_out", mkey("service.meter.game_coin_out"))):
            counts.append(RowView((msg(key, game=game_name(game)), money.amount(int(figures.get(which, 0)))),
                                  name=f"meter.game.{game}.{which}"))
        for wager, split in sorted(dict(figures.get("wagers", {})).items()):
            for which, key in (("coin_in", mkey("service.meter.wager_coin_in")),
                               ("coin_out", mkey("service.meter.wager_coin_out"))):
                counts.append(RowView((msg(key, game=game_name(game), wager=wager_label(wager)),
                                       money.amount(int(split.get(which, 0)))),
                                      tone="dim", name=f"meter.game.{game}.{wager}.{which}"))
    left = TableView("meters.money", msg("service.meters.money"),
                     (msg("service.col.meter"), msg("service.col.amount"), msg("service.col.credits")),
                     tuple(rows), (5, 3, 3), page=state.list_page)
    right = TableView("meters.counts", msg("service.meters.counts"),
                      (msg("service.col.meter"), msg("service.col.count")), tuple(counts), (5, 2),
                      page=state.list_page)
    buttons = (button("button.refresh", msg("service.button.refresh"), A("refresh"), enabled=not state.busy),)
    return _view(state, "columns", title, tables=(left, right), buttons=buttons)


def _result_view(result: Mapping[str, Any], stake: int) -> ResultView | None:
    """The wager's tag as the player saw it (what it paid to the credit meter); None if malformed."""
    try:
        return result_view(result, stake)
    except (KeyError, ValueError, TypeError):
        return None


def _groups(hand: Mapping[str, Any]) -> tuple[CardGroup, ...]:
    """A hand's cards as dealt, split the way its game plays them."""
    out: list[CardGroup] = []
    if hand.get("high") is not None and hand.get("low") is not None:
        out.append(CardGroup(msg("service.recall.high"), tuple(hand["high"])))
        out.append(CardGroup(msg("service.recall.low"), tuple(hand["low"])))
    elif hand.get("front") is not None and hand.get("back") is not None:
        out.append(CardGroup(msg("service.recall.front"), tuple(hand["front"])))
        out.append(CardGroup(msg("service.recall.back"), tuple(hand["back"])))
    else:
        out.append(CardGroup("", tuple(hand.get("cards") or ())))
    if hand.get("war_cards"):
        out.append(CardGroup(msg("service.recall.war_cards"), tuple(hand["war_cards"])))
    return tuple(out)


def _hand_info(hand: Mapping[str, Any]) -> str:
    for key in ("hand", "poker"):
        if hand.get(key):
            return str(hand[key])
    score = hand.get("score")
    return "" if score is None or isinstance(score, str) and len(score) > 40 else str(score)


def _who(who: Any) -> str:
    """A pot's winner: the dealer, or a spot."""
    if who == "dealer" or who == "house":
        return msg("service.recall.dealer")
    return msg("service.recall.seat", seat=who)


def round_view(record: Mapping[str, Any], money: Money) -> RoundView:
    """A recalled round: its hands with their cards, its wagers and their outcomes."""
    title = msg("service.recall.round_title", game=game_name(record.get("game")), time=when(record.get("time")))
    lines = [msg("service.recall.round_id", round_id=str(record.get("round_id", "-")))]
    if record.get("status") == "in_progress":
        lines.append(msg("service.recall.in_progress"))
        dealt = tuple(record.get("cards_dealt") or ())
        wagers = [WagerLine(f"round.wager.{seat}.{name}",
                            msg("service.recall.seat_wager", seat=seat, wager=wager_label(name)),
                            money.credits(int(amount)), None)
                  for seat, bets in sorted(dict(record.get("wagers", {})).items(), key=lambda kv: str(kv[0]))
                  for name, amount in dict(bets).items()]
        hands = (RecallHand("round.dealt", msg("service.recall.dealt"), (CardGroup("", dealt),)),)
        return RoundView(title, tuple(lines), hands, tuple(wagers))
    if "credits_before" in record and "credits_after" in record:
        lines.append(msg("service.recall.credits", before=money.credits(int(record["credits_before"])),
                         after=money.credits(int(record["credits_after"]))))
    if "net" in record:
        lines.append(msg("service.recall.net", net=money.signed(int(record["net"]))))
    if record.get("seats"):
        lines.append(msg("service.recall.win", win=money.credits(coin_out(record))))
    hands: list[RecallHand] = []
    dealer = record.get("dealer")
    if isinstance(dealer, Mapping) and (dealer.get("cards") or dealer.get("high") or dealer.get("front")):
        hands.append(RecallHand("round.dealer", msg("service.recall.dealer"), _groups(dealer), _hand_info(dealer),
                                war_scores(record, dealer)))
    wager_lines: list[WagerLine] = []
    for seat in record.get("seats", []):
        n = seat.get("seat")
        hands.append(RecallHand(f"round.seat.{n}", msg("service.recall.seat", seat=n), _groups(seat),
                                _hand_info(seat), war_scores(record, seat)))
        results = seat.get("results", {})
        stakes = seat.get("stakes") or seat.get("wagers") or {}
        for name in list(stakes) + [r for r in results if r not in stakes]:
            result = results.get(name)
            wager_lines.append(WagerLine(
                f"round.wager.{n}.{name}", msg("service.recall.seat_wager", seat=n, wager=wager_label(name)),
                money.credits(int(stakes.get(name, 0))),
                _result_view(result, int(stakes.get(name, 0))) if isinstance(result, Mapping) else None))
    pool = record.get("war_pool") or record.get("jackpot")
    if isinstance(pool, Mapping) and pool.get("pot"):
        winners = pool.get("winners") if "winners" in pool else [pool.get("winner")]
        names = [_who(w) for w in winners or () if w is not None]
        lines.append(msg("service.recall.pot", pot=money.credits(int(pool["pot"])),
                         winner=msg("list.separator").join(names) if names else "-"))
    extra = ()
    if record.get("community"):
        extra = (CardGroup(msg("service.recall.community"), tuple(record["community"])),)
    if record.get("dice"):
        lines.append(msg("service.recall.dice", dice=", ".join(str(d) for d in record["dice"])))
    return RoundView(title, tuple(lines), tuple(hands), tuple(wager_lines), extra)


def recall_view(state: MenuState) -> ServiceView:
    title = msg("service.page.recall")
    doc = state.answer("recall")
    if doc is None:
        return _loading(state, title)
    rounds = list(doc.get("rounds", []))
    money = state.money
    rows = []
    for i, record in enumerate(rounds):
        net = record.get("net")
        rows.append(RowView((when(record.get("time"))[5:], game_name(record.get("game")),
                             money.signed(int(net)) if net is not None else msg("service.recall.open")),
                            A("select", i), "selected" if i == state.selected else "normal",
                            name=f"row.round.{i}"))
    table = TableView("recall.rounds", msg("service.recall.heading", n=len(rounds)),
                      (msg("service.col.time"), msg("service.col.game"), msg("service.col.net")),
                      tuple(rows), (4, 4, 2), aligns="llr", page=state.list_page, empty=msg("service.recall.none"))
    shown = round_view(rounds[state.selected], money) if 0 <= state.selected < len(rounds) else None
    return _view(state, "recall", title, tables=(table,), round=shown)


def bills_view(state: MenuState) -> ServiceView:
    title = msg("service.page.bills")
    doc = state.answer("bills")
    if doc is None:
        return _loading(state, title)
    money = state.money
    rows = tuple(RowView((str(b.get("seq", "")), when(b.get("time")),
                          money.amount(int(b.get("denom_cents", b.get("cents", 0)))),
                          *money_cells(money, int(b.get("cents", 0)))[1:]), name=f"row.bill.{i}")
                 for i, b in enumerate(doc.get("bills", [])))
    table = TableView("bills", msg("service.bills.heading", n=len(rows)),
                      (msg("service.col.seq"), msg("service.col.time"), msg("service.col.note"),
                       msg("service.col.credits")), rows, (2, 5, 3, 3), page=state.list_page,
                      empty=msg("service.bills.none"))
    return _view(state, "list", title, tables=(table,))


def tickets_view(state: MenuState) -> ServiceView:
    title = msg("service.page.tickets")
    doc = state.answer("tickets")
    if doc is None:
        return _loading(state, title)
    money = state.money
    vouchers = []
    for i, v in enumerate(doc.get("vouchers", [])):
        times = v.get("times") or {}
        first = v.get("issued") or next(iter(times.values()), None)
        kind = msg("service.tickets.own") if v.get("own") else msg("service.tickets.other")
        vouchers.append(RowView((when(first), mask_validation(v.get("validation")), kind,
                                 str(v.get("state", "-")), money.amount(int(v.get("amount_cents", 0)))),
                                name=f"row.voucher.{i}"))
    kinds = {"ticket_in": mkey("service.tickets.kind_in"), "ticket_out": mkey("service.tickets.kind_out"),
             "handpay": mkey("service.tickets.kind_handpay")}
    cashless = []
    for i, t in enumerate(doc.get("cashless", [])):
        kind = kinds.get(str(t.get("kind")))
        cashless.append(RowView((when(t.get("time")), msg(kind) if kind else str(t.get("kind")),
                                 mask_validation(t.get("validation")) if t.get("validation") else "-",
                                 money.amount(int(t.get("cents", 0)))), name=f"row.cashless.{i}"))
    left = TableView("tickets.vouchers", msg("service.tickets.vouchers", n=len(vouchers)),
                     (msg("service.col.time"), msg("service.col.validation"), msg("service.col.source"),
                      msg("service.col.state"), msg("service.col.amount")), tuple(vouchers), (4, 4, 2, 3, 3),
                     page=state.list_page, empty=msg("service.tickets.none"))
    right = TableView("tickets.cashless", msg("service.tickets.cashless", n=len(cashless)),
                      (msg("service.col.time"), msg("service.col.kind"), msg("service.col.validation"),
                       msg("service.col.amount")), tuple(cashless), (4, 3, 4, 3), page=state.list_page,
                      empty=msg("service.tickets.none"))
    return _view(state, "columns", title, tables=(left, right))


def _event_detail(event: Mapping[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in event.items() if k not in ("seq", "time", "event")]
    return "  ".join(parts) or "-"


def events_view(state: MenuState) -> ServiceView:
    title = msg("service.page.events")
    doc = state.answer("events")
    if doc is None:
        return _loading(state, title)
    rows = []
    for i, e in enumerate(doc.get("events", [])):
        name = str(e.get("event", "-"))
        refused = e.get("result") == "refused" or "tilt" in name or "fault" in name
        rows.append(RowView((str(e.get("seq", "")), when(e.get("time")), name, _event_detail(e)),
                            tone="warn" if refused else "normal", name=f"row.event.{i}"))
    table = TableView("events", msg("service.events.heading", n=len(rows)),
                      (msg("service.col.seq"), msg("service.col.time"), msg("service.col.event"),
                       msg("service.col.detail")), tuple(rows), (1, 4, 4, 14), aligns="llll",
                      page=state.list_page, empty=msg("service.events.none"))
    return _view(state, "list", title, tables=(table,))


def attendant_view(state: MenuState) -> ServiceView:
    title = msg("service.page.attendant")
    handpay = state.status.get("handpay") or None
    lines = [msg("service.attendant.handpay_waiting",
                 amount=state.money.currency_of(int(handpay.get("credits", 0))))
             if isinstance(handpay, Mapping) else msg("service.attendant.no_handpay")]
    buttons = []
    if state.can("handpay"):
        buttons.append(button("button.handpay", msg("service.attendant.handpay"), A("run", ("handpay",)),
                              enabled=isinstance(handpay, Mapping) and not state.busy, style="deal"))
    if state.can("call-cleared"):
        buttons.append(button("button.call_cleared", msg("service.attendant.call_cleared"),
                              A("run", ("call-cleared",)), enabled=not state.busy))
    panels = [PanelView("panel.attendant", msg("service.attendant.heading"), tuple(lines),
                        "warn" if handpay else "normal")]
    if state.test is not None:
        panels.append(PanelView("panel.result", msg("service.result"), detail_lines(state.test[1])))
    return _view(state, "grid", title, panels=tuple(panels), buttons=tuple(buttons))


LIFECYCLE_TONES = {"open": "good", "gone": "alert", "closed": "warn", "failed": "alert"}


def diagnostics_view(state: MenuState) -> ServiceView:
    title = msg("service.page.diagnostics")
    doc = state.answer("diagnostics") or {}
    live: Mapping[str, Any] = state.status.get("devices") or {}
    devices: Mapping[str, Any] = doc.get("devices", {})
    rows = []
    for name in sorted(set(devices) | set(live)):
        entry = devices.get(name, {})
        lifecycle = str(live.get(name, entry.get("lifecycle", "-")))
        counters = entry.get("counters") or {}
        shown = "  ".join(f"{k}={v}" for k, v in counters.items()) or entry.get("error", "-")
        rows.append(RowView((name.replace("_", " "), lifecycle, str(entry.get("backend", "-")), shown),
                            tone=LIFECYCLE_TONES.get(lifecycle, "normal"), name=f"row.device.{name}"))
    sas: Mapping[str, Any] | None = state.status.get("sas")
    if isinstance(sas, Mapping):                     # the SAS port: its link to the casino's system
        rows.append(RowView(("SAS", f"link {sas.get('link', '-')}", f"address {sas.get('address', '-')}",
                             f"{sas.get('port', '-')}  polls={sas.get('polls', 0)}  "
                             f"exceptions={sas.get('exceptions_pending', 0)}"),
                            tone="good" if sas.get("link") == "up" else "warn", name="row.device.sas"))
    table = TableView("devices", msg("service.diagnostics.devices"),
                      (msg("service.col.device"), msg("service.col.state"), msg("service.col.backend"),
                       msg("service.col.counters")), tuple(rows), (3, 2, 3, 5), aligns="llll",
                      empty=msg("service.diagnostics.no_devices"))
    tilts = list(state.status.get("tilts") or doc.get("tilts") or [])
    cabinet = [msg("service.diagnostics.cabinet", state=str(state.status.get("state") or doc.get("state", "-")))]
    cabinet += [msg("service.diagnostics.tilt", tilt=str(t.get("tilt")), reason=str(t.get("reason")))
                for t in tilts] or [msg("service.diagnostics.no_tilts")]
    panels = [PanelView("panel.cabinet", msg("service.diagnostics.cabinet_heading"), tuple(cabinet),
                        "alert" if tilts else "good")]
    if state.test is not None:
        name, answer = state.test
        panels.append(PanelView("panel.result", msg("service.diagnostics.result"),
                                detail_lines(answer, limit=9, skip=("note",))))
    buttons = [button(name, msg(label), A("run", words), enabled=not state.busy)
               for name, label, words, needs in DEVICE_TESTS if state.can(needs)]
    if state.can("clear-tilt"):
        buttons += [button(f"clear_tilt.{t.get('tilt')}", msg("service.diagnostics.clear_tilt", tilt=str(t.get("tilt"))),
                           A("run", ("clear-tilt", str(t.get("tilt")))), enabled=not state.busy)
                    for t in tilts[:2]]
    buttons.append(button("button.refresh", msg("service.button.refresh"), A("refresh"), enabled=not state.busy))
    return _view(state, "split", title, tables=(table,), panels=tuple(panels), buttons=tuple(buttons))


def config_view(state: MenuState) -> ServiceView:
    title = msg("service.page.config")
    doc = state.answer("config")
    if doc is None:
        return _loading(state, title)
    games: Mapping[str, Any] = doc.get("games", {})
    game = state.config_game if state.config_game in games else next(iter(games), None)
    rows: list[RowView] = []
    specs: dict[str, OptionSpec] = option_specs(game) if game else {}
    if game:
        values = flatten(dict(games[game].get("options", {})))
        for i, (key, value) in enumerate(values.items()):
            spec = specs.get(key)
            editable = spec is not None and spec.kind != "fixed" and state.can("config set")
            tone = "selected" if key == state.option else ("normal" if editable else "dim")
            rows.append(RowView((key, value), A("select", i) if editable else None, tone, name=f"row.option.{key}"))
    table = TableView("options", msg("service.config.options", game=game_name(game) if game else "-"),
                      (msg("service.col.option"), msg("service.col.value")), tuple(rows), (3, 2),
                      page=state.list_page, empty=msg("service.config.no_games"))
    lines = [msg("service.config.profile", profile=str(doc.get("profile", "-")))]
    if game:
        stored = games[game].get("stored")
        lines.append(msg("service.config.stored") if stored else msg("service.config.file"))
    panels = [PanelView("panel.config", msg("service.config.heading"), tuple(lines))]
    buttons: list[ButtonView] = []
    if state.option and game and state.option in specs:
        spec = specs[state.option]
        current = flatten(dict(games[game].get("options", {}))).get(state.option, "")
        chosen = state.option_value if state.option_value is not None else current
        panels.append(PanelView("panel.editor", msg("service.config.editing", option=state.option),
                                (msg("service.config.now", value=current), msg("service.config.new", value=chosen)),
                                "warn" if chosen != current else "normal"))
        if spec.kind == "choice":
            buttons += [button(f"choice.{c}", c, A("choice", c), style="deal" if c == chosen else "normal")
                        for c in spec.choices]
        else:
            for steps in (-10, -1, 1, 10):
                buttons.append(button(f"step.{steps:+d}", msg("service.config.step", step=f"{spec.step * steps:+}"),
                                      A("step", steps)))
        buttons.append(button("button.cancel", msg("service.button.cancel"), A("cancel")))
        buttons.append(button("button.apply", msg("service.button.apply"), A("apply"),
                              enabled=chosen != current and not state.busy, style="deal"))
    else:
        buttons += [button(f"game.{g}", game_name(g), A("game", g), style="deal" if g == game else "normal")
                    for g in games]
    return _view(state, "split", title, tables=(table,), panels=tuple(panels), buttons=tuple(buttons))


def software_view(state: MenuState) -> ServiceView:
    title = msg("service.page.software")
    doc = state.answer("software")
    if doc is None:
        return _loading(state, title)
    verification = doc.get("verification")
    if verification is None:
        rows = (RowView((msg("service.software.none"), str(doc.get("note", "-"))), tone="warn"),)
    else:
        ok = verification.get("ok")
        rows = tuple(RowView((str(k), str(v)), tone=("good" if ok else "alert") if k == "ok" else "normal",
                             name=f"row.software.{k}") for k, v in verification.items())
    table = TableView("software", msg("service.software.heading"),
                      (msg("service.col.item"), msg("service.col.value")), rows, (2, 5), aligns="ll")
    panels = []
    digest = state.answer("software_hash")
    if digest is not None:
        overall = str(digest.get("overall", ""))
        chunks = tuple(overall[i:i + 32] for i in range(0, len(overall), 32)) or ("-",)
        panels.append(PanelView("panel.hash", msg("service.software.hash_heading",
                                                  algorithm=str(digest.get("algorithm", "-"))),
                                chunks + (msg("service.software.files", n=len(digest.get("files", []))),)))
    else:
        panels.append(PanelView("panel.hash", msg("service.software.hash_ask"), (msg("service.software.hash_explain"),)))
    buttons = []
    if state.can("software hash"):
        buttons = [button(f"hash.{a}", a.upper(), A("algorithm", a), enabled=not state.busy)
                   for a in HASH_ALGORITHMS]
    return _view(state, "split", title, tables=(table,), panels=tuple(panels), buttons=tuple(buttons))


def seed_view(state: MenuState) -> ServiceView:
    pad = KeypadView("keypad", msg("service.software.seed_title", algorithm=str(state.algorithm)),
                     msg("service.software.seed_prompt"), state.seed or "-", _pad(state.seed, hexadecimal=True),
                     columns=6)
    buttons = (button("button.cancel", msg("service.button.cancel"), A("cancel")),
               button("button.enter", msg("service.button.enter"), A("enter"),
                      enabled=len(state.seed) % 2 == 0 and not state.busy, style="deal"))
    return _view(state, "keypad", msg("service.page.software"), keypad=pad, buttons=buttons)


def packages_view(state: MenuState) -> ServiceView:
    title = msg("service.page.packages")
    doc = state.answer("packages")
    if doc is None:
        return _loading(state, title)
    pending = sorted(dict(doc.get("pending", {})).items())
    installed = sorted(dict(doc.get("installed", {})).items())
    rows = []
    for i, (name, p) in enumerate(pending):
        rows.append(RowView((name, str(p.get("version", "-")), msg("service.packages.waiting"),
                             str(p.get("sha256", ""))[:12]), A("select", i),
                            "selected" if i == state.selected else "warn", name=f"row.package.{name}"))
    for name, p in installed:
        rows.append(RowView((name, str(p.get("version", "-")), msg("service.packages.installed"),
                             str(p.get("sha256", ""))[:12]), tone="good", name=f"row.package.{name}"))
    table = TableView("packages", msg("service.packages.heading"),
                      (msg("service.col.package"), msg("service.col.version"), msg("service.col.state"),
                       msg("service.col.sha256")), tuple(rows), (4, 2, 3, 3), aligns="llll",
                      page=state.list_page, empty=msg("service.packages.none"))
    lines = [msg("service.packages.counts", waiting=len(pending), installed=len(installed))]
    if doc.get("downloading"):
        lines.append(msg("service.packages.downloading", names=", ".join(doc["downloading"])))
    buttons = []
    if pending and 0 <= state.selected < len(pending):
        name = pending[state.selected][0]
        lines.append(msg("service.packages.chosen", name=name))
        if state.can("package approve"):
            buttons.append(button("button.approve", msg("service.packages.approve"),
                                  A("package", ("approve", name)), enabled=not state.busy, style="deal"))
        if state.can("package reject"):
            buttons.append(button("button.reject", msg("service.packages.reject"),
                                  A("package", ("reject", name)), enabled=not state.busy))
    buttons.append(button("button.refresh", msg("service.button.refresh"), A("refresh"), enabled=not state.busy))
    panels = (PanelView("panel.packages", msg("service.packages.summary"), tuple(lines)),)
    return _view(state, "split", title, tables=(table,), panels=panels, buttons=tuple(buttons))


def ram_clear_view(state: MenuState) -> ServiceView:
    title = msg("service.page.ram_clear")
    credits = int(state.status.get("credits", 0) or 0)
    lines = [msg("service.ram_clear.explain")]
    if credits:
        lines.append(msg("service.ram_clear.credits", credits=state.money.credits(credits)))
    panels = [PanelView("panel.ram_clear", msg("service.ram_clear.heading"), tuple(lines), "warn")]
    if state.reason is None:
        panels.append(PanelView("panel.reason", msg("service.ram_clear.choose"), ()))
        buttons = tuple(button(f"reason.{i}", msg(r), A("reason", r), enabled=not state.busy)
                        for i, r in enumerate(RAM_CLEAR_REASONS))
    else:
        panels.append(PanelView("panel.confirm", msg("service.ram_clear.confirm_heading"),
                                (msg("service.ram_clear.confirm_text", reason=msg(state.reason)),), "alert"))
        buttons = (button("button.cancel", msg("service.button.cancel"), A("cancel")),
                   button("button.confirm", msg("service.ram_clear.confirm"), A("confirm"),
                          enabled=not state.busy, style="cashout"))
    return _view(state, "grid", title, panels=tuple(panels), buttons=buttons)


def calibration_page_view(state: MenuState) -> ServiceView:
    title = msg("service.page.calibration")
    if state.calibration is not None:
        return _view(state, "calibration", title, calibration=state.calibration)
    lines = [msg("service.calibration.explain"), msg("service.calibration.explain_check")]
    panels = [PanelView("panel.calibration", msg("service.calibration.heading"), tuple(lines))]
    if state.test is not None and state.test[0] == "calibration":
        panels.append(PanelView("panel.result", msg("service.result"), detail_lines(state.test[1])))
    buttons = (button("button.calibrate", msg("service.calibration.start"), A("calibrate"),
                      enabled=not state.busy, style="deal"),)
    return _view(state, "grid", title, panels=tuple(panels), buttons=buttons)


def demo_page_view(state: MenuState) -> ServiceView:
    """Demo mode (GLI-11 demonstration play): its state from the terminal's status, and the API's
    ``demo start / play / stop``; nothing a demo does reaches the meters or the history."""
    title = msg("service.page.demo")
    demo = state.status.get("demo") or {}
    on = bool(demo.get("demo"))
    lines = [msg("service.demo.explain")]
    if on:
        lines.append(msg("service.demo.on", game=str(demo.get("game") or "-"),
                         credits=state.money.credits(int(demo.get("credits", 0) or 0)),
                         rounds=int(demo.get("rounds", 0) or 0)))
    else:
        lines.append(msg("service.demo.off"))
    panels = [PanelView("panel.demo", msg("service.demo.heading"), tuple(lines), "warn" if on else "normal")]
    if state.test is not None and state.test[0] == "demo":
        panels.append(PanelView("panel.result", msg("service.result"), detail_lines(state.test[1])))
    idle = not state.busy
    buttons = (
        button("button.demo_start", msg("service.demo.start"), A("run", ("demo", "start")), enabled=idle and not on,
               style="deal"),
        button("button.demo_play", msg("service.demo.play_one"), A("run", ("demo", "play", "1")), enabled=idle and on),
        button("button.demo_play10", msg("service.demo.play_ten"), A("run", ("demo", "play", "10")),
               enabled=idle and on),
        button("button.demo_stop", msg("service.demo.stop"), A("run", ("demo", "stop")), enabled=idle and on),
    )
    return _view(state, "grid", title, panels=tuple(panels), buttons=buttons)


BUILDERS = {
    "login": login_view, "pin": pin_view, "menu": menu_view, "meters": meters_view, "recall": recall_view,
    "bills": bills_view, "tickets": tickets_view, "events": events_view, "attendant": attendant_view,
    "diagnostics": diagnostics_view, "config": config_view, "software": software_view, "seed": seed_view,
    "packages": packages_view, "ram_clear": ram_clear_view, "calibration": calibration_page_view,
    "demo": demo_page_view,
}
assert set(PAGE_BY_ID) <= set(BUILDERS), "every menu page has a builder"
