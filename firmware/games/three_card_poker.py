"""Three Card Poker: PAIR PLUS, ANTE and PLAY against the dealer, the SIX CARD bonus, house or player
banking (rules/three-card-poker.md; seed 001, US 6,698,759).

One 52-card deck, shuffled every round. Seats 1-7.

Round (the rules' steps):

1. **Wagers** before the deal: ``ante`` (the game against the dealer), ``pair_plus`` (the game
   against the pay table) and, with ``six_card = true``, ``six_card``. Which are required is the
   ``mandatory`` option (default: ``ante``). ``play`` is never placed before the deal: it is the
   PLAY decision. ``commission`` and ``bank`` are not wagers either: with ``banking = player`` they
   are the house's fee and the banker's result.
2. **Deal** (the documented order that ``--cards`` stacks): one card at a time to each seat that
   placed a wager (ascending), then the dealer, three times; with ``dealer_cards = 4`` a fourth
   dealer card follows the third round. The banker seat (``banking = player``) receives no cards:
   the dealer's hand plays for the bank.
3. **Decision** (kind ``play_or_fold``, actions ``play`` and ``fold``, one per seat with an
   ``ante``): ``play`` places PLAY equal to ANTE, ``fold`` gives the ANTE up. On time-out the seat
   **folds** (the conservative default of live tables: nothing more is staked without the player's
   say). A seat without an ante (PAIR PLUS and/or SIX CARD only) has no decision. The automatic
   strategy (``egm simulate``, autoplay, ``egm round`` without ``--decision``) is the Q-6-4 rule:
   play queen-six-four or better, else fold; with ``hints = true`` the request's ``hint`` carries it.
4. **Showdown and settlement.** The dealer's hand is its three cards, or the best three of its four
   (:func:`~firmware.cards.poker3.best3_of`). It qualifies when it ranks at or above
   ``dealer_qualifies`` (default ``Q``: queen-high or better).

   * ``pair_plus``: the seat's own three cards against ``pair_plus_pays`` (N:1; a hand not in the
     table loses), whatever the seat decided and whatever the dealer holds.
   * ``ante`` of a seat that folded: ``fold``, the ante is lost (and no PLAY exists).
   * ``ante`` and ``play`` of a seat that played: dealer not qualified: ANTE wins 1:1 and PLAY
     pushes (``not_qualified = ante_wins``), or both push (``both_push``); dealer qualified: the
     higher hand wins ANTE and PLAY 1:1, the lower loses both, equal hands push both.
     The **ante bonus** (``ante_bonus_pays``: straight flush / trips / straight, N:1 on the ANTE) is
     added to the ANTE's net whatever the dealer holds. The ANTE's outcome is the sign of its net
     (so a straight that loses to the dealer with a 1:1 bonus is a ``push`` at 0); the record keeps
     the comparison (``showdown``) and the bonus (``ante_bonus``) apart.
   * ``six_card``: the best five of the seat's three cards and the dealer's **first three** cards
     (the three dealt in the three rounds, also with ``dealer_cards = 4``, so the bonus does not
     change with that option) against ``six_card_pays``; it is settled whatever the seat decided.

5. **Banking.** ``banking = house``: the house is counterparty to every wager. ``banking = player``:
   the seat ``banker_seat`` banks the round (choosing it for each round, e.g. rotating it, is the
   cabinet's business: it passes the options of that round). The banker places no wager; it is
   counterparty to every wager of every other seat and its result is its ``bank`` entry (stake 0,
   net = minus the sum of the other seats' wager nets). The house's money is never at risk: its
   only result is the commission, which every other seat pays before the deal (``commission.mode =
   flat``: ``amount`` credits per seat and round; ``percent``: ``amount`` percent of the seat's
   wagers placed before the deal, rounded up to whole credits). It appears as the seat's
   ``commission`` entry: stake = the fee, outcome ``lose``, net = minus the fee.

The house's result is computed on its own side (``-`` every banked net with house banking; the
commissions it collected with player banking), so "players' nets + house result = 0" checks the
bookkeeping. All money is integer credits; no floats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from itertools import combinations
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from firmware.cards.card import RANK_CHARS, Card, format_cards
from firmware.cards.poker3 import (
    CATEGORY_SHIFT,
    ThreeCardCategory,
    best3_of,
    category3,
    describe3,
    eval3,
    strength3,
)
from firmware.cards.poker5 import HandCategory, best5, category, describe, eval5, tiebreak_ranks
from firmware.cards.shoe import standard_shoe
from firmware.cards.source import CardSource
from firmware.games.base import DecisionRequest, Game, Outcome, Settlement, WagerResult, Wagers
from firmware.games.errors import DecisionError, GameError, WagerError
from firmware.games.options import GameOptions, Percent, percent_fraction, split_list
from firmware.games.pay_table import PayTable, pay
from firmware.games.results import paid, signed

#: The decision and its actions.
PLAY_OR_FOLD = "play_or_fold"
PLAY = "play"
FOLD = "fold"
ACTIONS: tuple[str, ...] = (PLAY, FOLD)
#: What a seat does when the decision time runs out.
TIME_OUT_ACTION = FOLD

#: Wagers a seat may place before the deal (``six_card`` only with ``six_card = true``).
PLACED = ("ante", "pair_plus", "six_card")

#: Q-6-4: the weakest hand the optimal strategy plays (rules "Decisions and time").
Q64 = strength3(ThreeCardCategory.HIGH_CARD, 12, 6, 4)

_TC = ThreeCardCategory


# --- options ------------------------------------------------------------------------------------
class PairPlusPays(PayTable):
    """PAIR PLUS, N:1 by the seat's three-card hand. Default 40/30/6/4/1 (seed col. 3 and col. 7)."""

    CATEGORIES: ClassVar[tuple[str, ...]] = ("straight_flush", "three_of_a_kind", "straight", "flush", "pair")

    straight_flush: int = pay(40)
    three_of_a_kind: int = pay(30)
    straight: int = pay(6)
    flush: int = pay(4)
    pair: int = pay(1)


