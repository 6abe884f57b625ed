"""What a game supplies to the screens: :class:`GameUi`.

The app and ``egm screenshot`` know nothing of any game; they ask the game's :class:`GameUi` for:

* ``screen``: its :class:`~firmware.ui.screens.base.TableScreen` subclass (draws the felt);
* ``bet_areas()``: the (seat, wager) areas a touch can put chips on, and ``link`` (wagers that
  follow others) and ``check_slip`` (the game's own "not yet" before DEAL);
* ``timeline(record)``: the round record as :class:`~firmware.ui.playback.Beat` s;
* ``felt(...)``: the game's part of the table view, from the bet slip (before a round) or a
  record and the beat being shown;
* ``paytable(sheet)`` and ``help(sheet)``: the pages generated from the options and the PAR sheet;
* ``decision_buttons(request)``: buttons for a decision the kernel waits for (games with decisions).

The shared parts (meters, chips, buttons, messages) are built here once (:meth:`chrome`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from firmware.games.base import Outcome
from firmware.ui.actions import UiAction
from firmware.ui.betting import Wagers
from firmware.ui.context import GameContext, GameT, OptionsT
from firmware.ui.messages import key, text
from firmware.ui.money import group
from firmware.ui.playback import Beat
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import ButtonView, ChipView, ChromeView, DocView, MeterView, ResultView

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet

#: A hand on the table as a reveal names it: a seat number, or a name (``"dealer"``, Hold'em War's
#: ``"community"``).
HandKey = int | str

#: Catalogue keys of the outcome words.
OUTCOME_LABELS: dict[Outcome, str] = {
    Outcome.WIN: key("outcome.win"), Outcome.LOSE: key("outcome.lose"), Outcome.PUSH: key("outcome.push"),
    Outcome.FOLD: key("outcome.fold"), Outcome.VOID: key("outcome.void"),
}


def result_view(result: Mapping[str, Any], stake: int) -> ResultView:
    """A wager's tag: its outcome and what it paid to the credit meter (the stake returned and the
    winnings: ``stake + net``), the WIN convention of every screen (docs/ui.md, "WIN")."""
    outcome = Outcome(result["outcome"])
    paid = max(0, int(stake) + int(result["net"]))
    return ResultView(outcome, text(OUTCOME_LABELS[outcome]), group(paid) if paid else "", paid)


def outcome_tag(result: Mapping[str, Any]) -> ResultView:
    """A tag naming an outcome only (a hand's result, whose wager's own tag carries the payment)."""
    outcome = Outcome(result["outcome"])
    return ResultView(outcome, text(OUTCOME_LABELS[outcome]), "")


def stakes_of(seat: Mapping[str, Any]) -> Mapping[str, int]:
    """What a seat staked per wager: the settled ``stakes`` (they include wagers made during the
    round, Three Card Poker's PLAY, and fees) where the record has them, else its ``wagers``."""
    stakes: Mapping[str, int] = seat.get("stakes") or seat.get("wagers", {})
    return stakes


def paid_shown(view: object) -> int:
    """Credits paid by the result tags in a (felt) view: what the WIN meter shows, so that the
    meter is always the sum of the tags on the screen."""
    if isinstance(view, ResultView):
        return view.paid
    if isinstance(view, (tuple, list)):
        return sum(paid_shown(v) for v in view)
    if isinstance(view, Mapping):
        return sum(paid_shown(v) for v in view.values())
    if is_dataclass(view) and not isinstance(view, type):
        return sum(paid_shown(getattr(view, f.name)) for f in fields(view))
    return 0


def coin_out(record: Mapping[str, Any]) -> int:
    """Credits a completed round paid back to the credit meter (stakes returned and wins)."""
    total = 0
    for seat in record.get("seats", []):
        stakes = stakes_of(seat)
        for name, result in seat.get("results", {}).items():
            total += int(stakes.get(name, 0)) + int(result["net"])
    return total


def round_stake(record: Mapping[str, Any]) -> int:
    """Credits the round took from the credit meter (every stake, including those made during it)."""
    return sum(int(v) for seat in record.get("seats", []) for v in stakes_of(seat).values())


@dataclass(frozen=True)
class DemoRound:
    """A game's demonstration (``egm screenshot``, the docs, the tests): a real round played by
    the kernel from these stacked cards, wagers, dice and decisions, and the bets on the table."""

    cards: str                                        #: in dealing order
    wagers: dict[int, dict[str, int]]                 #: the round's wagers
    table_bets: dict[int, dict[str, int]]             #: on the table in the "table" screenshot
    options: dict[str, Any] = field(default_factory=dict)  #: the game's options in the demo config
    dice: tuple[int, ...] | None = None
    decisions: tuple[tuple[int, str], ...] = ()       #: (seat, action) in order
    seek: str = "settle"                              #: the beat the "war" screenshot shows (its last)


class GameUi(ABC, Generic[GameT, OptionsT]):
    """One game's screens; built for a :class:`~firmware.ui.context.GameContext` of its game
    (``GameUi[WarFamilyGame, WarFamilyOptions]``), whose rules and options it reads typed."""

    game_id: ClassVar[str]
    screen: ClassVar[type[TableScreen]]
    #: The game's demonstration round.
    demo: ClassVar[DemoRound]

    def __init__(self, ctx: GameContext[GameT, OptionsT]) -> None:
        self.ctx = ctx

    # --- betting ---------------------------------------------------------------------------------
    @abstractmethod
    def bet_areas(self) -> list[tuple[int, str]]:
        """The (seat, wager) areas of the table, in drawing order."""

    def link(self, wagers: Wagers) -> Wagers:
        """Wagers that follow others, applied to a slip (none by default)."""
        return wagers

    def check_slip(self, wagers: Wagers) -> str | None:
        """The player's message if these wagers cannot be dealt yet (the game's own rules)."""
        return None if wagers else text("message.place_bet")

    @abstractmethod
    def area_label(self, wager: str) -> str:
        """The name printed on a wager's area (``BAC``, ``PAIR PLUS``): also how a live table's
        screens name a seat's bets."""

    # --- a round ---------------------------------------------------------------------------------
    @abstractmethod
    def timeline(self, record: Mapping[str, Any]) -> list[Beat]:
        """The completed round ``record`` shown step by step (the last beat shows everything)."""

    def settled_caption(self, record: Mapping[str, Any]) -> str:
        """The settlement beat's caption: what the round paid to the credit meter (the WIN meter's
        amount), what it took when it paid nothing, or that every wager was returned."""
        paid = coin_out(record)
        outcomes = {str(r["outcome"]) for seat in record.get("seats", []) for r in seat.get("results", {}).values()}
        if paid == 0:
            return text("caption.settled_lose", amount=self.ctx.money.currency_of(round_stake(record)))
        if outcomes <= {Outcome.PUSH.value, Outcome.VOID.value}:
            return text("caption.settled_even")
        return text("caption.settled_win", amount=self.ctx.money.currency_of(paid))

    def beats(self, record: Mapping[str, Any]) -> list[Beat]:
        """:meth:`timeline`, kept for the record last asked about (the screens ask every frame)."""
        cached = getattr(self, "_beats", None)
        if cached is None or cached[0] is not record:
            cached = (record, self.timeline(record))
            self._beats = cached
        return cached[1]

    @abstractmethod
    def felt(self, *, wagers: Wagers, record: Mapping[str, Any] | None, beat: Beat | None,
             progress: float, betting: bool, pending: Sequence[Mapping[str, Any]] = ()) -> object:
        """The game's part of the table view (its own dataclass, which its screen draws): ``wagers`` on the table (the slip, or the round's),
        the round ``record`` and the ``beat`` of it being shown (None: all of it), whether the
        player may place chips now, and the decisions the round awaits (``status()["round"]
        ["pending"]``: each with its ``view``, the cards the player may see) while it waits.
        Games with decisions also take ``decided`` (the seats that have answered while others
        still wait: ``seat``, ``action``, ``view``) and games with dice ``dice``; both are passed
        only when there are some."""

    def decision_buttons(self, request: Mapping[str, Any]) -> list[ButtonView]:
        """Buttons for a decision the kernel awaits (``status()["round"]["pending"]`` entries)."""
        return []

    def act(self, arg: Any, status: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The game's own action (``UiAction("game", arg)``, from a button or area it drew): change
        what the screen holds (a card picked for a hand), or return a terminal command to submit,
        ``("decide", {"seat": 1, "action": "play"})``. None by default: the game has no actions."""
        return None

    def round_started(self) -> None:  # noqa: B027 - an optional hook; most games hold nothing
        """A new round began: forget what the screen held for the last one's decisions."""

    # --- the rules and the pays ------------------------------------------------------------------
    @abstractmethod
    def paytable(self, sheet: ParSheet | None) -> DocView:
        """The pay table, from the options and the PAR sheet (None: its figures are not known)."""

    @abstractmethod
    def help(self, sheet: ParSheet | None) -> DocView:
        """The rules, from the options (and the PAR sheet's return figures)."""

    def attract_lines(self) -> tuple[str, ...]:
        """What attract mode says about the game."""
        return ()

    @property
    def name(self) -> str:
        return text(GAME_NAMES[self.game_id])

    # --- shared chrome ---------------------------------------------------------------------------
    def meters(self, credits: int, bet: int, win: int) -> tuple[MeterView, ...]:
        m = self.ctx.money
        return (
            MeterView("meter.credit", text("meter.credit"), m.currency_of(credits), m.credits(credits)),
            MeterView("meter.bet", text("meter.bet"), m.currency_of(bet), m.credits(bet)),
            MeterView("meter.win", text("meter.win"), m.currency_of(win), m.credits(win)),
        )

    def chrome(self, *, credits: int, bet: int, win: int, chip: int, betting: bool, can_deal: bool,
               can_repeat: bool, can_clear: bool, can_cash_out: bool, message: str, banner: str = "",
               skippable: bool = False, overlay: str = "", overlay_detail: tuple[str, ...] = (),
               extra: tuple[ButtonView, ...] = ()) -> ChromeView:
        ctx = self.ctx
        chips = tuple(ChipView(v, f"{v:,}", v == chip, betting) for v in ctx.chips)
        buttons = extra or (
            ButtonView("button.clear", text("button.clear"), UiAction("clear"), betting and can_clear),
            ButtonView("button.repeat", text("button.repeat"), UiAction("repeat"), betting and can_repeat),
            ButtonView("button.deal", text("button.deal"), UiAction("deal"), betting and can_deal, "deal"),
        )
        top = [ButtonView("button.help", text("button.help"), UiAction("help"), True, "top"),
               ButtonView("button.paytable", text("button.paytable"), UiAction("paytable"), True, "top")]
        if len(ctx.enabled) > 1:
            top.append(ButtonView("button.games", text("button.games"), UiAction("games"), betting, "top"))
        limits = ctx.limits
        subtitle = text("table.limits", min=ctx.money.currency_of(limits.min_bet),
                        max=ctx.money.currency_of(limits.max_bet))
        return ChromeView(
            title=self.name, subtitle=subtitle, meters=self.meters(credits, bet, win), chips=chips,
            buttons=buttons, top=tuple(top),
            cash_out=ButtonView("button.cash_out", text("button.cash_out"), UiAction("cash_out"),
                                can_cash_out, "cashout"),
            message=message, banner=banner, skippable=skippable, overlay=overlay,
            overlay_detail=overlay_detail)


#: Catalogue keys of the game names (CONTRACTS.md game ids).
GAME_NAMES: dict[str, str] = {
    "baccarat-war": key("game.baccarat_war"),
    "blackjack-war": key("game.blackjack_war"),
    "holdem-war": key("game.holdem_war"),
    "three-card-poker": key("game.three_card_poker"),
    "split21-stud": key("game.split21_stud"),
    "double-super-9": key("game.double_super_9"),
}

#: Catalogue keys of a line about each game on the selection screen.
GAME_DETAILS: dict[str, str] = {
    "baccarat-war": key("games.detail_baccarat_war"),
    "blackjack-war": key("games.detail_blackjack_war"),
    "holdem-war": key("games.detail_holdem_war"),
    "three-card-poker": key("games.detail_three_card_poker"),
    "split21-stud": key("games.detail_split21_stud"),
    "double-super-9": key("games.detail_double_super_9"),
}


def doc_buttons(page: int, pages: int) -> tuple[ButtonView, ...]:
    """Back, and previous / next page when there are several."""
    out = []
    if pages > 1:
        out.append(ButtonView("button.prev", text("button.prev"), UiAction("page", -1), page > 0))
        out.append(ButtonView("button.next", text("button.next"), UiAction("page", 1), page < pages - 1))
    out.append(ButtonView("button.back", text("button.back"), UiAction("back"), True, "deal"))
    return tuple(out)
