"""Double Super 9's screens (rules/double-super-9.md): four cards from a shoe of A-6 set into a
FRONT and a BACK two-card hand, against the banker's.

The table (``set_table``): the three dice and what they decide (their total counted clockwise with
the banker's position as 1 gives the position dealt to first, which also acts first), the banker's
FRONT and BACK (the house's, at position 8, with ``banking = house``), and per spot its BET area.
Setting the hand is ``setting.HandSettingUi``'s. A round is shown from the record: the dice, the
banker's hands, then each spot in action order (FRONT and BACK each WIN, LOSE or COPY against the
banker's, and what that makes of the bet: both win wins, one each pushes, a copy counts for
nothing), then the settlement (a win less the house's commission, from the record).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from firmware.cards.card import Card
from firmware.cards.super9 import PAIR_BASE, super9_rank
from firmware.games.base import Outcome
from firmware.games.double_super_9 import (
    HOUSE_SPOT,
    DoubleSuper9,
    DoubleSuper9Options,
    dealing_order,
    dice_position,
)
from firmware.games.double_super_9_house_way import house_way
from firmware.ui.betting import Wagers
from firmware.ui.cards import rank_label
from firmware.ui.games import pays
from firmware.ui.games.base import DemoRound, doc_buttons
from firmware.ui.games.set_table import DiceView, SetTableScreen
from firmware.ui.games.setting import HandSettingUi, stack
from firmware.ui.messages import key, text
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import DocSection, DocView, ResultView

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet

HAND_LABELS: dict[str, str] = {"front": key("ds9.hand.front"), "back": key("ds9.hand.back")}
WAGER_LABELS: dict[str, str] = {"bet": key("ds9.wager.bet"), "bank": key("ds9.wager.bank")}
#: A hand against the banker's (the record's ``comparison``): its tag's style, and its word.
COMPARISONS: dict[str, tuple[Outcome, str]] = {
    "win": (Outcome.WIN, key("outcome.win")), "lose": (Outcome.LOSE, key("outcome.lose")),
    "copy": (Outcome.PUSH, key("ds9.copy")),
}
COMPARISON_WORDS: dict[str, str] = {"win": key("ds9.cmp_win"), "lose": key("ds9.cmp_lose"),
                                    "copy": key("ds9.cmp_copy")}
OUTCOME_WORDS: dict[str, str] = {"win": key("ds9.bet_wins"), "lose": key("ds9.bet_loses"),
                                 "push": key("ds9.bet_pushes"), "void": key("ds9.bet_void")}
#: The rules' showdown table (step 5), as the pay table shows it.
SHOWDOWN: tuple[tuple[str, str], ...] = (
    (key("ds9.show_both_win"), key("ds9.show_win")), (key("ds9.show_copy_win"), key("ds9.show_win")),
    (key("ds9.show_split"), key("ds9.show_push")), (key("ds9.show_copy_copy"), key("ds9.show_push")),
    (key("ds9.show_copy_lose"), key("ds9.show_lose")), (key("ds9.show_both_lose"), key("ds9.show_lose")),
    (key("ds9.show_foul"), key("ds9.show_lose")),
)

#: The demonstration: dice 2 + 3 + 5 = 10, counted from the banker (position 8) as 1: position 1
#: is dealt to first (the seed's example, rule 15). Spot 1 holds 6s 5d 3h 5c and sets 6 3 (Super 9)
#: FRONT, 5 5 BACK; the house's 5s 5h 2d 6c is set 2 6 (8 points) / 5 5: FRONT wins, BACK is a copy,
#: so the bet wins, less 5% commission: +9 on 10.
DEMO_DICE = (2, 3, 5)
DEMO_HANDS = {1: "6s 5d 3h 5c", HOUSE_SPOT: "5s 5h 2d 6c"}
DEMO_FILLER = "Ad 2c 3s 4d Ac 2h 3d 4c As 2s 3c 4h Ah 4s 6d 6h 2c 3s 4d 6s 5d 3h 4c Ad"


class DoubleSuper9Table(SetTableScreen):
    HAND_CARDS = 2


class DoubleSuper9Ui(HandSettingUi[DoubleSuper9, DoubleSuper9Options]):
    game_id: ClassVar[str] = "double-super-9"
    screen: ClassVar[type[TableScreen]] = DoubleSuper9Table
    hands: ClassVar[tuple[str, str]] = ("front", "back")
    hand_size: ClassVar[int] = 4
    demo: ClassVar[DemoRound] = DemoRound(
        stack(dealing_order(dice_position(sum(DEMO_DICE), HOUSE_SPOT)), DEMO_HANDS, DEMO_FILLER, 4),
        {1: {"bet": 10}}, {1: {"bet": 10}}, dice=DEMO_DICE, decisions=((1, "set:6s 3h|5d 5c"),))

    # --- betting -------------------------------------------------------------------------------
    @property
    def house_banks(self) -> bool:
        return self.ctx.options.banking == "house"

    def bet_areas(self) -> list[tuple[int, str]]:
        wagers = ("bet",) if self.house_banks else ("bet", "bank")
        return [(seat, wager) for seat in range(1, self.ctx.seats + 1) for wager in wagers]

    def link(self, wagers: Wagers) -> Wagers:
        """Player banking with a collection: every wagering spot pays the club's fee with its bet."""
        fee = self.ctx.options.collection
        if self.house_banks or not fee:
            return wagers
        out = {}
        for seat, bets in wagers.items():
            bets = {k: v for k, v in bets.items() if k != "collection"}
            if bets.get("bet") or bets.get("bank"):
                bets["collection"] = fee
            out[seat] = bets
        return out

    def check_slip(self, wagers: Wagers) -> str | None:
        if not any(b.get("bet") or b.get("bank") for b in wagers.values()):
            return text("message.place_bet")
        return None

    def area_label(self, wager: str) -> str:
        return text(WAGER_LABELS[wager])

    # --- setting -------------------------------------------------------------------------------
    def hand_label(self, hand: str) -> str:
        return text(HAND_LABELS[hand])

    def score(self, cards: Sequence[Card]) -> str:
        if len(cards) != 2:
            return ""
        rank = super9_rank(cards[0], cards[1])
        if rank > PAIR_BASE:
            return text("ds9.score_pair", card=rank_label(cards[0]))
        points, high = divmod(rank, 10)
        label = _label(high)
        if points == 9:
            return text("ds9.score_super9", high=label)
        if points == 1:
            return text("ds9.score_one_point", high=label)
        return text("ds9.score_points", points=points, high=label)

    def shape_ok(self, first: int) -> bool:
        return first == 2

    def shape_message(self) -> str:
        return text("ds9.shape")

    def foul_message(self) -> str:
        return text("ds9.foul")

    def house_way_first(self, cards: Sequence[Card]) -> tuple[int, ...]:
        return house_way(list(cards)).front

    def reminders(self) -> tuple[str, tuple[str, ...]]:
        return text("ds9.reminder_title"), (text("ds9.reminder_split"), text("ds9.reminder_back"),
                                            text("ds9.reminder_rank"), text("ds9.reminder_result"))

    def dealer_label(self, record: Mapping[str, Any] | None) -> str:
        banker = (record or {}).get("banker", "house")
        return text("ds9.banker") if banker == "house" else text("ds9.banker_spot", n=banker)

    def dealer_caption(self, record: Mapping[str, Any]) -> str:
        return text("ds9.caption_banker", hands=self.hands_text(record["dealer"]))

    # --- the dice --------------------------------------------------------------------------------
    def dice_view(self, dice: Sequence[int], record: Mapping[str, Any] | None, wagers: Wagers) -> DiceView:
        banker = HOUSE_SPOT if self.house_banks else next(
            (s for s, b in wagers.items() if b.get("bank")), HOUSE_SPOT)
        players = [s for s in (sorted(wagers) or range(1, self.ctx.seats + 1)) if s != banker]
        mark = text("ds9.banker_mark")
        if not dice:
            return DiceView(text("ds9.dice"), (), 6, text("ds9.dice_wait"), self.positions(0, banker, players, mark))
        if record is not None:
            banker, first = int(record["banker_position"]), int(record["first_position"])
            players = [int(s["seat"]) for s in record["seats"] if not s.get("banker")]
        else:
            first = dice_position(sum(dice), banker)
        note = text("ds9.dice_note", a=dice[0], b=dice[1], c=dice[2], total=sum(dice), banker=banker, first=first)
        return DiceView(text("ds9.dice"), tuple(int(d) for d in dice), 6, note,
                        self.positions(first, banker, players, mark))

    # --- a round -------------------------------------------------------------------------------
    def result_steps(self, record: Mapping[str, Any]) -> list[tuple[str, frozenset[tuple[int, str]], str]]:
        by_seat = {int(s["seat"]): s for s in record["seats"]}
        steps = []
        for seat in record.get("action_order", []):
            entry = by_seat[int(seat)]
            result = entry.get("results", {}).get("bet", {})
            outcome = text(OUTCOME_WORDS[result.get("outcome", "void")])
            comparison = entry.get("comparison")
            if comparison is None:
                caption = text("ds9.caption_foul", spot=seat)
            else:
                caption = text("ds9.caption_spot", spot=seat, front=text(COMPARISON_WORDS[comparison["front"]]),
                               back=text(COMPARISON_WORDS[comparison["back"]]), outcome=outcome)
            if entry.get("commission"):
                caption = text("ds9.caption_commission", caption=caption,
                               amount=self.ctx.money.currency_of(int(entry["commission"])))
            steps.append(("spot", frozenset((int(seat), w) for w in entry.get("results", {})), caption))
        banker = [(int(s["seat"]), w) for s in record["seats"] if s.get("banker") for w in s.get("results", {})]
        if banker:
            steps.append(("bank", frozenset(banker), text("ds9.caption_bank")))
        return steps

    def hand_result(self, seat: Mapping[str, Any], hand: str) -> ResultView | None:
        comparison = seat.get("comparison")
        if not comparison:
            return None
        outcome, label = COMPARISONS[comparison[hand]]
        return ResultView(outcome, text(label), "")

    # --- pays and rules ------------------------------------------------------------------------
    def paytable(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        if self.house_banks:
            bet = text("ds9.pays_commission", commission=pays.percent(o.commission)) if o.commission \
                else pays.to_one(1)
        else:
            bet = pays.to_one(1)
        showdown = [(text("ds9.col_hands"), text("ds9.col_bet"))]
        showdown.extend((text(hands), text(result)) for hands, result in SHOWDOWN)
        notes = [text("ds9.note_commission", commission=pays.percent(o.commission)) if self.house_banks
                 else text("ds9.note_player_bank")]
        if not self.house_banks and o.collection:
            notes.append(text("ds9.note_collection", amount=self.ctx.money.currency_of(o.collection)))
        sections = (pays.wager_section(sheet, [("bet", text("ds9.wager.bet"), bet)]),
                    DocSection(text("ds9.showdown_heading"), tuple(showdown), header=True),
                    DocSection(text("paytable.notes_heading"), paragraphs=tuple(notes)))
        return DocView("paytable", text("paytable.title", game=self.name), (sections,), 0, pays.par_footer(sheet),
                       doc_buttons(0, 1))

    def help(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        play = (text("ds9.help_shoe", decks=o.decks), text("ds9.help_dice"), text("ds9.help_set"),
                text("ds9.help_foul_refuse") if o.foul_setting == "refuse" else text("ds9.help_foul_lose"),
                text("ds9.help_showdown"))
        page1 = (DocSection(text("help.heading_play"), paragraphs=play),
                 DocSection(text("help.heading_example"), paragraphs=(text("ds9.help_example"),),
                            cards=(("6s", "3h"), ("5d", "5c"))))
        order = [text("ds9.rank_pair", card=_label(v)) for v in (6, 5, 4, 3, 2, 1)]
        order += [text("ds9.rank_super9"), text("ds9.rank_8_to_0")]
        ranking = [(text("ds9.col_rank"), text("ds9.col_hand"))]
        ranking.extend((str(i), hand) for i, hand in enumerate(order, 1))
        page2 = (DocSection(text("ds9.ranking_heading"), tuple(ranking), header=True,
                            paragraphs=(text("ds9.rank_ties"),)),
                 DocSection(text("ds9.house_way_heading"), paragraphs=(text("ds9.help_house_way"),)),
                 pays.table_section(self.ctx, o.decks))
        pages = (page1, page2)
        return DocView("help", text("help.title", game=self.name), pages, 0, pays.par_footer(sheet),
                       doc_buttons(0, len(pages)))

    def attract_lines(self) -> tuple[str, ...]:
        return (text("ds9.attract_1"), text("ds9.attract_2"))


def _label(value: int) -> str:
    """The rank label of a Super 9 value (1 is the ace)."""
    return text("card.ranks").split(",")[12 if value == 1 else value - 2].strip()
