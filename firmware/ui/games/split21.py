"""Split 21 Stud's screens (rules/split21-stud.md): five cards set into a HIGH and a LOW blackjack
hand, and all five as a poker hand for the ANTE.

The table (``set_table``): the die and the positions it decides (dealing starts at the position
after the die's number; the house's hand is position 8), the dealer's HIGH and LOW, and the spot's
ANTE, LOW, HIGH (= ``high_multiple`` x LOW, follows LOW on the slip) and JACKPOT areas. Setting
the hand is ``setting.HandSettingUi``'s. A round is shown from the record: the die, the dealer's
hands, the ANTE (poker) first, then HIGH and LOW, then the JACKPOT (patent: "The winning poker hand
is paid first").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from firmware.cards.blackjack import blackjack_total
from firmware.cards.card import Card, parse_cards
from firmware.cards.poker5 import HandCategory, category, eval5
from firmware.games.split21_stud import (
    BANKED,
    HOUSE_POSITION,
    Split21Stud,
    Split21StudOptions,
    dealing_order,
)
from firmware.games.split21_stud_house_way import house_way
from firmware.ui.betting import Wagers, follow, has_chips, short_spot
from firmware.ui.games import pays
from firmware.ui.games.base import DemoRound, doc_buttons, outcome_tag
from firmware.ui.games.set_table import DiceView, SetTableScreen
from firmware.ui.games.setting import HandSettingUi
from firmware.ui.games.setting import stack as stack_cards
from firmware.ui.messages import key, text
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import DocSection, DocView, ResultView

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet

WAGER_LABELS: dict[str, str] = {
    "ante": key("s21.wager.ante"), "low": key("s21.wager.low"), "high": key("s21.wager.high"),
    "jackpot": key("s21.wager.jackpot"),
}
HAND_LABELS: dict[str, str] = {"high": key("s21.hand.high"), "low": key("s21.hand.low")}
POKER_LABELS: dict[HandCategory, str] = {
    HandCategory.HIGH_CARD: key("s21.poker.high_card"), HandCategory.PAIR: key("s21.poker.pair"),
    HandCategory.TWO_PAIR: key("s21.poker.two_pair"), HandCategory.THREE_OF_A_KIND: key("s21.poker.three_of_a_kind"),
    HandCategory.STRAIGHT: key("s21.poker.straight"), HandCategory.FLUSH: key("s21.poker.flush"),
    HandCategory.FULL_HOUSE: key("s21.poker.full_house"), HandCategory.FOUR_OF_A_KIND: key("s21.poker.four_of_a_kind"),
    HandCategory.STRAIGHT_FLUSH: key("s21.poker.straight_flush"),
    HandCategory.FIVE_OF_A_KIND: key("s21.poker.five_of_a_kind"),
}


def poker_name(cards: Sequence[Card]) -> str:
    return text(POKER_LABELS[category(eval5(list(cards)))])


def stack(die: int, hands: Mapping[int, str], filler: str) -> str:
    """The 40 cards in dealing order for ``die`` that deal ``hands`` (position -> its five cards in
    dealt order) and ``filler`` to the positions nobody plays (rules step 3)."""
    return stack_cards(dealing_order(die), hands, filler, 5)


#: The demonstration: die 3 (dealing starts at position 4); spot 1 holds K 9 A 5 6 and sets A K
#: (21 in two cards) HIGH, 9 5 6 (20) LOW; the house's Q Q 7 4 3 is set Q 7 4 (21) / Q 3 (13).
#: ANTE loses (ace high against a pair of queens), HIGH wins (two-card 21 beats three-card 21),
#: LOW wins (20 against 13).
DEMO_HANDS = {1: "Kd 9s As 5h 6c", HOUSE_POSITION: "Qh Qd 7c 4s 3h"}
DEMO_FILLER = "2c 2d 2h 2s 3c 3d 3s 4c 4d 4h 5c 5d 5s 6d 6h 6s 7d 7h 7s 8c 8d 8h 8s 9c 9d 9h Tc Td Th Ts"


class Split21Table(SetTableScreen):
    HAND_CARDS = 3


class Split21StudUi(HandSettingUi[Split21Stud, Split21StudOptions]):
    game_id: ClassVar[str] = "split21-stud"
    screen: ClassVar[type[TableScreen]] = Split21Table
    hands: ClassVar[tuple[str, str]] = ("high", "low")
    hand_size: ClassVar[int] = 5
    demo: ClassVar[DemoRound] = DemoRound(
        stack(3, DEMO_HANDS, DEMO_FILLER), {1: {"ante": 10, "low": 10, "high": 20}},
        {1: {"ante": 10, "low": 10, "high": 20}}, options={"jackpot": {"enabled": False}}, dice=(3,),
        decisions=((1, "set:As Kd|9s 5h 6c"),))

    # --- betting -------------------------------------------------------------------------------
    @property
    def offered(self) -> tuple[str, ...]:
        return self.ctx.game.offered_wagers(self.ctx.options)

    def bet_areas(self) -> list[tuple[int, str]]:
        return [(seat, wager) for seat in range(1, self.ctx.seats + 1) for wager in self.offered]

    def linked(self, wager: str) -> bool:
        return wager == "high" and bool(self.ctx.options.high_multiple)

    def link(self, wagers: Wagers) -> Wagers:
        k = self.ctx.options.high_multiple
        if not k:
            return wagers
        return follow(wagers, "low", "high", k)

    def check_slip(self, wagers: Wagers) -> str | None:
        if not has_chips(wagers):
            return text("message.place_bet")
        short = short_spot(wagers, ("ante", "low", "high"))
        return None if short is None else text("s21.needs_bets", spot=short[0])

    def area_label(self, wager: str) -> str:
        if wager == "high" and self.ctx.options.high_multiple:
            return text("s21.wager.high_times", k=self.ctx.options.high_multiple)
        return text(WAGER_LABELS[wager])

    # --- setting -------------------------------------------------------------------------------
    def hand_label(self, hand: str) -> str:
        return text(HAND_LABELS[hand])

    def score(self, cards: Sequence[Card]) -> str:
        total = blackjack_total(cards)
        if total.bust:
            return text("s21.score_bust", total=total.total)
        if total.natural:
            return text("s21.score_natural")
        return text("s21.score", total=total.total)

    def shape_ok(self, first: int) -> bool:
        return first in (2, 3)

    def shape_message(self) -> str:
        return text("s21.shape")

    def foul_message(self) -> str:
        return text("s21.foul")

    def house_way_first(self, cards: Sequence[Card]) -> tuple[int, ...]:
        return house_way(list(cards)).high

    def summary(self, cards: Sequence[Card]) -> str:
        return text("s21.poker_line", hand=poker_name(cards))

    def reminders(self) -> tuple[str, tuple[str, ...]]:
        return text("s21.reminder_title"), (text("s21.reminder_split"), text("s21.reminder_high"),
                                            text("s21.reminder_bust"), text("s21.reminder_ante"))

    # --- the die ---------------------------------------------------------------------------------
    def dice_view(self, dice: Sequence[int], record: Mapping[str, Any] | None, wagers: Wagers) -> DiceView:
        players = sorted(wagers) or list(range(1, self.ctx.seats + 1))
        if not dice:
            return DiceView(text("s21.die"), (), self.ctx.game.dice_sides, text("s21.die_wait"),
                            self.positions(0, HOUSE_POSITION, players, text("setgame.dealer_mark")))
        die = int(dice[0])
        if record is not None:
            first, dealer = int(record["first_position"]), int(record["dealer_position"])
            players = [int(s["seat"]) for s in record["seats"]]
        else:
            first, dealer = dealing_order(die)[0], HOUSE_POSITION
        note = text("s21.die_note", die=die, first=first, dealer=dealer)
        return DiceView(text("s21.die"), (die,), self.ctx.game.dice_sides, note,
                        self.positions(first, dealer, players, text("setgame.dealer_mark")))

    # --- a round -------------------------------------------------------------------------------
    def result_steps(self, record: Mapping[str, Any]) -> list[tuple[str, frozenset[tuple[int, str]], str]]:
        seats = record["seats"]
        seat = seats[0]
        dealer = record["dealer"]

        def of(*wagers: str, only: Callable[[Mapping[str, Any]], object] | None = None) -> frozenset[tuple[int, str]]:
            return frozenset((int(s["seat"]), w) for s in seats if only is None or only(s) for w in wagers)

        mine, theirs = poker_name(_cards(seat["cards"])), poker_name(_cards(dealer["cards"]))
        steps = []
        if any(s.get("foul") for s in seats):
            steps.append(("foul", of(*BANKED, only=lambda s: s.get("foul")), text("s21.caption_foul")))
        steps.append(("ante", of("ante", "bank"), text("s21.caption_ante", mine=mine, theirs=theirs)))
        steps.append(("hands", of("high", "low"), text("s21.caption_hands", hands=self.hands_text(seat),
                                                        dealer=self.hands_text(dealer))))
        pool = record.get("jackpot") or {}
        if pool.get("pot"):
            players = [w for w in pool.get("winners") or [] if w != "dealer"]
            caption = (text("s21.caption_jackpot_won", hand=poker_name_of(players[0], record)) if players
                       else text("s21.caption_jackpot_house"))
            steps.append(("jackpot", of("jackpot"), caption))
        return steps

    def hand_result(self, seat: Mapping[str, Any], hand: str) -> ResultView | None:
        result = seat.get("results", {}).get(hand)
        return outcome_tag(result) if result else None

    # --- pays and rules ------------------------------------------------------------------------
    def paytable(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        rows = [("ante", text("s21.wager.ante"), pays.to_one(1)),
                ("high", text("s21.wager.high"), pays.ratio(o.high_pays)),
                ("low", text("s21.wager.low"), pays.ratio(o.low_pays))]
        if o.jackpot.enabled:
            rows.append(("jackpot", text("s21.wager.jackpot"),
                         text("s21.jackpot_pays", commission=pays.percent(o.jackpot.commission))))
        notes = [text("s21.note_ante"), text("s21.note_hands"), text("s21.note_natural")]
        if o.high_multiple:
            notes.append(text("s21.note_multiple", k=o.high_multiple))
        if o.jackpot.enabled:
            notes.append(text("s21.note_jackpot", commission=pays.percent(o.jackpot.commission)))
            if o.jackpot.house_ante:
                notes.append(text("s21.note_jackpot_ante", amount=self.ctx.money.currency_of(o.jackpot.house_ante)))
        sections = (pays.wager_section(sheet, rows),
                    DocSection(text("paytable.notes_heading"), paragraphs=tuple(notes)))
        return DocView("paytable", text("paytable.title", game=self.name), (sections,), 0, pays.par_footer(sheet),
                       doc_buttons(0, 1))

    def help(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        play = [text("s21.help_wagers", k=o.high_multiple) if o.high_multiple else text("s21.help_wagers_free"),
                *((text("s21.help_jackpot_optional"),) if o.jackpot.enabled else ()),
                text("s21.help_die"), text("s21.help_set"),
                text("s21.help_foul_refuse") if o.foul_setting == "refuse" else text("s21.help_foul_lose"),
                text("s21.help_showdown")]
        page1 = (DocSection(text("help.heading_play"), paragraphs=tuple(play)),
                 DocSection(text("help.heading_example"), paragraphs=(text("s21.help_example"),),
                            cards=(tuple(DEMO_HANDS[1].split()),)))
        more = [text("s21.help_house_way")]
        if o.jackpot.enabled:
            more.append(text("s21.help_jackpot", commission=pays.percent(o.jackpot.commission)))
        page2 = (DocSection(text("s21.help_heading_house_way"), paragraphs=tuple(more)), pays.table_section(self.ctx, 1))
        pages = (page1, page2)
        return DocView("help", text("help.title", game=self.name), pages, 0, pays.par_footer(sheet),
                       doc_buttons(0, len(pages)))

    def attract_lines(self) -> tuple[str, ...]:
        return (text("s21.attract_1"), text("s21.attract_2"))


def _cards(names: Sequence[str]) -> list[Card]:
    return parse_cards(list(names))


def poker_name_of(winner: int, record: Mapping[str, Any]) -> str:
    """A jackpot winner's hand, named from its cards in the record."""
    hand = next(s for s in record["seats"] if s["seat"] == winner)
    return poker_name(_cards(hand["cards"]))
