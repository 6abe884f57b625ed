"""The war family's screens: Baccarat War (seed 000 FIG. 2) and Blackjack War.

The table of FIG. 2: the dealer area at the top (103), the war pot in the centre with the map of
spots 1-7 (105, 107), and per spot the BAC (119), WAR (100), TIE (120), FOUR_CARD (130) and
WAR_POOL (140) areas. A round is shown as the record says it went: the initial deal card by card,
the side bets (settled on the initial cards), BAC against the dealer, each war step against the
dealer, then the war-pool contest (its contestants, each step's eliminations, the winner), then
the settlement. The war scores shown are the game's own (``war_engine.war_score``); the outcomes
are the record's, never recomputed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from firmware.cards.card import Card, parse_cards
from firmware.games.war_engine import WarHand, WarScoring, war_score
from firmware.games.war_family import FOUR_CARD_CATEGORIES, WarFamilyGame, WarFamilyOptions
from firmware.ui import theme
from firmware.ui.actions import UiAction
from firmware.ui.betting import Wagers, follow, has_chips, short_spot
from firmware.ui.cards import rank_label
from firmware.ui.games import pays
from firmware.ui.games.base import DemoRound, GameUi, HandKey, doc_buttons, result_view, stakes_of
from firmware.ui.layout import Rect, row
from firmware.ui.messages import key, text
from firmware.ui.painter import Painter
from firmware.ui.playback import Beat
from firmware.ui.screens.base import TableScreen
from firmware.ui.view import BetAreaView, CardView, ChromeView, DocSection, DocView, HandView
from firmware.ui.widgets import draw_bet_area, draw_hand, draw_shoe

if TYPE_CHECKING:
    from firmware.math.sheet import ParSheet

DEALER = "dealer"
COMMUNITY = "community"                          #: the community cards (Hold'em War), as a hand key
MAP_SPOTS = 7                                    #: the pot's map always shows spots 1-7 (FIG. 2, 107)

WAGER_LABELS: dict[str, str] = {
    "bac": key("wager.bac"), "war": key("wager.war"), "tie": key("wager.tie"),
    "four_card": key("wager.four_card"), "war_pool": key("wager.war_pool"),
}
#: Shorter names where a wager area is narrow (seven spots).
SHORT_LABELS: dict[str, str] = {"four_card": key("wager.four_card_short"), "war_pool": key("wager.war_pool_short")}
CATEGORY_LABELS: dict[str, str] = {
    "suited_four_of_a_kind": key("four_card.suited_four_of_a_kind"),
    "straight_flush": key("four_card.straight_flush"),
    "four_of_a_kind": key("four_card.four_of_a_kind"),
    "straight": key("four_card.straight"),
    "flush": key("four_card.flush"),
    "two_pair": key("four_card.two_pair"),
    "three_of_a_kind": key("four_card.three_of_a_kind"),
    "pair": key("four_card.pair"),
    "high_card": key("four_card.high_card"),
}
SCORING_HELP: dict[str, str] = {
    WarScoring.BACCARAT.value: key("help.war.scoring_baccarat"),
    WarScoring.HIGH_CARD.value: key("help.war.scoring_high_card"),
    WarScoring.AGGREGATE.value: key("help.war.scoring_aggregate"),
}

# Beat lengths, seconds.
DEAL_S = 0.25
SHOW_S = 0.9
BANNER_S = 1.1


# --- what is visible at a beat ---------------------------------------------------------------------
@dataclass(frozen=True)
class WarReveal:
    """What the table shows from one beat on (hand keys: seat numbers, or ``"dealer"``)."""

    initial: dict[HandKey, int] = field(default_factory=dict)     #: initial cards shown per hand
    war: dict[HandKey, int] = field(default_factory=dict)         #: war cards shown per hand
    community: int = 0
    scores: bool = False
    results: frozenset[tuple[int, str]] = frozenset()        #: (seat, wager) settled on screen
    at_war: frozenset[HandKey] = frozenset()                      #: hands in the war against the dealer
    war_ended: dict[HandKey, str] = field(default_factory=dict)  #: seat -> win / lose / misdeal
    pool: str = ""                                            #: "", contest, done
    pool_live: frozenset[HandKey] = frozenset()
    pool_out: frozenset[HandKey] = frozenset()
    pool_winner: HandKey | None = None
    fresh: tuple[HandKey, str, int] | None = None                 #: the card arriving: (hand, kind, index)
    settled: bool = False


class _Builder:
    """Accumulates the reveal while the timeline is built."""

    def __init__(self) -> None:
        self.initial: dict[HandKey, int] = {}
        self.war: dict[HandKey, int] = {}
        self.community = 0
        self.scores = False
        self.results: set[tuple[int, str]] = set()
        self.at_war: set[HandKey] = set()
        self.war_ended: dict[HandKey, str] = {}
        self.pool = ""
        self.pool_live: set[HandKey] = set()
        self.pool_out: set[HandKey] = set()
        self.pool_winner: HandKey | None = None
        self.beats: list[Beat] = []

    def snap(self, fresh: tuple[HandKey, str, int] | None = None, settled: bool = False) -> WarReveal:
        return WarReveal(dict(self.initial), dict(self.war), self.community, self.scores,
                         frozenset(self.results), frozenset(self.at_war), dict(self.war_ended), self.pool,
                         frozenset(self.pool_live), frozenset(self.pool_out), self.pool_winner, fresh, settled)

    def beat(self, kind: str, duration: float, caption: str = "", banner: str = "",
             fresh: tuple[HandKey, str, int] | None = None, settled: bool = False) -> None:
        self.beats.append(Beat(kind, duration, self.snap(fresh, settled), caption, banner))


def _key(who: int | str) -> HandKey:
    """A hand as the record names it (a seat number, or ``"dealer"``) as a key of the table."""
    return DEALER if who == "dealer" else int(who)


def who_name(who: HandKey) -> str:
    return text("hand.dealer") if who == DEALER else text("hand.spot", n=who)


def names(keys: Sequence[HandKey]) -> str:
    return text("list.separator").join(who_name(k) for k in keys)


def _hands(record: Mapping[str, Any]) -> dict[HandKey, WarHand]:
    """The record's hands as the war engine sees them (for the war scores shown)."""
    hands: dict[HandKey, WarHand] = {}
    for seat in record["seats"]:
        hands[int(seat["seat"])] = WarHand(int(seat["seat"]), parse_cards(seat["cards"]), 0,
                                           parse_cards(seat.get("war_cards", [])))
    dealer = record["dealer"]
    hands[DEALER] = WarHand(99, parse_cards(dealer["cards"]), 0, parse_cards(dealer.get("war_cards", [])))
    return hands