class AnteBonusPays(PayTable):
    """The ante bonus, N:1 on the ANTE of a seat that played. Default 5/4/1 (the rules file; the
    seed's col. 4 example is 5/3/1)."""

    CATEGORIES: ClassVar[tuple[str, ...]] = ("straight_flush", "three_of_a_kind", "straight")

    straight_flush: int = pay(5)
    three_of_a_kind: int = pay(4)
    straight: int = pay(1)


class SixCardPays(PayTable):
    """SIX CARD bonus, N:1 by the best five of six cards. The default is configuration (the rules
    give no table): 1000/200/100/20/15/10/7."""

    CATEGORIES: ClassVar[tuple[str, ...]] = (
        "royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush", "straight",
        "three_of_a_kind",
    )

    royal_flush: int = pay(1000)
    straight_flush: int = pay(200)
    four_of_a_kind: int = pay(100)
    full_house: int = pay(20)
    flush: int = pay(15)
    straight: int = pay(10)
    three_of_a_kind: int = pay(7)


class CommissionOptions(GameOptions):
    """The house's commission with ``banking = player`` (rules "Banking"; seed col. 4, col. 6)."""

    mode: Literal["flat", "percent"] = "flat"
    #: ``flat``: whole credits per seat and round; ``percent``: percent (0 <= p < 100) of the seat's
    #: wagers placed before the deal.
    amount: Percent = Field(Decimal(0), ge=0, le=1_000_000)


    @model_validator(mode="after")
    def _possible(self) -> CommissionOptions:
        if self.mode == "flat" and self.amount != self.amount.to_integral_value():
            raise ValueError(f"amount: a flat commission is whole credits, not {self.amount}")
        if self.mode == "percent" and self.amount >= 100:
            raise ValueError(f"amount: a percentage below 100, not {self.amount}")
        return self

    def fee(self, staked: int) -> int:
        """The commission of a seat that staked ``staked`` credits before the deal."""
        if self.mode == "flat":
            return int(self.amount)
        f = percent_fraction(self.amount)
        return -(-staked * f.numerator // f.denominator)        # rounded up


def _rank(text: str) -> int:
    t = text.strip().upper()
    t = "T" if t == "10" else t
    if len(t) != 1 or t not in RANK_CHARS:
        raise ValueError(f"unknown rank {text!r} (use A K Q J T 9 ... 2)")
    return RANK_CHARS.index(t) + 2


def parse_qualifier(text: str) -> tuple[str, int]:
    """``dealer_qualifies`` -> (its normal form, the weakest strength that qualifies).

    ``none`` (every hand qualifies), ``pair`` (a pair or better), a rank such as ``Q`` (that rank
    high or better: queen-high), or three ranks such as ``Q-6-4`` (that high-card hand or better).
    """
    t = text.strip().lower()
    if t == "none":
        return "none", 0
    if t == "pair":
        return "pair", strength3(_TC.PAIR, 0)          # below every pair
    parts = t.split("-")
    usage = (f"expected none, pair, a rank such as Q (queen-high or better) or three ranks such as "
             f"Q-6-4, not {text!r}")
    if len(parts) not in (1, 3):
        raise ValueError(usage)
    try:
        ranks = [_rank(p) for p in parts]
    except ValueError as exc:
        raise ValueError(f"{exc}; {usage}") from None
    name = "-".join(RANK_CHARS[r - 2] for r in ranks)
    if len(ranks) == 1:
        if ranks[0] < 5:
            raise ValueError(f"no hand is {name}-high (5-3-2 is the lowest); use none")
        return name, strength3(_TC.HIGH_CARD, ranks[0])
    if not ranks[0] > ranks[1] > ranks[2]:
        raise ValueError(f"{name}: give three different ranks, highest first")
    hand = [Card.of(r, s) for s, r in enumerate(ranks)]
    if category3(eval3(hand)) is not _TC.HIGH_CARD:
        raise ValueError(f"{name} is a straight, not a high-card hand")
    return name, strength3(_TC.HIGH_CARD, *ranks)


class ThreeCardPokerOptions(GameOptions):
    """The rules' **(option)** settings; see docs/games/three-card-poker.md."""

    pair_plus_pays: PairPlusPays = PairPlusPays()
    ante_bonus_pays: AnteBonusPays = AnteBonusPays()
    dealer_cards: Literal[3, 4] = 3
    dealer_qualifies: str = "Q"
    not_qualified: Literal["ante_wins", "both_push"] = "ante_wins"
    six_card: bool = False
    six_card_pays: SixCardPays = SixCardPays()
    mandatory: tuple[Literal["ante", "pair_plus", "six_card"], ...] = ("ante",)
    banking: Literal["house", "player"] = "house"
    banker_seat: int | None = Field(None, ge=1, le=7)
    commission: CommissionOptions = CommissionOptions()
    hints: bool = False

    @field_validator("dealer_cards", mode="before")
    @classmethod
    def _count(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().isdigit():
            return int(value)
        return value

    @field_validator("dealer_qualifies")
    @classmethod
    def _qualifier(cls, value: str) -> str:
        return parse_qualifier(value)[0]

    @field_validator("mandatory", mode="before")
    @classmethod
    def _wager_list(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() == "none":
            return []
        value = split_list(value)
        if isinstance(value, list | tuple):
            if "play" in value:
                raise ValueError("play is the PLAY decision after the deal, not a wager to require")
            if len(set(value)) != len(value):
                raise ValueError("a wager is named twice")
        return value

    @model_validator(mode="after")
    def _possible(self) -> ThreeCardPokerOptions:
        if not self.six_card and self.six_card_pays != SixCardPays():
            raise ValueError("six_card_pays: the SIX CARD bonus is off (six_card = false)")
        if "six_card" in self.mandatory and not self.six_card:
            raise ValueError("mandatory: six_card cannot be required while six_card = false")
        if self.banking == "player" and self.banker_seat is None:
            raise ValueError("banker_seat: banking = player needs the seat that banks the round (1-7)")
        if self.banking == "house" and self.banker_seat is not None:
            raise ValueError("banker_seat: only with banking = player (the house banks)")
        if self.banking == "house" and self.commission.amount:
            raise ValueError("commission: the house takes a commission only with banking = player")
        return self

    @property
    def offered(self) -> tuple[str, ...]:
        return PLACED if self.six_card else PLACED[:2]


# --- the game's pay functions (also used by the tests and the math) -----------------------------
@dataclass(frozen=True, slots=True)
class _Tables:
    """Pay multiples indexed by category value, and the dealer's qualifying strength."""

    pair_plus: tuple[int, ...]
    ante_bonus: tuple[int, ...]
    six_card: tuple[int, ...]          #: by HandCategory; straight flush only below royal
    royal: int
    qualify: int


@lru_cache(maxsize=64)
def _tables(options: ThreeCardPokerOptions) -> _Tables:
    pp, ab, sc = options.pair_plus_pays, options.ante_bonus_pays, options.six_card_pays
    pair_plus = [0] * 7
    pair_plus[_TC.STRAIGHT_FLUSH] = pp.straight_flush
    pair_plus[_TC.THREE_OF_A_KIND] = pp.three_of_a_kind
    pair_plus[_TC.STRAIGHT] = pp.straight
    pair_plus[_TC.FLUSH] = pp.flush
    pair_plus[_TC.PAIR] = pp.pair
    bonus = [0] * 7
    bonus[_TC.STRAIGHT_FLUSH] = ab.straight_flush
    bonus[_TC.THREE_OF_A_KIND] = ab.three_of_a_kind
    bonus[_TC.STRAIGHT] = ab.straight
    six = [0] * 11
    six[HandCategory.STRAIGHT_FLUSH] = sc.straight_flush
    six[HandCategory.FOUR_OF_A_KIND] = sc.four_of_a_kind
    six[HandCategory.FULL_HOUSE] = sc.full_house
    six[HandCategory.FLUSH] = sc.flush
    six[HandCategory.STRAIGHT] = sc.straight
    six[HandCategory.THREE_OF_A_KIND] = sc.three_of_a_kind
    return _Tables(tuple(pair_plus), tuple(bonus), tuple(six), sc.royal_flush,
                   parse_qualifier(options.dealer_qualifies)[1])


def hand_strength(cards: Sequence[int]) -> int:
    """A three-card hand's strength (higher is better, equal is a tie): the patent's order, col. 7."""
    return eval3(cards)


def optimal_action(strength: int) -> str:
    """The Q-6-4 strategy: play queen-six-four or better, else fold."""
    return PLAY if strength >= Q64 else FOLD


def pair_plus_result(options: ThreeCardPokerOptions, strength: int, stake: int) -> WagerResult:
    """PAIR PLUS of ``stake`` credits on a hand of ``strength`` (what :meth:`ThreeCardPoker.settle`
    pays)."""
    return paid(stake, _tables(options).pair_plus[strength >> CATEGORY_SHIFT])


def ante_bonus_multiple(options: ThreeCardPokerOptions, strength: int) -> int:
    """The ante bonus N (N:1 on the ANTE) of a hand that played."""
    return _tables(options).ante_bonus[strength >> CATEGORY_SHIFT]


def six_card_multiple(options: ThreeCardPokerOptions, strength5: int) -> int:
    """The SIX CARD pay of a five-card strength (a royal flush is the ace-high straight flush)."""
    t = _tables(options)
    cat = category(strength5)
    if cat is HandCategory.STRAIGHT_FLUSH and tiebreak_ranks(strength5)[0] == 14:
        return t.royal
    return t.six_card[cat]


def best_five(cards: Sequence[Card]) -> list[Card]:
    """The five cards of the best hand among ``cards`` (the first such subset in dealt order)."""
    return list(max(combinations(cards, 5), key=lambda five: eval5(list(five))))


def best_three(cards: Sequence[Card]) -> list[Card]:
    """The dealer's three cards that play (the first best subset in dealt order)."""
    return list(max(combinations(cards, 3), key=lambda three: eval3(list(three))))


# --- round state --------------------------------------------------------------------------------
@dataclass(slots=True)
class SeatState:
    seat: int
    wagers: dict[str, int]
    cards: list[Card] = field(default_factory=list)
    strength: int = 0
    decision: str | None = None        #: "play" / "fold"; None without an ante or before deciding


@dataclass(slots=True)
class ThreeCardRound:
    options: ThreeCardPokerOptions
    tables: _Tables
    seats: list[SeatState]
    by_seat: dict[int, SeatState]
    banker: int | None                 #: the banking seat, or None when the house banks
    dealer: list[Card] = field(default_factory=list)
    dealer_strength: int = 0
    qualified: bool = False
    settlement: Settlement | None = None


# --- the game -----------------------------------------------------------------------------------
class ThreeCardPoker(Game[ThreeCardPokerOptions, ThreeCardRound]):
    id: ClassVar[str] = "three-card-poker"
    name: ClassVar[str] = "Three Card Poker"
    #: Record order; ``play`` comes only from the decision, ``commission`` and ``bank`` only with
    #: ``banking = player``.
    wager_names: ClassVar[tuple[str, ...]] = ("ante", "play", "pair_plus", "six_card", "commission", "bank")
    raises: ClassVar[Mapping[str, str]] = {"play": "ante"}
    options_model: ClassVar[type[ThreeCardPokerOptions]] = ThreeCardPokerOptions
    has_decisions: ClassVar[bool] = True
    max_seats: ClassVar[int] = 7

    def shoe(self, options: ThreeCardPokerOptions) -> tuple[Card, ...]:
        return standard_shoe(1)

    # --- betting -------------------------------------------------------------------------------
    def validate_wagers(self, options: ThreeCardPokerOptions, wagers: Wagers) -> None:
        offered = options.offered
        for seat, bets in sorted(wagers.items()):
            if seat == options.banker_seat:
                raise WagerError(
                    f"seat {seat} banks the round (banker_seat = {seat}): the banker places no wager"
                )
            for name in bets:
                if name == "play":
                    raise WagerError(
                        f"seat {seat}: play is not placed before the deal; it is the PLAY decision "
                        "(play equals the ante) after the seat has seen its cards"
                    )
                if name in ("commission", "bank"):
                    raise WagerError(
                        f"seat {seat}: {name} is not a wager; with banking = player it is "
                        + ("the house's fee" if name == "commission" else "the banker's result")
                    )
                if name not in offered:
                    raise WagerError(
                        f"seat {seat}: {self.id} offers no wager {name!r} here; offered: {', '.join(offered)}"
                    )
            missing = [n for n in options.mandatory if not bets.get(n)]
            if missing:
                raise WagerError(
                    f"seat {seat}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} "
                    f"mandatory (mandatory = {','.join(options.mandatory)})"
                )

    def automatic_wagers(
        self, options: ThreeCardPokerOptions, seats: int, unit: int
    ) -> dict[int, dict[str, int]]:
        """Every offered wager (ante, pair_plus, and six_card when enabled) at ``unit`` credits on
        the first ``seats`` seats, skipping the banker seat with ``banking = player``."""
        numbers = [s for s in range(1, self.max_seats + 1) if s != options.banker_seat]
        if seats > len(numbers):
            raise WagerError(f"{len(numbers)} seats can play here, not {seats}")
        return {s: dict.fromkeys(options.offered, unit) for s in numbers[:seats]}

    @staticmethod
    def max_decision_stake(wagers: Wagers) -> int:
        """The credits the decisions may still stake after the deal (every ante doubled by PLAY)."""
        return sum(b.get("ante", 0) for b in wagers.values())

    def reserved_stake(self, options: ThreeCardPokerOptions, wagers: Wagers) -> int:
        """PLAY on every ante, and with ``banking = player`` every other seat's commission."""
        reserve = self.max_decision_stake(wagers)
        if options.banking == "player":
            reserve += sum(options.commission.fee(sum(b.values()))
                           for seat, b in wagers.items() if seat != options.banker_seat)
        return reserve

    # --- round ---------------------------------------------------------------------------------
    def new_round(
        self, options: ThreeCardPokerOptions, wagers: Wagers, dice: tuple[int, ...] | None = None
    ) -> ThreeCardRound:
        seats = [SeatState(s, {k: v for k, v in wagers[s].items() if v}) for s in sorted(wagers)]
        return ThreeCardRound(options=options, tables=_tables(options), seats=seats,
                              by_seat={s.seat: s for s in seats}, banker=options.banker_seat)

    def deal(self, state: ThreeCardRound, source: CardSource) -> None:
        """One card to each seat (ascending) then the dealer, three times; with ``dealer_cards = 4``
        the dealer's fourth card after the third round."""
        seats, dealer = state.seats, state.dealer
        for _ in range(3):
            for seat in seats:
                seat.cards.append(source.next_card())
            dealer.append(source.next_card())
        if state.options.dealer_cards == 4:
            dealer.append(source.next_card())
        dealt = [c for s in seats for c in s.cards] + dealer
        if len(set(dealt)) != len(dealt):
            twice = next(c for c in dealt if dealt.count(c) > 1)
            raise GameError(f"{twice} is dealt twice: {self.id} deals from one 52-card deck")
        for seat in seats:
            seat.strength = eval3(seat.cards)

    def pending_decisions(self, state: ThreeCardRound) -> list[DecisionRequest]:
        hints = state.options.hints
        return [
            DecisionRequest(seat=s.seat, kind=PLAY_OR_FOLD, actions=ACTIONS, default=TIME_OUT_ACTION,
                            hint=optimal_action(s.strength) if hints else None)
            for s in state.seats
            if s.decision is None and "ante" in s.wagers
        ]

    def decision_view(self, state: ThreeCardRound, seat: int) -> dict[str, Any]:
        """The player's three cards (the dealer's stay face down until the showdown)."""
        mine = state.by_seat.get(seat)
        return {} if mine is None else {"cards": [str(c) for c in mine.cards]}

    def decide(self, state: ThreeCardRound, seat: int, action: str) -> None:
        """``play`` (PLAY = ANTE) or ``fold``; anything else raises DecisionError and changes nothing."""
        s = state.by_seat.get(seat)
        if s is None or "ante" not in s.wagers:
            raise DecisionError(f"seat {seat} has no decision to make: only a seat with an ante plays or folds")
        if s.decision is not None:
            raise DecisionError(f"seat {seat} has already decided ({s.decision})")
        if action not in ACTIONS:
            raise DecisionError(f"seat {seat}: unknown action {action!r}; answer play or fold")
        s.decision = action

    def automatic_decision(self, state: ThreeCardRound, request: DecisionRequest) -> str:
        """The Q-6-4 strategy (whether or not hints are shown)."""
        return optimal_action(state.by_seat[request.seat].strength)

    def showdown(self, state: ThreeCardRound, source: CardSource) -> None:
        """The dealer's hand (best three of four with ``dealer_cards = 4``) and its qualification;
        no card is drawn."""
        state.dealer_strength = best3_of(state.dealer)
        state.qualified = state.dealer_strength >= state.tables.qualify

    def settle(self, state: ThreeCardRound) -> Settlement:
        opts = state.options
        dealer, qualified = state.dealer_strength, state.qualified
        ante_wins = opts.not_qualified == "ante_wins"
        dealer3 = state.dealer[:3]
        settlement = Settlement()
        bank = 0                       # the bank's result: the house's, or the player-banker's
        fees = 0
        for seat in state.seats:
            w = seat.wagers
            stakes = dict(w)
            results: dict[str, WagerResult] = {}
            ante = w.get("ante", 0)
            if ante:
                if seat.decision != PLAY:
                    results["ante"] = WagerResult(Outcome.FOLD, -ante)
                else:
                    stakes["play"] = ante
                    bonus = ante * ante_bonus_multiple(opts, seat.strength)
                    if not qualified:
                        results["ante"] = signed((ante if ante_wins else 0) + bonus)
                        results["play"] = WagerResult(Outcome.PUSH, 0)
                    elif seat.strength > dealer:
                        results["ante"] = signed(ante + bonus)
                        results["play"] = WagerResult(Outcome.WIN, ante)
                    elif seat.strength < dealer:
                        results["ante"] = signed(bonus - ante)
                        results["play"] = WagerResult(Outcome.LOSE, -ante)
                    else:
                        results["ante"] = signed(bonus)
                        results["play"] = WagerResult(Outcome.PUSH, 0)
            if "pair_plus" in w:
                results["pair_plus"] = pair_plus_result(opts, seat.strength, w["pair_plus"])
            if "six_card" in w:
                results["six_card"] = paid(w["six_card"],
                                            six_card_multiple(opts, best5(seat.cards + dealer3)))
            bank -= sum(r.net for r in results.values())
            if state.banker is not None:
                fee = opts.commission.fee(sum(w.values()))
                if fee:
                    fees += fee
                    stakes["commission"] = fee
                    results["commission"] = WagerResult(Outcome.LOSE, -fee)
            settlement.results[seat.seat] = {n: results[n] for n in self.wager_names if n in results}
            settlement.stakes[seat.seat] = {n: stakes[n] for n in self.wager_names if n in stakes}
        if state.banker is None:
            settlement.house_net = bank
        else:
            settlement.results[state.banker] = {"bank": signed(bank)}
            settlement.stakes[state.banker] = {"bank": 0}
            settlement.house_net = fees
        state.settlement = settlement
        return settlement

    # --- record --------------------------------------------------------------------------------
    def record(self, state: ThreeCardRound) -> dict[str, Any]:
        opts = state.options
        settlement = state.settlement
        seats: list[dict[str, Any]] = []
        for seat in state.seats:
            hand = describe3(seat.strength)
            entry: dict[str, Any] = {
                "seat": seat.seat,
                "banker": False,
                "cards": format_cards(seat.cards),
                "hand": hand,
                "score": hand,
                "wagers": dict(seat.wagers),
                "decision": seat.decision,
            }
            if opts.hints and "ante" in seat.wagers:
                entry["hint"] = optimal_action(seat.strength)
            if seat.decision == PLAY:
                s, d = seat.strength, state.dealer_strength
                entry["showdown"] = ("not_qualified" if not state.qualified
                                     else "win" if s > d else "lose" if s < d else "push")
                m = ante_bonus_multiple(opts, s)
                entry["ante_bonus"] = {"pays": m, "net": m * seat.wagers["ante"]}
            elif seat.decision == FOLD:
                entry["showdown"] = "fold"
            if opts.six_card:
                five = best_five(seat.cards + state.dealer[:3])
                entry["six_card_hand"] = {"cards": format_cards(five), "hand": describe(eval5(five))}
            if settlement is not None:
                entry["stakes"] = dict(settlement.stakes[seat.seat])
                entry["results"] = {k: v.to_json() for k, v in settlement.results[seat.seat].items()}
            seats.append(entry)
        if state.banker is not None:
            entry = {"seat": state.banker, "banker": True, "cards": [], "hand": None, "score": "bank",
                     "wagers": {}, "decision": None}
            if settlement is not None:
                entry["stakes"] = dict(settlement.stakes[state.banker])
                entry["results"] = {k: v.to_json() for k, v in settlement.results[state.banker].items()}
            seats.append(entry)
            seats.sort(key=lambda e: e["seat"])
        dealer_hand = describe3(state.dealer_strength)
        dealer: dict[str, Any] = {"cards": format_cards(state.dealer)}
        if len(state.dealer) == 4:
            dealer["best3"] = format_cards(best_three(state.dealer))
        dealer.update({"hand": dealer_hand, "score": dealer_hand, "qualified": state.qualified})
        return {"banker": "house" if state.banker is None else state.banker, "seats": seats,
                "dealer": dealer}


__all__ = [
    "ACTIONS", "AnteBonusPays", "CommissionOptions", "PairPlusPays", "Q64", "SixCardPays",
    "ThreeCardPoker", "ThreeCardPokerOptions", "ante_bonus_multiple", "best_five", "best_three",
    "hand_strength", "optimal_action", "pair_plus_result", "parse_qualifier", "six_card_multiple",
]
