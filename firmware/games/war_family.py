"""The war family: Baccarat War, Blackjack War and Hold'em War (seed 000; rules/baccarat-war.md).

The three games share wagers, dealing, side bets, the wars against the dealer, the war pool and the
settlement; :class:`WarFamilyGame` holds all of it once. A game module only says how an initial hand
scores (and, for Hold'em War, deals the community cards).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from firmware.cards.card import Card, format_cards
from firmware.cards.poker4 import category4
from firmware.cards.shoe import standard_shoe
from firmware.cards.source import CardSource
from firmware.games.base import Game, Outcome, Settlement, WagerResult, Wagers
from firmware.games.errors import WagerError
from firmware.games.options import GameOptions, Percent, percent_fraction
from firmware.games.pay_table import PayTable, pay
from firmware.games.results import paid
from firmware.games.war_engine import (
    DEALER,
    DealerWarResult,
    PoolContestResult,
    WarEnd,
    WarHand,
    WarScoring,
    pool_contest,
    pool_contestants,
    pool_payout,
    war_against_dealer,
)

#: FOUR_CARD categories in the order of the rules file (8 decks, best first).
FOUR_CARD_CATEGORIES: tuple[str, ...] = (
    "suited_four_of_a_kind",
    "straight_flush",
    "four_of_a_kind",
    "straight",
    "flush",
    "two_pair",
    "three_of_a_kind",
    "pair",
    "high_card",
)


class FourCardPays(PayTable):
    """FOUR_CARD pay table, ``N`` meaning N:1; 0 loses. Default: the rules file's 8-deck table.

    On the command line: ``four_card_pays=1000,100,50,22,16,13,11`` lists the pays in the order of
    :data:`FOUR_CARD_CATEGORIES`; categories left out lose.
    """

    CATEGORIES: ClassVar[tuple[str, ...]] = FOUR_CARD_CATEGORIES
    SHORT_LIST_LOSES: ClassVar[bool] = True

    suited_four_of_a_kind: int = pay(1000)
    straight_flush: int = pay(100)
    four_of_a_kind: int = pay(50)
    straight: int = pay(22)
    flush: int = pay(16)
    two_pair: int = pay(13)
    three_of_a_kind: int = pay(11)
    pair: int = pay(0)
    high_card: int = pay(0)


class PoolOptions(GameOptions):
    """The war pool (rules step 6)."""

    enabled: bool = True
    dealer_ante: int = Field(0, ge=0, le=1_000_000, description="credits the house adds to every pot")
    commission: Percent = Field(Decimal(5), ge=0, lt=100, description="percent of a seat's win kept")



class WarFamilyOptions(GameOptions):
    """Options shared by the war family; each game narrows the defaults and allowed scoring modes."""

    ALLOWED_SCORING: ClassVar[tuple[WarScoring, ...]] = tuple(WarScoring)

    decks: int = Field(8, ge=1, le=16)
    war_wager: Literal["required", "optional"] = "required"
    war_win_pays: Literal["push", "even"] = "push"
    war_scoring: WarScoring = WarScoring.BACCARAT
    max_war_steps: int = Field(30, ge=1, le=1000)
    tie_pays: int = Field(8, ge=1, le=100_000)
    four_card: bool = True
    four_card_pays: FourCardPays = FourCardPays()
    pool: PoolOptions = PoolOptions()

    @model_validator(mode="before")
    @classmethod
    def _one_deck_table(cls, data: Any) -> Any:
        """With one deck a suited four of a kind cannot be dealt: the default table drops it."""
        if isinstance(data, Mapping) and "four_card_pays" not in data:
            decks = data.get("decks", cls.model_fields["decks"].default)
            if str(decks).strip() == "1":
                return {**data, "four_card_pays": {"suited_four_of_a_kind": 0}}
        return data

    @model_validator(mode="after")
    def _possible(self) -> WarFamilyOptions:
        if self.war_scoring not in self.ALLOWED_SCORING:
            allowed = ", ".join(m.value for m in self.ALLOWED_SCORING)
            raise ValueError(f"war_scoring {self.war_scoring.value!r} is not allowed here; use {allowed}")
        if self.decks == 1 and self.four_card and self.four_card_pays.suited_four_of_a_kind:
            raise ValueError(
                "four_card_pays.suited_four_of_a_kind: a suited four of a kind is impossible with 1 deck"
            )
        return self


@dataclass(slots=True)
class SeatState:
    seat: int
    wagers: dict[str, int]
    hand: WarHand
    initial_result: int = 0           #: +1 above the dealer, -1 below, 0 tied (war)
    war_end: WarEnd | None = None


@dataclass(slots=True)
class WarRound:
    options: WarFamilyOptions
    seats: list[SeatState]
    dealer: WarHand
    community: list[Card] = field(default_factory=list)
    dealer_war: DealerWarResult | None = None
    pool: PoolContestResult | None = None
    pot: int = 0
    pool_paid: int = 0
    pool_commission: int = 0
    settlement: Settlement | None = None


class WarFamilyGame(Game[WarFamilyOptions, WarRound]):
    """Wagers BAC, WAR, TIE, FOUR_CARD, WAR_POOL against the dealer, wars and the war pool."""

    wager_names: ClassVar[tuple[str, ...]] = ("bac", "war", "tie", "four_card", "war_pool")
    options_model: ClassVar[type[WarFamilyOptions]] = WarFamilyOptions

    # --- what a game module supplies ------------------------------------------------------------
    @abstractmethod
    def hand_score(self, cards: list[Card], community: list[Card]) -> int:
        """The initial hand's score (higher is better; equal starts a war)."""

    def score_json(self, score: int) -> int | str:
        """How a score appears in the record (the number itself by default)."""
        return score

    def describe_hand(self, cards: list[Card], community: list[Card]) -> str | None:
        return None

    def deal_community(self, state: WarRound, source: CardSource) -> None:
        """Cards shared by every hand (Hold'em War); none by default."""

    def shoe(self, options: WarFamilyOptions) -> tuple[Card, ...]:
        return standard_shoe(options.decks)

    # --- betting -------------------------------------------------------------------------------
    def offered_wagers(self, options: WarFamilyOptions) -> tuple[str, ...]:
        offered = ["bac", "war", "tie"]
        if options.four_card:
            offered.append("four_card")
        if options.pool.enabled:
            offered.append("war_pool")
        return tuple(offered)

    def validate_wagers(self, options: WarFamilyOptions, wagers: Wagers) -> None:
        offered = self.offered_wagers(options)
        for seat, bets in sorted(wagers.items()):
            for name in bets:
                if name not in offered:
                    raise WagerError(
                        f"seat {seat}: {self.id} offers no wager {name!r} here; offered: {', '.join(offered)}"
                    )
            if not bets.get("bac"):
                raise WagerError(f"seat {seat}: every seat that plays needs a bac wager")
            war = bets.get("war", 0)
            if options.war_wager == "required" and war != bets["bac"]:
                raise WagerError(
                    f"seat {seat}: war must equal bac ({bets['bac']}) when war_wager is required, not {war}"
                )

    def automatic_wagers(self, options: WarFamilyOptions, seats: int, unit: int) -> dict[int, dict[str, int]]:
        """Every offered wager at ``unit`` credits on seats 1..``seats``."""
        return {seat: dict.fromkeys(self.offered_wagers(options), unit) for seat in range(1, seats + 1)}

    # --- round ---------------------------------------------------------------------------------
    def new_round(self, options: WarFamilyOptions, wagers: Wagers, dice: tuple[int, ...] | None = None) -> WarRound:
        seats = [
            SeatState(seat=s, wagers={k: v for k, v in wagers[s].items() if v}, hand=WarHand(s, [], 0))
            for s in sorted(wagers)
        ]
        return WarRound(options=options, seats=seats, dealer=WarHand(DEALER, [], 0))

    def deal(self, state: WarRound, source: CardSource) -> None:
        """Two cards to each seat (ascending) then the dealer, twice; then any community cards."""
        for _ in range(2):
            for seat in state.seats:
                seat.hand.initial.append(source.next_card())
            state.dealer.initial.append(source.next_card())
        self.deal_community(state, source)
        for seat in state.seats:
            seat.hand.score = self.hand_score(seat.hand.initial, state.community)
        state.dealer.score = self.hand_score(state.dealer.initial, state.community)

    def showdown(self, state: WarRound, source: CardSource) -> None:
        opts = state.options
        misdeal_ok = getattr(source, "exhaustion_is_misdeal", True)
        dealer_score = state.dealer.score
        at_war = []
        for seat in state.seats:
            s = seat.hand.score
            seat.initial_result = (s > dealer_score) - (s < dealer_score)
            if seat.initial_result == 0:
                at_war.append(seat.hand)
        if at_war:
            state.dealer_war = war_against_dealer(
                at_war, state.dealer, mode=opts.war_scoring, max_steps=opts.max_war_steps,
                source=source, exhaustion_is_misdeal=misdeal_ok,
            )
            for seat in state.seats:
                seat.war_end = state.dealer_war.ends.get(seat.seat)
        # The pool contest runs after every war against the dealer ([0087]).
        antes = [seat for seat in state.seats if seat.wagers.get("war_pool")]
        if opts.pool.enabled and antes:
            state.pot = sum(seat.wagers["war_pool"] for seat in antes) + opts.pool.dealer_ante
            participants = [seat.hand for seat in antes] + [state.dealer]
            contestants = pool_contestants(participants)
            state.pool = pool_contest(
                contestants, mode=opts.war_scoring, max_steps=opts.max_war_steps,
                source=source, exhaustion_is_misdeal=misdeal_ok,
            )
            if state.pool.winner is not None and state.pool.winner != DEALER:
                state.pool_paid, state.pool_commission = pool_payout(
                    state.pot, percent_fraction(opts.pool.commission)
                )

    def settle(self, state: WarRound) -> Settlement:
        opts = state.options
        settlement = Settlement()
        house = 0
        dealer2 = state.dealer.initial[:2]
        for seat in state.seats:
            results: dict[str, WagerResult] = {}
            w = seat.wagers
            if w.get("tie"):
                tied = seat.hand.score == state.dealer.score
                results["tie"] = paid(w["tie"], opts.tie_pays if tied else 0)
            if w.get("four_card"):
                hand4 = category4(seat.hand.initial[:2] + dealer2)
                results["four_card"] = opts.four_card_pays.result(hand4.name.lower(), w["four_card"])
            bac, war = w["bac"], w.get("war", 0)
            end = seat.war_end
            if seat.initial_result > 0 or end is WarEnd.WIN:
                results["bac"] = WagerResult(Outcome.WIN, bac)
            elif seat.initial_result < 0 or end is WarEnd.LOSE:
                results["bac"] = WagerResult(Outcome.LOSE, -bac)
            else:
                results["bac"] = WagerResult(Outcome.VOID, 0)
            if war:
                if seat.initial_result != 0:
                    results["war"] = WagerResult(Outcome.PUSH, 0)
                elif end is WarEnd.WIN:
                    results["war"] = (
                        WagerResult(Outcome.WIN, war) if opts.war_win_pays == "even"
                        else WagerResult(Outcome.PUSH, 0)
                    )
                elif end is WarEnd.LOSE:
                    results["war"] = WagerResult(Outcome.LOSE, -war)
                else:
                    results["war"] = WagerResult(Outcome.VOID, 0)
            house -= sum(r.net for r in results.values())   # the house banks every wager but the pool
            if w.get("war_pool"):
                results["war_pool"] = self._pool_result(state, seat)
            settlement.results[seat.seat] = {n: results[n] for n in self.wager_names if n in results}
            settlement.stakes[seat.seat] = dict(w)
        settlement.house_net = house + self._house_pool_result(state)
        settlement.commission = state.pool_commission
        state.settlement = settlement
        return settlement

    @staticmethod
    def _pool_result(state: WarRound, seat: SeatState) -> WagerResult:
        ante = seat.wagers["war_pool"]
        pool = state.pool
        if pool is None or pool.winner is None:
            return WagerResult(Outcome.VOID, 0)
        if pool.winner == seat.seat:
            return WagerResult(Outcome.WIN, state.pool_paid - ante)
        return WagerResult(Outcome.LOSE, -ante)

    @staticmethod
    def _house_pool_result(state: WarRound) -> int:
        """What the house gains from the pot: the commission, or the whole pot when the dealer wins,
        less the dealer ante it put in (returned on a misdeal)."""
        pool = state.pool
        if pool is None or pool.winner is None:
            return 0
        ante = state.options.pool.dealer_ante
        if pool.winner == DEALER:
            return state.pot - ante
        return state.pool_commission - ante

    # --- record --------------------------------------------------------------------------------
    def record(self, state: WarRound) -> dict[str, Any]:
        settlement = state.settlement
        seats = []
        for seat in state.seats:
            entry: dict[str, Any] = {
                "seat": seat.seat,
                "cards": format_cards(seat.hand.initial),
                "score": self.score_json(seat.hand.score),
                "war_cards": format_cards(seat.hand.war_cards),
                "wagers": dict(seat.wagers),
            }
            desc = self.describe_hand(seat.hand.initial, state.community)
            if desc:
                entry["hand"] = desc
            if settlement is not None:
                entry["results"] = {k: v.to_json() for k, v in settlement.results[seat.seat].items()}
            seats.append(entry)
        dealer: dict[str, Any] = {
            "cards": format_cards(state.dealer.initial),
            "score": self.score_json(state.dealer.score),
            "war_cards": format_cards(state.dealer.war_cards),
        }
        desc = self.describe_hand(state.dealer.initial, state.community)
        if desc:
            dealer["hand"] = desc
        doc: dict[str, Any] = {"seats": seats, "dealer": dealer}
        if state.community:
            doc["community"] = format_cards(state.community)
        wars = state.dealer_war
        doc["wars"] = {
            "seats": sorted(wars.ends) if wars else [],
            "steps": wars.steps if wars else 0,
            "misdeal": bool(wars and wars.misdeal),
            "reason": wars.reason if wars else None,
        }
        pool = state.pool
        doc["war_pool"] = {
            "pot": state.pot,
            "contestants": [_who(k) for k in pool.contestants] if pool else [],
            "winner": _who(pool.winner) if pool and pool.winner is not None else None,
            "commission": state.pool_commission,
            "paid": state.pool_paid,
            "steps": pool.steps if pool else 0,
            "eliminated": [{"step": s, "hand": _who(k)} for s, k in pool.eliminated] if pool else [],
            "misdeal": bool(pool and pool.misdeal),
            "reason": pool.reason if pool else None,
        }
        return doc


def _who(key: int) -> int | str:
    return "dealer" if key == DEALER else key