def war_text(mode: WarScoring, hand: WarHand, step: int) -> str:
    """A hand's war score after ``step`` war cards (``war_engine.war_score``); by high card it is
    the war card's rank as the card shows it (J, Q, K, A), not its number."""
    if mode is WarScoring.HIGH_CARD:
        return rank_label(hand.war_cards[step - 1])
    return str(war_score(mode, hand, step))


def war_scores(record: Mapping[str, Any], doc: Mapping[str, Any]) -> tuple[str, ...]:
    """A hand of a war-family record (a seat's or the dealer's) with its war score after each war
    card, labelled as the table shows them ("WAR 9"); () for a hand that went to no war or a record
    of another game."""
    scoring = (record.get("options") or {}).get("war_scoring")
    if not doc.get("war_cards") or scoring is None:
        return ()
    hand = WarHand(0, parse_cards(doc.get("cards", [])), 0, parse_cards(doc["war_cards"]))
    mode = WarScoring(scoring)
    return tuple(text("hand.war_score", score=war_text(mode, hand, step))
                 for step in range(1, len(hand.war_cards) + 1))


class WarFamilyUi(GameUi[WarFamilyGame, WarFamilyOptions]):
    """Screens of a war-family game. Baccarat War and Blackjack War differ only in their help; Hold'em
    War (``games/holdem_war.py``) also names its hands (:meth:`hand_text`, :meth:`score_line`) and
    deals community cards (any record with ``community``)."""

    screen: ClassVar[type[TableScreen]]
    #: Catalogue key of how an initial hand counts (the help's first paragraph).
    counting_help: ClassVar[str]
    #: Catalogue key of a worked example (its cards: :meth:`example_cards`), if the game has one.
    example_help: ClassVar[str | None] = None
    #: Catalogue keys of what the game says about TIE and the pool's ties (how hands tie differs).
    side_bets_caption: ClassVar[str] = key("caption.side_bets")
    tie_help: ClassVar[str] = key("help.war.tie")
    tie_note: ClassVar[str] = key("paytable.tie_note")
    pool_tiers_help: ClassVar[str] = key("help.war.pool_tiers")

    # --- betting ---------------------------------------------------------------------------------
    @property
    def offered(self) -> tuple[str, ...]:
        return self.ctx.game.offered_wagers(self.ctx.options)

    @property
    def war_follows_bac(self) -> bool:
        return self.ctx.options.war_wager == "required"

    def bet_areas(self) -> list[tuple[int, str]]:
        return [(seat, wager) for seat in range(1, self.ctx.seats + 1) for wager in self.offered]

    def link(self, wagers: Wagers) -> Wagers:
        if not self.war_follows_bac or "war" not in self.offered:
            return wagers
        return follow(wagers, "bac", "war")

    def area_label(self, wager: str) -> str:
        return text(WAGER_LABELS[wager])

    def check_slip(self, wagers: Wagers) -> str | None:
        if not has_chips(wagers):
            return text("message.place_bet")
        short = short_spot(wagers, ("bac",))
        return None if short is None else text("message.needs_bac", spot=short[0])

    # --- a round ---------------------------------------------------------------------------------
    def mode(self, record: Mapping[str, Any] | None = None) -> WarScoring:
        options = record["options"] if record else self.ctx.options.to_json()
        return WarScoring(options["war_scoring"])

    def timeline(self, record: Mapping[str, Any]) -> list[Beat]:
        b = _Builder()
        mode = self.mode(record)
        hands = _hands(record)
        seats = [int(s["seat"]) for s in record["seats"]]
        by_seat = {int(s["seat"]): s for s in record["seats"]}
        order: list[HandKey] = [*seats, DEALER]
        for k in order:
            b.initial[k] = 0
            b.war[k] = 0
        for i in range(2):                                          # the initial deal, in order
            for k in order:
                b.initial[k] = i + 1
                b.beat("deal", DEAL_S, text("caption.dealing"), fresh=(k, "initial", i))
        for i in range(len(record.get("community", []))):          # then any community cards
            b.community = i + 1
            b.beat("deal", DEAL_S, text("caption.dealing"), fresh=(COMMUNITY, "community", i))
        b.scores = True
        b.beat("scores", SHOW_S * 0.6, text("caption.scores", dealer=self.hand_text(record["dealer"])))
        side = [(s, w) for s in seats for w in ("tie", "four_card") if w in by_seat[s].get("results", {})]
        if side:
            b.results.update(side)
            b.beat("side_bets", SHOW_S, text(self.side_bets_caption))
        wars = record.get("wars", {})
        warring = [int(s) for s in wars.get("seats", [])]
        decided = [(s, w) for s in seats if s not in warring for w in ("bac", "war")
                   if w in by_seat[s].get("results", {})]
        if decided:
            b.results.update(decided)
            b.beat("compare", SHOW_S, text("caption.compare"))
        if warring:
            self._war(b, mode, hands, warring, int(wars.get("steps", 0)), by_seat)
        pool = record.get("war_pool") or {}
        if pool.get("contestants") or pool.get("pot"):
            self._pool(b, mode, hands, pool, by_seat)
        b.results.update((s, w) for s in seats for w in by_seat[s].get("results", {}))
        b.at_war = set()
        caption = self.settled_caption(record)
        b.beat("settle", 0.0, caption, settled=True)
        return b.beats

    def _war(self, b: _Builder, mode: WarScoring, hands: dict[HandKey, WarHand], warring: list[int],
             steps: int, by_seat: Mapping[int, Mapping[str, Any]]) -> None:
        b.at_war = set(warring) | {DEALER}
        b.beat("war", BANNER_S, text("caption.war", spots=names(warring)), text("banner.war"))
        live = list(warring)
        for step in range(1, steps + 1):
            dealt: list[HandKey] = [*live, DEALER]
            for k in dealt:
                if b.war[k] < step:
                    b.war[k] = step
                    b.beat("deal", DEAL_S, text("caption.war_card", step=step), fresh=(k, "war", step - 1))
            dealer = war_score(mode, hands[DEALER], step)
            ended = []
            for seat in live:
                score = war_score(mode, hands[seat], step)
                if score != dealer:
                    b.war_ended[seat] = "win" if score > dealer else "lose"
                    b.results.update((seat, w) for w in ("bac", "war") if w in by_seat[seat].get("results", {}))
                    ended.append(seat)
            live = [s for s in live if s not in ended]
            b.at_war = set(live) | ({DEALER} if live else set())
            if ended:
                won = [s for s in ended if b.war_ended[s] == "win"]
                lost = [s for s in ended if b.war_ended[s] == "lose"]
                parts = []
                if won:
                    parts.append(text("caption.war_won", spots=names(won)))
                if lost:
                    parts.append(text("caption.war_lost", spots=names(lost)))
                b.beat("war_step", SHOW_S, " ".join(parts))
            else:
                b.beat("war_step", SHOW_S * 0.7, text("caption.war_tied_again"))
        if live:                                                     # max_war_steps or no cards
            for seat in live:
                b.war_ended[seat] = "misdeal"
                b.results.update((seat, w) for w in ("bac", "war") if w in by_seat[seat].get("results", {}))
            b.at_war = set()
            b.beat("war_misdeal", SHOW_S, text("caption.war_misdeal"))

    def _pool(self, b: _Builder, mode: WarScoring, hands: dict[HandKey, WarHand], pool: Mapping[str, Any],
              by_seat: Mapping[int, Mapping[str, Any]]) -> None:
        contestants = [_key(k) for k in pool.get("contestants", [])]
        pot = self.ctx.money.currency_of(int(pool.get("pot", 0)))
        b.pool = "contest"
        b.pool_live = set(contestants)
        everyone: list[HandKey] = [*(s for s in by_seat if by_seat[s]["wagers"].get("war_pool")), DEALER]
        b.pool_out = {k for k in everyone if k not in contestants}
        if len(contestants) > 1:
            b.beat("pool", BANNER_S, text("caption.pool_contest", who=names(contestants), pot=pot),
                   text("banner.war_pool"))
        out_at: dict[int, list[HandKey]] = {}
        for gone in pool.get("eliminated", []):
            out_at.setdefault(int(gone["step"]), []).append(_key(gone["hand"]))
        live = list(contestants)
        for step in range(1, int(pool.get("steps", 0)) + 1):
            for k in sorted(live, key=lambda k: 99 if k == DEALER else k):
                if b.war[k] < step:
                    b.war[k] = step
                    b.beat("deal", DEAL_S, text("caption.pool_card", step=step), fresh=(k, "war", step - 1))
            gone = out_at.get(step, [])
            live = [k for k in live if k not in gone]
            b.pool_live = set(live)
            b.pool_out |= set(gone)
            if gone:
                b.beat("pool_step", SHOW_S, text("caption.pool_out", who=names(gone), step=step))
            else:
                b.beat("pool_step", SHOW_S * 0.7, text("caption.pool_tied_again", step=step))
        winner = pool.get("winner")
        b.pool = "done"
        b.results.update((s, "war_pool") for s in by_seat if "war_pool" in by_seat[s].get("results", {}))
        if winner is None:
            b.pool_live = set()
            b.beat("pool_won", SHOW_S, text("caption.pool_misdeal"))
            return
        b.pool_winner = _key(winner)
        b.pool_live = {b.pool_winner}
        if b.pool_winner == DEALER:
            caption = text("caption.pool_won_dealer")
        elif len(contestants) == 1:
            caption = text("caption.pool_outright", who=who_name(b.pool_winner),
                           amount=self.ctx.money.currency_of(int(pool.get("paid", 0))))
        else:
            caption = text("caption.pool_won", who=who_name(b.pool_winner),
                           amount=self.ctx.money.currency_of(int(pool.get("paid", 0))))
        b.beat("pool_won", BANNER_S, caption)

    def hand_text(self, doc: Mapping[str, Any]) -> str:
        """How a hand of the record (a seat's or the dealer's) scores, as the player reads it."""
        return str(doc.get("hand") or doc["score"])

    def score_line(self, doc: Mapping[str, Any], war: str | None) -> str:
        """What a hand shows under its cards: its score, or its war score once it has war cards."""
        if war is not None:
            return text("hand.war_score", score=war)
        return text("hand.score", score=self.hand_text(doc))

    def war_text(self, mode: WarScoring, hand: WarHand, step: int) -> str:
        """A hand's war score after ``step`` war cards (:func:`war_text`)."""
        return war_text(mode, hand, step)

    # --- the felt's view -------------------------------------------------------------------------
    def felt(self, *, wagers: Wagers, record: Mapping[str, Any] | None, beat: Beat | None,
             progress: float, betting: bool, pending: Sequence[Mapping[str, Any]] = ()) -> WarFeltView:
        ctx = self.ctx
        reveal: WarReveal | None = None
        if record is not None:
            reveal = beat.reveal if beat is not None else self.beats(record)[-1].reveal
        by_seat = {int(s["seat"]): s for s in record["seats"]} if record else {}
        hands = _hands(record) if record else {}
        mode = self.mode(record)

        def cards_of(k: HandKey) -> tuple[tuple[CardView, ...], tuple[CardView, ...]]:
            if reveal is None or k not in hands:
                return (), ()
            hand = hands[k]
            n_init, n_war = reveal.initial.get(k, 0), reveal.war.get(k, 0)
            in_war = k in reveal.at_war or k in reveal.pool_live
            out = k in reveal.pool_out and reveal.pool == "contest"

            def view(card: Card, kind: str, i: int) -> CardView:
                arriving = progress if reveal.fresh == (k, kind, i) else 1.0
                return CardView(str(card), arriving, outline=in_war and kind == "war", dim=out)

            return (tuple(view(c, "initial", i) for i, c in enumerate(hand.initial[:n_init])),
                    tuple(view(c, "war", i) for i, c in enumerate(hand.war_cards[:n_war])))

        def score_of(k: HandKey) -> str:
            if record is None or reveal is None or not reveal.scores or k not in hands:
                return ""
            n_war = reveal.war.get(k, 0)
            doc = by_seat[k] if isinstance(k, int) else record["dealer"]
            return self.score_line(doc, self.war_text(mode, hands[k], n_war) if n_war else None)

        def status_of(k: HandKey) -> str:
            if reveal is None:
                return ""
            if reveal.pool_winner == k:
                return text("hand.status_pot_winner")
            if k in reveal.at_war and k != DEALER:
                return text("hand.status_war")
            if reveal.pool == "contest" and k in reveal.pool_live:
                return text("hand.status_pool")
            return ""

        dealer_cards, dealer_war = cards_of(DEALER)
        dealer = HandView("dealer", text("hand.dealer_label"), dealer_cards, dealer_war, score_of(DEALER),
                          status_of(DEALER), highlight=bool(reveal and (DEALER in reveal.at_war
                                                                        or DEALER in reveal.pool_live)))
        spots = []
        for seat in range(1, ctx.seats + 1):
            bets = (by_seat[seat]["wagers"] if seat in by_seat else {}) if record else wagers.get(seat, {})
            results = by_seat.get(seat, {}).get("results", {})
            areas = []
            for wager in self.offered:
                amount = int(bets.get(wager, 0))
                shown = reveal is not None and (seat, wager) in reveal.results and wager in results
                linked = wager == "war" and self.war_follows_bac
                areas.append(BetAreaView(
                    seat, wager, text(WAGER_LABELS[wager]), amount,
                    ctx.money.credits(amount) if amount else "",
                    result_view(results[wager], int(stakes_of(by_seat[seat]).get(wager, 0))) if shown else None,
                    enabled=betting and not linked, linked=linked,
                    short=text(SHORT_LABELS[wager]) if wager in SHORT_LABELS else ""))
            cards, war = cards_of(seat)
            hand = HandView(f"spot.{seat}.hand", text("hand.spot_label", n=seat), cards, war, score_of(seat),
                            status_of(seat), highlight=bool(reveal and (seat in reveal.at_war
                                                                        or seat in reveal.pool_live)))
            spots.append(SpotView(seat, hand, tuple(areas)))
        pot = self._pot(wagers, record, reveal, by_seat) if "war_pool" in self.offered else None
        community: tuple[CardView, ...] = ()
        if record is not None and reveal is not None:
            community = tuple(CardView(c, progress if reveal.fresh == (COMMUNITY, "community", i) else 1.0)
                              for i, c in enumerate(record.get("community", [])[:reveal.community]))
        return WarFeltView(dealer, tuple(spots), pot, community)

    def _pot(self, wagers: Wagers, record: Mapping[str, Any] | None, reveal: WarReveal | None,
             by_seat: Mapping[int, Mapping[str, Any]]) -> PotView:
        ctx = self.ctx
        ante = int(ctx.options.pool.dealer_ante)
        if record is not None:
            antes = {s: int(d["wagers"].get("war_pool", 0)) for s, d in by_seat.items()}
            pot = int(record.get("war_pool", {}).get("pot", 0)) or sum(antes.values()) + ante
        else:
            antes = {s: int(b.get("war_pool", 0)) for s, b in wagers.items()}
            pot = sum(antes.values()) + (ante if any(antes.values()) else 0)
        marks = []
        for spot in range(1, MAP_SPOTS + 1):
            state = ""
            if reveal is not None and reveal.pool:
                if reveal.pool_winner == spot:
                    state = "winner"
                elif spot in reveal.pool_live:
                    state = "live"
                elif spot in reveal.pool_out:
                    state = "out"
            amount = antes.get(spot, 0)
            marks.append(PotMark(spot, str(spot), spot <= ctx.seats, amount,
                                 ctx.money.credits(amount) if amount else "", state))
        dealer_state = ""
        if reveal is not None and reveal.pool:
            dealer_state = ("winner" if reveal.pool_winner == DEALER else "live" if DEALER in reveal.pool_live
                            else "out")
        return PotView(text("pot.label"), ctx.money.currency_of(pot), ctx.money.credits(pot), tuple(marks),
                       text("pot.dealer_mark"), dealer_state,
                       text("pot.dealer_ante", amount=ctx.money.currency_of(ante)) if ante else "")

    # --- pays and rules --------------------------------------------------------------------------
    def paytable(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        money = self.ctx.money

        def rtp(name: str) -> str:
            return pays.rtp(sheet, name)

        rows: list[tuple[str, ...]] = [pays.wager_header()]
        rows.append((text("wager.bac"), text("paytable.bac_pays"), rtp("bac")))
        if "war" in self.offered:
            war_pays = text("paytable.war_pays_even") if o.war_win_pays == "even" else text("paytable.war_pays_push")
            rows.append((text("wager.war"), war_pays, rtp("war")))
            if sheet is not None and "bac+war" in sheet.wagers:
                rows.append((text("paytable.bac_and_war"), "", rtp("bac+war")))
        rows.append((text("wager.tie"), text("paytable.to_one", n=o.tie_pays), rtp("tie")))
        if "four_card" in self.offered:
            rows.append((text("wager.four_card"), text("paytable.see_table"), rtp("four_card")))
        if "war_pool" in self.offered:
            rows.append((text("wager.war_pool"), text("paytable.pool_pays", commission=pays.percent(o.pool.commission)),
                         rtp("war_pool")))
        sections = [DocSection(text("paytable.main_heading"), tuple(rows), header=True)]
        if "four_card" in self.offered:
            sections.append(pays.category_section(text("paytable.four_card_heading", decks=o.decks),
                                                  FOUR_CARD_CATEGORIES, CATEGORY_LABELS, o.four_card_pays.pays))
        notes = [text(self.tie_note, n=o.tie_pays)]
        if "war_pool" in self.offered:
            notes.append(text("paytable.pool_note", commission=pays.percent(o.pool.commission)))
            if o.pool.dealer_ante:
                notes.append(text("paytable.pool_ante_note", amount=money.currency_of(o.pool.dealer_ante)))
        sections.append(DocSection(text("paytable.notes_heading"), paragraphs=tuple(notes)))
        footer = pays.par_footer(sheet)
        return DocView("paytable", text("paytable.title", game=self.name), (tuple(sections),), 0, footer,
                       doc_buttons(0, 1))

    def help(self, sheet: ParSheet | None) -> DocView:
        o = self.ctx.options
        money = self.ctx.money
        war = o.war_wager == "required"
        play = [text(self.counting_help), text("help.war.bac")]
        play.append(text("help.war.war_required") if war else text("help.war.war_optional"))
        play.append(text("help.war.war_even") if o.war_win_pays == "even" else text("help.war.war_push"))
        play.append(text(SCORING_HELP[o.war_scoring.value]))
        play.append(text("help.war.misdeal", steps=o.max_war_steps))
        page1 = [DocSection(text("help.heading_play"), paragraphs=tuple(play))]
        if self.example_help is not None and o.war_scoring is WarScoring.BACCARAT:
            page1.append(DocSection(text("help.heading_example"), paragraphs=(text(self.example_help),),
                                    cards=self.example_cards()))
        side = [text(self.tie_help, n=o.tie_pays)]
        if "four_card" in self.offered:
            side.append(text("help.war.four_card"))
        if "war_pool" in self.offered:
            side.append(text("help.war.pool"))
            side.append(text(self.pool_tiers_help))
            side.append(text("help.war.pool_commission", commission=pays.percent(o.pool.commission)))
            if o.pool.dealer_ante:
                side.append(text("help.war.pool_ante", amount=money.currency_of(o.pool.dealer_ante)))
        page2 = [DocSection(text("help.heading_side"), paragraphs=tuple(side)), pays.table_section(self.ctx, o.decks)]
        pages = (tuple(page1), tuple(page2))
        return DocView("help", text("help.title", game=self.name), pages, 0, pays.par_footer(sheet),
                       doc_buttons(0, len(pages)))

    def example_cards(self) -> tuple[tuple[str, ...], ...]:
        return ()

    def attract_lines(self) -> tuple[str, ...]:
        lines = [text("attract.war_line")]
        if "war_pool" in self.offered:
            lines.append(text("attract.war_pool_line"))
        return tuple(lines)


# --- the felt's view model -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SpotView:
    seat: int
    hand: HandView
    areas: tuple[BetAreaView, ...]


@dataclass(frozen=True, slots=True)
class PotMark:
    spot: int
    label: str
    open: bool                    #: a spot this terminal's player covers
    ante: int
    ante_text: str
    state: str                    #: "", live, out, winner


@dataclass(frozen=True, slots=True)
class PotView:
    label: str
    amount: str
    credits: str
    marks: tuple[PotMark, ...]
    dealer_label: str
    dealer_state: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class WarFeltView:
    dealer: HandView
    spots: tuple[SpotView, ...]
    pot: PotView | None
    community: tuple[CardView, ...] = ()     #: Hold'em War's community cards, as far as dealt


# --- the table of FIG. 2 ---------------------------------------------------------------------------
MARK_COLOURS = {"live": theme.HIGHLIGHT, "winner": theme.ACCENT, "out": theme.DISABLED}


class WarTableScreen(TableScreen):
    """FIG. 2. With up to three spots the pot is large and each spot has two rows of wager areas;
    with four to seven the pot is shorter and each spot has three rows (``COMPACT_FROM``)."""

    DEALER = Rect(560, 80, 800, 222)
    SHOE = Rect(1500, 96, 110, 150)
    POT = Rect(560, 304, 800, 240)
    SPOTS = Rect(30, 552, 1860, 322)
    POT_COMPACT = Rect(560, 304, 800, 172)
    SPOTS_COMPACT = Rect(20, 484, 1880, 390)
    COMPACT_FROM = 4
    DEALER_CARD_H = 148

    def draw_felt(self, p: Painter, felt: WarFeltView, chrome: ChromeView) -> None:
        self._felt_lines(p)
        origin = draw_shoe(p, self.SHOE)
        self.draw_dealer(p, felt, origin)
        count = max(1, len(felt.spots))
        compact = count >= self.COMPACT_FROM
        if felt.pot is not None:
            self.draw_pot(p, felt.pot, self.POT_COMPACT if compact else self.POT, compact)
        area = self.SPOTS_COMPACT if compact else self.SPOTS
        boxes = row(area, count, 860 if count == 1 else 560, 12 if compact else 20)
        for box, spot in zip(boxes, felt.spots, strict=False):
            self.draw_spot(p, box, spot, origin, chrome, compact)

    def draw_dealer(self, p: Painter, felt: WarFeltView, origin: tuple[int, int]) -> None:
        """The dealer area (103): the dealer's hand (a game with community cards adds them)."""
        draw_hand(p, self.DEALER, felt.dealer, card_h=self.DEALER_CARD_H, origin=origin, label_size=theme.LABEL)

    def _felt_lines(self, p: Painter) -> None:
        arc = Rect(-200, 300, 2320, 1200)
        p.ellipse(arc, theme.FELT_LINE, width=3)

    def draw_pot(self, p: Painter, pot: PotView, r: Rect, compact: bool = False) -> None:
        p.region("pot", r)
        p.ellipse(r, theme.POT)
        p.ellipse(r, theme.FELT_LINE, width=3)
        cx = r.center[0]
        top = 6 if compact else 12
        p.text(pot.label, Rect(cx - 200, r.y + top, 400, 32), theme.LABEL, theme.FELT_LINE)
        p.region("pot.amount", Rect(cx - 200, r.y + top + 30, 400, 44))
        p.text(pot.amount, Rect(cx - 200, r.y + top + 30, 400, 44), theme.METER, theme.TEXT)
        p.text(pot.credits, Rect(cx - 200, r.y + top + 74, 400, 24), theme.SMALL, theme.TEXT_DIM)
        if pot.note and not compact:
            p.text(pot.note, Rect(cx - 200, r.y + 114, 400, 22), theme.MIN_TEXT, theme.TEXT_DIM)
        # The map of spots 1-7 (FIG. 2, 107): along the lower arc of the pot, the dealer at the top.
        lift = 12 if compact else 26
        base = r.bottom - (30 if compact else 46)
        p.region("pot.map", Rect(r.x + 40, base - lift - 30, r.w - 80, lift + 60))
        for i, mark in enumerate(pot.marks):
            t = i / max(1, len(pot.marks) - 1)
            x = r.x + 100 + t * (r.w - 200)
            y = base - round(lift * (1 - (2 * t - 1) ** 2))
            self._mark(p, (x, y), mark.label, mark.state, mark.open, mark.ante > 0, f"pot.spot.{mark.spot}")
        self._mark(p, (r.right - 120, r.y + (44 if compact else 52)), pot.dealer_label, pot.dealer_state, True,
                   False, "pot.dealer", radius=26 if compact else 30)

    def _mark(self, p: Painter, center: tuple[float, float], label: str, state: str, open_: bool,
              ante: bool, name: str, radius: int = 24) -> None:
        x, y = center
        p.region(name, Rect(round(x - radius), round(y - radius), 2 * radius, 2 * radius))
        fill = theme.FELT_DARK if open_ else theme.POT
        p.circle(center, radius, fill)
        ring = MARK_COLOURS.get(state, theme.FELT_LINE if open_ else theme.PANEL_LINE)
        p.circle(center, radius, ring, width=4 if state else 2)
        if ante:
            p.circle((x + radius * 0.75, y - radius * 0.75), 9, theme.chip_colour(5))
        size = theme.MIN_TEXT if len(label) > 2 else theme.BODY
        p.text(label, Rect(round(x - radius), round(y - size / 2 - 1), 2 * radius, size + 2), size,
               theme.TEXT if open_ else theme.TEXT_DIM)
        if state == "winner":
            p.mark("star", (x - radius - 10, y - radius + 4), 12, theme.ACCENT)
        elif state == "out":
            p.mark("cross", (x, y), radius * 0.55, theme.TEXT_DIM)

    def draw_spot(self, p: Painter, box: Rect, spot: SpotView, origin: tuple[int, int], chrome: ChromeView,
                  compact: bool = False) -> None:
        p.region(f"spot.{spot.seat}", box)
        p.rect(box, theme.FELT_DARK, radius=22)
        p.rect(box, theme.HIGHLIGHT if spot.hand.highlight else theme.FELT_LINE, radius=22, width=2)
        card_h = 80 if compact else min(100, max(64, round(box.w * 0.2)))
        hand_box = Rect(box.x + 8, box.y + 4, box.w - 16, 30 + card_h + 34)
        draw_hand(p, hand_box, spot.hand, card_h=card_h, origin=origin)
        rows_top = hand_box.bottom + 4
        by_name = {a.wager: a for a in spot.areas}
        layout = (("bac", "war"), ("tie", "four_card"), ("war_pool",)) if compact else \
            (("bac", "war"), ("tie", "four_card", "war_pool"))
        lines = [[by_name[w] for w in names if w in by_name] for names in layout]
        lines = [line for line in lines if line]
        gap = 8
        height = (box.bottom - 8 - rows_top - gap * (len(lines) - 1)) // max(1, len(lines))
        for i, areas in enumerate(lines):
            line = Rect(box.x + 8, rows_top + i * (height + gap), box.w - 16, height)
            for r, area in zip(line.split_h(*([1] * len(areas)), gap=gap), areas, strict=True):
                action = UiAction("bet", (area.seat, area.wager)) if area.enabled else None
                draw_bet_area(p, r, area, action, chip_label=_chip_text(area.amount))


def _chip_text(amount: int) -> str:
    return f"{amount:,}" if amount else ""


#: The demonstrations' options: the war pool on with a 10-credit house ante (the pool the default
#: jurisdiction profile accepts on a one-seat terminal, docs/math/README.md).
POOL_DEMO: dict[str, Any] = {"pool": {"enabled": True, "dealer_ante": 10}}


class BaccaratWarTable(WarTableScreen):
    pass


class BaccaratWarUi(WarFamilyUi):
    game_id: ClassVar[str] = "baccarat-war"
    screen: ClassVar[type[TableScreen]] = BaccaratWarTable
    counting_help: ClassVar[str] = key("help.war.counting_baccarat")
    example_help: ClassVar[str | None] = key("help.war.example_baccarat")
    #: Seed 000's FIG. 4/7/8 hand: spot 1's Q 3 ties the dealer's 2 A at 3, the war cards 10/10
    #: tie again, 6 against 9 wins it, and the same cards win the war pool.
    demo: ClassVar[DemoRound] = DemoRound(
        "Qs 2d 3h Ah Td Ts 6c 9s", {1: {"bac": 10, "war": 10, "tie": 5, "four_card": 5, "war_pool": 10}},
        {1: {"bac": 25, "war": 25, "tie": 5, "four_card": 5, "war_pool": 10}},
        options=POOL_DEMO, seek="war_step")

    def example_cards(self) -> tuple[tuple[str, ...], ...]:
        """FIG. 8: spot 7's Q 3, war cards 10 and 6, scores 9 against the dealer's 2 1 10 9."""
        return (("Qs", "3h", "Td", "6c"), ("2d", "Ah", "Ts", "9s"))


class BlackjackWarUi(WarFamilyUi):
    game_id: ClassVar[str] = "blackjack-war"
    screen: ClassVar[type[TableScreen]] = WarTableScreen
    counting_help: ClassVar[str] = key("help.war.counting_blackjack")
    demo: ClassVar[DemoRound] = DemoRound(
        "Ks Qd 7h 7c 9h 4s", {1: {"bac": 10, "war": 10, "tie": 5, "four_card": 5, "war_pool": 10}},
        {1: {"bac": 25, "war": 25, "tie": 5, "four_card": 5, "war_pool": 10}},
        options=POOL_DEMO, seek="war_step")
