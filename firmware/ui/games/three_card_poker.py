"""Three Card Poker's screens (rules/three-card-poker.md; kernel ``firmware.games.three_card_poker``).

The table: the dealer's three (or four) cards at the top beside the shoe, the qualifying rule and
the ante bonus printed on the felt, and per spot its three cards and its hand's name over the
ANTE, PLAY, ANTE BONUS, PAIR PLUS and (when offered) 6-CARD BONUS areas. ANTE, PAIR PLUS and
6-CARD BONUS take chips before the deal; PLAY is the decision: after the deal the round waits
(``play_or_fold``), the spot shows its cards (the request's ``view``), the dealer's stay face down,
and the bottom row holds PLAY and FOLD. The round is then shown from its record: each seat's
decision, the dealer's cards turned with its hand and whether it qualifies, PAIR PLUS and 6-CARD
BONUS (paid on the cards alone), then ANTE, PLAY and the ante bonus, then the settlement. Hand
names come from the game's own evaluator (``games/poker.py``); outcomes are the record's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from firmware.cards.card import Card, parse_cards
from firmware.cards.poker3 import best3_of, eval3
from firmware.games.base import Outcome
from firmware.games.three_card_poker import (
    AnteBonusPays,
    PairPlusPays,
    SixCardPays,
    ThreeCardPoker,
    ThreeCardPokerOptions,
)
from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.betting import Wagers, has_chips, short_spot
from firmware.ui.cards import rank_label
from firmware.ui.games import pays
from firmware.ui.games.base import DemoRound, GameUi, HandKey, doc_buttons, result_view
from firmware.ui.games.poker import CATEGORY_LABELS, hand_name3, rank_name
from firmware.ui.layout import Rect, row
from firmware.ui.messages import key, text
from firmware.ui.painter import Painter
from firmware.ui.playback import Beat
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import (
    BetAreaView,
    ButtonView,
    CardView,
    ChromeView,
    DocSection,
    DocView,
    HandView,
    ResultView,
)
from firmware.ui.widgets import draw_bet_area, draw_button, draw_hand, draw_shoe

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet

DEALER = "dealer"
#: The areas of a spot, in drawing order: the three wagers placed before the deal, PLAY (the
#: decision) and the ante bonus (paid on the ANTE; shown on its own).
AREAS = ("ante", "play", "ante_bonus", "pair_plus", "six_card")
PLACED = ("ante", "pair_plus", "six_card")
LABELS: dict[str, str] = {
    "ante": key("tcp.wager.ante"), "play": key("tcp.wager.play"), "ante_bonus": key("tcp.wager.ante_bonus"),
    "pair_plus": key("tcp.wager.pair_plus"), "six_card": key("tcp.wager.six_card"),
}
SHORT: dict[str, str] = {
    "ante_bonus": key("tcp.wager.ante_bonus_short"), "pair_plus": key("tcp.wager.pair_plus_short"),
    "six_card": key("tcp.wager.six_card_short"),
}
SHOWDOWN: dict[str, str] = {
    "win": key("tcp.caption.showdown_win"), "lose": key("tcp.caption.showdown_lose"),
    "push": key("tcp.caption.showdown_push"), "fold": key("tcp.caption.showdown_fold"),
}

# Beat lengths, seconds.
DEAL_S = 0.25
SHOW_S = 1.0


@dataclass(frozen=True)
class TcpReveal:
    """What the table shows from one beat on (hands: seat numbers, or ``"dealer"``)."""

    shown: dict[HandKey, int] = field(default_factory=dict)   #: cards on the table per hand
    dealer_up: bool = False                                    #: the dealer's cards turned
    decided: frozenset[int] = frozenset()                      #: seats whose PLAY / FOLD is shown
    results: frozenset[tuple[int, str]] = frozenset()          #: (seat, wager) settled on screen
    fresh: tuple[HandKey, int] | None = None                   #: the card arriving: (hand, index)
    settled: bool = False


@dataclass(frozen=True, slots=True)
class TcpSpotView:
    seat: int
    hand: HandView
    areas: tuple[BetAreaView, ...]
    decisions: tuple[ButtonView, ...] = ()     #: PLAY / FOLD on the spot itself (several spots)


@dataclass(frozen=True, slots=True)
class TcpFeltView:
    dealer: HandView
    spots: tuple[TcpSpotView, ...]
    rule: str                      #: the dealer's qualifying rule, printed on the felt
    bonus: str                     #: the ante bonus pays, printed on the felt


HINTS: dict[str, str] = {"play": key("tcp.button.play"), "fold": key("tcp.button.fold")}


class ThreeCardPokerTable(TableScreen):
    """The dealer at the top beside the shoe, the rules printed across the felt, the spots below."""

    DEALER = Rect(610, 80, 700, 240)
    SHOE = Rect(1500, 96, 110, 150)
    RULE = Rect(360, 332, 1200, 86)
    SPOTS = Rect(30, 426, 1860, 448)
    COMPACT_FROM = 4
    DEALER_CARD_H = 150

    def draw_felt(self, p: Painter, felt: TcpFeltView, chrome: ChromeView) -> None:
        p.ellipse(Rect(-200, 300, 2320, 1200), theme.FELT_LINE, width=3)
        origin = draw_shoe(p, self.SHOE)
        draw_hand(p, self.DEALER, felt.dealer, card_h=self.DEALER_CARD_H, origin=origin, label_size=theme.LABEL)
        p.region("rule", self.RULE)
        p.text(felt.rule, Rect(self.RULE.x, self.RULE.y, self.RULE.w, 40), theme.LABEL, theme.ACCENT)
        p.text(felt.bonus, Rect(self.RULE.x, self.RULE.y + 44, self.RULE.w, 34), theme.BODY, theme.FELT_LINE)
        count = max(1, len(felt.spots))
        compact = count >= self.COMPACT_FROM
        for box, spot in zip(row(self.SPOTS, count, 860 if count == 1 else 560, 12 if compact else 20),
                             felt.spots, strict=False):
            self.draw_spot(p, box, spot, origin, compact)

    def draw_spot(self, p: Painter, box: Rect, spot: TcpSpotView, origin: tuple[int, int], compact: bool) -> None:
        p.region(f"spot.{spot.seat}", box)
        p.rect(box, theme.FELT_DARK, radius=22)
        p.rect(box, theme.HIGHLIGHT if spot.hand.highlight else theme.FELT_LINE, radius=22, width=2)
        card_h = 96 if compact else 120
        hand_box = Rect(box.x + 8, box.y + 4, box.w - 16, 30 + card_h + 34)
        draw_hand(p, hand_box, spot.hand, card_h=card_h, origin=origin)
        by_name = {a.wager: a for a in spot.areas}
        layout = (("ante", "play"), ("ante_bonus",), ("pair_plus", "six_card")) if compact else \
            (("ante", "play", "ante_bonus"), ("pair_plus", "six_card"))
        lines = [[by_name[w] for w in names if w in by_name] for names in layout]
        lines = [line for line in lines if line]
        top, gap = hand_box.bottom + 4, 8
        if spot.decisions:                                 # this spot's PLAY / FOLD, above its areas
            line = Rect(box.x + 8, top, box.w - 16, 64)
            for r, button in zip(line.split_h(*([1] * len(spot.decisions)), gap=gap), spot.decisions, strict=True):
                draw_button(p, r, button, size=theme.BODY)
            top = line.bottom + gap
        height = (box.bottom - 8 - top - gap * (len(lines) - 1)) // max(1, len(lines))
        for i, areas in enumerate(lines):
            line = Rect(box.x + 8, top + i * (height + gap), box.w - 16, height)
            for r, area in zip(line.split_h(*([1] * len(areas)), gap=gap), areas, strict=True):
                action = UiAction("bet", (area.seat, area.wager)) if area.enabled else None
                draw_bet_area(p, r, area, action, chip_label=f"{area.amount:,}" if area.amount else "")


def _seat_strength(seat: Mapping[str, Any]) -> int:
    return eval3(parse_cards(seat["cards"]))


class ThreeCardPokerUi(GameUi[ThreeCardPoker, ThreeCardPokerOptions]):
    game_id: ClassVar[str] = "three-card-poker"
    screen: ClassVar[type[TableScreen]] = ThreeCardPokerTable
    #: A straight (J-10-9) against the dealer's queen-high, which qualifies: ANTE +10, PLAY +10,
    #: the ante bonus 1 to 1 (+10), PAIR PLUS 6 to 1 (+30); with the dealer's Q 8 the six cards make
    #: a queen-high straight: 6-CARD BONUS 10 to 1 (+50).
    demo: ClassVar[DemoRound] = DemoRound(
        "9h Qs Td 8d Jc 2c", {1: {"ante": 10, "pair_plus": 5, "six_card": 5}},
        {1: {"ante": 25, "pair_plus": 10, "six_card": 5}},
        options={"six_card": True}, decisions=((1, "play"),), seek="compare")

    # --- betting ---------------------------------------------------------------------------------
    @property
    def offered(self) -> tuple[str, ...]:
        return self.ctx.options.offered

    def bet_areas(self) -> list[tuple[int, str]]:
        return [(seat, wager) for seat in self.seats() for wager in self.offered]

    def seats(self) -> list[int]:
        """The seats this terminal's player covers (the banker seat places no wager)."""
        banker = self.ctx.options.banker_seat
        return [s for s in range(1, self.ctx.seats + 1) if s != banker]

    def check_slip(self, wagers: Wagers) -> str | None:
        if not has_chips(wagers):
            return text("message.place_bet")
        short = short_spot(wagers, tuple(self.ctx.options.mandatory))
        return None if short is None else text("tcp.message.needs", spot=short[0], wager=text(LABELS[short[1]]))

    def area_label(self, wager: str) -> str:
        return text(LABELS[wager])

    # --- the decision ----------------------------------------------------------------------------
    def decision_buttons(self, request: Mapping[str, Any]) -> list[ButtonView]:
        """PLAY and FOLD in the bottom row when the player covers one spot; with several, each
        spot that waits holds its own pair (:meth:`spot_buttons`) and the bottom row stays as it is."""
        return self.spot_buttons(request, "") if len(self.seats()) == 1 else []

    def spot_buttons(self, request: Mapping[str, Any], suffix: str | None = None) -> list[ButtonView]:
        """PLAY and FOLD for one request (names ``button.play`` + ``suffix``, by default ``.<seat>``)."""
        seat = int(request["seat"])
        end = f".{seat}" if suffix is None else suffix
        styles = {"play": ("button.play", text("tcp.button.play"), "deal"),
                  "fold": ("button.fold", text("tcp.button.fold"), "normal")}
        return [ButtonView(styles[a][0] + end, styles[a][1], UiAction("decide", (seat, a)), True, styles[a][2])
                for a in request.get("actions", ()) if a in styles]

    # --- a round ---------------------------------------------------------------------------------
    def timeline(self, record: Mapping[str, Any]) -> list[Beat]:
        seats = [s for s in record["seats"] if not s.get("banker")]
        numbers = [int(s["seat"]) for s in seats]
        dealer = record["dealer"]
        n_dealer = len(dealer["cards"])
        beats: list[Beat] = []
        hands: list[HandKey] = [*numbers, DEALER]                   # in the dealing order
        shown: dict[HandKey, int] = dict.fromkeys(hands, 0)
        decided: set[int] = set()
        results: set[tuple[int, str]] = set()

        def beat(kind: str, duration: float, caption: str, *, up: bool = False, fresh: tuple[HandKey, int] | None = None,
                 settled: bool = False) -> None:
            beats.append(Beat(kind, duration, TcpReveal(dict(shown), up, frozenset(decided), frozenset(results),
                                                        fresh, settled), caption))

        if record.get("decisions"):
            # The player has seen these cards while deciding: they are on the table at once.
            shown.update({k: 3 for k in numbers})
            shown[DEALER] = n_dealer
            beat("dealt", SHOW_S * 0.5, text("tcp.caption.dealt"))
        else:
            for i in range(3):
                for k in hands:
                    shown[k] = i + 1
                    beat("deal", DEAL_S, text("caption.dealing"), fresh=(k, i))
            if n_dealer == 4:
                shown[DEALER] = 4
                beat("deal", DEAL_S, text("caption.dealing"), fresh=(DEALER, 3))
        deciders = [s for s in seats if s.get("decision")]
        if deciders:
            decided.update(int(s["seat"]) for s in deciders)
            results.update((int(s["seat"]), "ante") for s in deciders if s["decision"] == "fold")
            parts = []
            for s in deciders:
                spot = text("hand.spot", n=s["seat"])
                if s["decision"] == "play":
                    amount = self.ctx.money.currency_of(int(s.get("stakes", {}).get("play", s["wagers"]["ante"])))
                    parts.append(text("tcp.caption.plays", spot=spot, amount=amount))
                else:
                    parts.append(text("tcp.caption.folds", spot=spot))
            beat("decision", SHOW_S, " ".join(parts))
        hand = hand_name3(best3_of(parse_cards(dealer["cards"])))
        caption = (text("tcp.caption.dealer_qualifies", hand=hand) if dealer.get("qualified")
                   else text("tcp.caption.dealer_not_qualified", hand=hand))
        beat("reveal", SHOW_S * 1.2, caption, up=True)
        side = [(int(s["seat"]), w) for s in seats for w in ("pair_plus", "six_card") if w in s.get("results", {})]
        if side:
            results.update(side)
            six = any(w == "six_card" for _, w in side)
            beat("side_bets", SHOW_S, text("tcp.caption.side_six" if six else "tcp.caption.side"), up=True)
        played = [s for s in seats if s.get("decision") == "play"]
        if played:
            results.update((int(s["seat"]), w) for s in played for w in ("ante", "play", "ante_bonus"))
            beat("compare", SHOW_S * 1.2, " ".join(self._showdown(record, s) for s in played), up=True)
        results.update((int(s["seat"]), w) for s in seats for w in [*s.get("results", {}), "ante_bonus"])
        caption = self.settled_caption(record)
        beat("settle", 0.0, caption, up=True, settled=True)
        return beats

    def _showdown(self, record: Mapping[str, Any], seat: Mapping[str, Any]) -> str:
        spot = text("hand.spot", n=seat["seat"])
        how = str(seat.get("showdown"))
        if how == "not_qualified":
            if record.get("options", {}).get("not_qualified", "ante_wins") == "ante_wins":
                return text("tcp.caption.not_qualified_ante_wins", spot=spot)
            return text("tcp.caption.not_qualified_push", spot=spot)
        return text(SHOWDOWN[how], spot=spot)

    # --- the felt's view -------------------------------------------------------------------------
    def felt(self, *, wagers: Wagers, record: Mapping[str, Any] | None, beat: Beat | None,
             progress: float, betting: bool, pending: Sequence[Mapping[str, Any]] = (),
             decided: Sequence[Mapping[str, Any]] = ()) -> TcpFeltView:
        ctx = self.ctx
        reveal: TcpReveal | None = None
        if record is not None:
            reveal = beat.reveal if beat is not None else self.beats(record)[-1].reveal
        by_seat = {int(s["seat"]): s for s in record["seats"]} if record else {}
        asking = {int(r["seat"]): r for r in pending}
        answered = {int(d["seat"]): d for d in decided}
        dealer = self._dealer(record, reveal, progress, bool(pending))
        spots = []
        for seat in self.seats():
            doc = by_seat.get(seat)
            bets = (doc["wagers"] if doc else {}) if record else wagers.get(seat, {})
            stakes = (doc.get("stakes") or doc["wagers"]) if doc else {}
            results = dict(doc.get("results", {})) if doc else {}
            if doc and doc.get("ante_bonus", {}).get("net"):
                results["ante_bonus"] = {"outcome": "win", "net": doc["ante_bonus"]["net"]}
            areas = []
            for wager in AREAS:
                if wager in ("six_card",) and wager not in self.offered:
                    continue
                amount = int(bets.get(wager, 0))
                if wager == "play" and reveal is not None and seat in reveal.decided:
                    amount = int(stakes.get("play", 0))
                shown = reveal is not None and (seat, wager) in reveal.results and wager in results
                result: ResultView | None = None
                if shown and doc is not None and wager == "ante_bonus":   # "4 TO 1": its pay, part of what ANTE paid
                    result = ResultView(Outcome.WIN, text("tcp.result.bonus", n=doc["ante_bonus"]["pays"]), "")
                elif shown:
                    result = result_view(results[wager], int(stakes.get(wager, 0)))
                areas.append(BetAreaView(
                    seat, wager, text(LABELS[wager]), amount, ctx.money.credits(amount) if amount else "", result,
                    enabled=betting and wager in PLACED, linked=False,
                    short=text(SHORT[wager]) if wager in SHORT else ""))
            hand = (self._answered(seat, answered[seat]) if seat in answered and seat not in asking
                    else self._hand(seat, doc, reveal, progress, asking.get(seat)))
            buttons = self.spot_buttons(asking[seat]) if seat in asking and len(self.seats()) > 1 else []
            spots.append(TcpSpotView(seat, hand, tuple(areas), tuple(buttons)))
        return TcpFeltView(dealer, tuple(spots), self.rule(), self.bonus_line())

    def _dealer(self, record: Mapping[str, Any] | None, reveal: TcpReveal | None, progress: float,
                waiting: bool) -> HandView:
        label = text("hand.dealer_label")
        if waiting:                                       # dealt, face down, while the player decides
            backs = tuple(CardView(None) for _ in range(self.ctx.options.dealer_cards))
            return HandView(DEALER, label, backs)
        if record is None or reveal is None:
            return HandView(DEALER, label)
        doc = record["dealer"]
        cards = doc["cards"][:reveal.shown.get(DEALER, 0)]
        views = tuple(CardView(c if reveal.dealer_up else None,
                               progress if reveal.fresh == (DEALER, i) else 1.0,
                               dim=reveal.dealer_up and "best3" in doc and c not in doc["best3"])
                      for i, c in enumerate(cards))
        if not reveal.dealer_up:
            return HandView(DEALER, label, views)
        qualified = bool(doc.get("qualified"))
        status = text("tcp.hand.qualifies") if qualified else text("tcp.hand.not_qualified")
        return HandView(DEALER, label, views, (), hand_name3(best3_of(parse_cards(doc["cards"]))), status,
                        highlight=qualified)

    def _answered(self, seat: int, decided: Mapping[str, Any]) -> HandView:
        """A spot that has played or folded while another still decides: its cards and its answer."""
        cards = list((decided.get("view") or {}).get("cards", ()))
        folded = decided.get("action") == "fold"
        score = hand_name3(eval3(parse_cards(cards))) if len(cards) == 3 else ""
        status = text("tcp.hand.folded") if folded else text("tcp.hand.plays")
        return HandView(f"spot.{seat}.hand", text("hand.spot_label", n=seat),
                        tuple(CardView(c, dim=folded) for c in cards), (), score, status)

    def _hand(self, seat: int, doc: Mapping[str, Any] | None, reveal: TcpReveal | None, progress: float,
              request: Mapping[str, Any] | None) -> HandView:
        name, label = f"spot.{seat}.hand", text("hand.spot_label", n=seat)
        if request is not None:                           # the decision: the cards the player may see
            cards = list((request.get("view") or {}).get("cards", ()))
            if request.get("hint") in HINTS:
                status = text("tcp.hand.hint", action=text(HINTS[request["hint"]]))
            else:                                         # the spot's own buttons say it when there are several
                status = text("tcp.hand.deciding") if len(self.seats()) == 1 else ""
            score = hand_name3(eval3(parse_cards(cards))) if len(cards) == 3 else ""
            return HandView(name, label, tuple(CardView(c) for c in cards), (), score, status, highlight=True)
        if doc is None or reveal is None:
            return HandView(name, label)
        n = reveal.shown.get(seat, 0)
        folded = seat in reveal.decided and doc.get("decision") == "fold"
        views = tuple(CardView(c, progress if reveal.fresh == (seat, i) else 1.0, dim=folded)
                      for i, c in enumerate(doc["cards"][:n]))
        score = hand_name3(_seat_strength(doc)) if n == 3 else ""
        status = text("tcp.hand.folded") if folded else ""
        commission = doc.get("results", {}).get("commission")
        if commission is not None and reveal.settled:      # banking = player: the house's fee
            status = " ".join(p for p in (status, text("tcp.hand.commission",
                                                         amount=self.ctx.money.signed(int(commission["net"])))) if p)
        return HandView(name, label, views, (), score, status)

    # --- what the felt says about the rules -------------------------------------------------------
    def rule(self) -> str:
        """The dealer's qualifying rule (``dealer_qualifies``: none, pair, a rank, three ranks)."""
        q = self.ctx.options.dealer_qualifies
        if q == "none":
            return text("tcp.rule.always")
        if q == "pair":
            return text("tcp.rule.pair")
        ranks = [Card.parse(f"{r}s") for r in q.split("-")]
        if len(ranks) == 1:
            return text("tcp.rule.rank", rank=rank_name(ranks[0].rank))
        return text("tcp.rule.ranks", ranks="-".join(rank_label(c) for c in ranks))

    def bonus_line(self) -> str:
        o = self.ctx.options.ante_bonus_pays
        parts = [text("tcp.bonus_item", hand=text(CATEGORY_LABELS[c]), n=getattr(o, c))
                 for c in AnteBonusPays.CATEGORIES if getattr(o, c)]
        return text("tcp.bonus_line", pays=text("tcp.separator").join(parts)) if parts else ""

    # --- pays and rules --------------------------------------------------------------------------
    def paytable(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options

        def rtp(name: str) -> str:
            return pays.rtp(sheet, name)

        rows: list[tuple[str, ...]] = [pays.wager_header()]
        rows.append((text("tcp.paytable.ante_play"), text("tcp.paytable.ante_play_pays"), rtp("ante")))
        rows.append((text("tcp.wager.ante_bonus"), text("paytable.see_table"), ""))
        rows.append((text("tcp.wager.pair_plus"), text("paytable.see_table"), rtp("pair_plus")))
        if "six_card" in self.offered:
            rows.append((text("tcp.wager.six_card"), text("paytable.see_table"), rtp("six_card")))
        page1 = [DocSection(text("paytable.main_heading"), tuple(rows), header=True),
                 pays.category_section(text("tcp.paytable.ante_bonus_heading"), AnteBonusPays.CATEGORIES,
                                       CATEGORY_LABELS, o.ante_bonus_pays.pays),
                 pays.category_section(text("tcp.paytable.pair_plus_heading"), PairPlusPays.CATEGORIES,
                                       CATEGORY_LABELS, o.pair_plus_pays.pays)]
        if "six_card" in self.offered:
            page1.append(pays.category_section(text("tcp.paytable.six_card_heading"), SixCardPays.CATEGORIES,
                                               CATEGORY_LABELS, o.six_card_pays.pays))
        notes = [self.rule(), self._not_qualified_note(), text("tcp.paytable.fold_note")]
        page1.append(DocSection(text("paytable.notes_heading"), paragraphs=tuple(notes)))
        return DocView("paytable", text("paytable.title", game=self.name), (tuple(page1),), 0,
                       pays.par_footer(sheet), doc_buttons(0, 1))

    def _not_qualified_note(self) -> str:
        if self.ctx.options.not_qualified == "ante_wins":
            return text("tcp.paytable.not_qualified_ante_wins")
        return text("tcp.paytable.not_qualified_push")

    def help(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        play = [text("tcp.help.deal"), text("tcp.help.decide"), self.rule(), self._not_qualified_note(),
                text("tcp.help.compare"), text("tcp.help.ante_bonus")]
        if o.dealer_cards == 4:
            play.append(text("tcp.help.dealer_four"))
        page1 = [DocSection(text("help.heading_play"), paragraphs=tuple(play)),
                 DocSection(text("tcp.help.ranking_heading"), paragraphs=(text("tcp.help.ranking"),),
                            cards=(("As", "Ks", "Qs"), ("7h", "7d", "7c"), ("4d", "3c", "2h")))]
        side = [text("tcp.help.pair_plus")]
        if "six_card" in self.offered:
            side.append(text("tcp.help.six_card"))
        mandatory = text("tcp.separator").join(text(LABELS[w]) for w in o.mandatory)
        if mandatory:
            side.append(text("tcp.help.mandatory", wagers=mandatory))
        if o.hints:
            side.append(text("tcp.help.hints"))
        page2 = [DocSection(text("tcp.help.side_heading"), paragraphs=tuple(side)),
                 pays.table_section(self.ctx, 1, text("tcp.help.one_deck"))]
        pages = (tuple(page1), tuple(page2))
        return DocView("help", text("help.title", game=self.name), pages, 0, pays.par_footer(sheet),
                       doc_buttons(0, len(pages)))

    def attract_lines(self) -> tuple[str, ...]:
        best = max(getattr(self.ctx.options.pair_plus_pays, c) for c in PairPlusPays.CATEGORIES)
        return (text("tcp.attract.line"), text("tcp.attract.pair_plus", n=best))



__all__ = ["ThreeCardPokerTable", "ThreeCardPokerUi", "TcpFeltView", "TcpReveal", "TcpSpotView"]
