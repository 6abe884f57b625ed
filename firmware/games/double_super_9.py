"""Double Super 9: four cards set as a FRONT and a BACK two-card hand against a banker's (rules/
double-super-9.md; seed 003, US 2004/0007815 A1, "Indian Double Super 9 casino game").

Eight spots #1-#8 on a crescent table, clockwise; seat number = spot number. A 288-card shoe of only
A-6 (``decks`` x 24 cards, default 12; ace counts 1), shuffled every round. Hands rank by
:func:`firmware.cards.super9.super9_rank` (pairs, then points, then the higher card; equal is a copy).

Round (the rules' steps):

1. **Wagers** before the dice. A player's wager is ``bet``. With ``banking = house`` (default) the
   house banks every spot from spot #8, which no player takes: players sit at spots 1-7. With
   ``banking = player`` the banking spot is the one spot that places ``bank`` instead of ``bet``
   (``banker_spot``, when set, says which spot that must be; :func:`next_banker` is the rotation the
   cabinet applies between rounds). ``bank`` has no table maximum (seed [0018]: the game's
   ``uncapped_wagers``). With ``collection = N > 0`` (player banking only) every wagering spot,
   the banker's included, also places ``collection = N``: the club's fee, taken before the bet
   ([0014]); it is an ordinary stake leaving the credit meter with the others, it always ends
   ``lose`` (-N) and it is the house's (club's) whole result, whatever the cards ([0013]).
2. **Dice.** Three dice from the certified RNG (``--dice A,B,C`` with ``--cards``). The total is
   counted clockwise with the banker's position as 1, so 1, 9 and 17 land on the banker (seed
   rule 15 [0027]: dice 2, 3, 5 = 10 start the action one position left of the banker); that
   position is the *dice position*: it receives the first card and the action starts there.
3. **Deal** (the documented order that ``--cards`` stacks): one card at a time to each of the eight
   positions clockwise from the dice position, four times: 32 cards. Hands at positions nobody
   plays are dealt and discarded unseen. A hand keeps its cards in dealt order (positions 0..3,
   used by the house way's tie-break). The banker's hand is set by the house way at once.
4. **Setting** (a DECISION per playing spot other than the banker, kind ``set_hand``):
   ``set:<FRONT cards>|<BACK cards>`` (two of the spot's own four cards each, any order within a
   hand) or ``house-way``; on time-out the house way sets the hand. A setting of the wrong shape or
   naming a card the spot does not hold (or more copies than it holds) is refused. A setting whose
   FRONT outranks its BACK: with ``foul_setting = refuse`` (default) it is a DecisionError and
   nothing changes - the terminal prevents the mistake, and the request lists only legal settings;
   with ``foul_setting = lose`` it is accepted and **foul**: the wager "will be collected and paid
   to the Banker immediately" (seed rule 25 [0037]). A terminal cannot set a wrong number of cards,
   the rule's other foul. The house way is
   :func:`firmware.games.double_super_9_house_way.house_way`.
5. **Showdown** in action order: the playing spots other than the banker, clockwise from the dice
   position (seed rule 38 [0050]). FRONT against the banker's FRONT, BACK against BACK, each
   ``win``, ``lose`` or ``copy``: both win -> win; both lose -> lose; one wins and one loses ->
   push; copy + win -> win; copy + lose -> lose; copy + copy -> push (:func:`hand_outcome`).
6. **Settlement.** A win pays 1:1.

   * ``banking = house``: the house is counterparty to every ``bet`` and takes ``commission``
     (default 5%) of each winning wager, rounded **up** to a whole credit (in the house's favour):
     a win of 10 nets 10 - 1 = 9, a win of 30 nets 30 - 2 = 28. A foul loses its bet.
   * ``banking = player``: the banker is counterparty to every other spot; no commission. The
     banker's action limit (seed rule 42 [0054]): spots are settled in turn, foul hands first
     (they were paid to the banker when set, "immediately"), then the showdown in action order, and
     the amounts settled, won or lost, are added up; a spot that would take the total past the
     ``bank`` wager gets action only for the remainder (it wins or loses that much), and every
     spot after the total reaches the bank gets none: ``void``, its wager kept. A push settles
     nothing. The seed's example: a 100 bank loses 50 to the first spot and wins 50 from the
     second, and the hand is over. The banker's own result is its ``bank`` entry, computed from
     its side of each settled amount; its stake is the ``bank`` wager and it can lose at most that.

The house's result is computed on its own side (the counterparty's gains and losses plus
commission in house banking; the collections in player banking), so "players' nets + house result
= 0" checks the bookkeeping. All money is integer credits; no floats.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from firmware.cards.card import Card, format_cards
from firmware.cards.errors import CardError
from firmware.cards.shoe import MAX_DECKS, double_super_9_shoe
from firmware.cards.source import CardSource
from firmware.cards.super9 import describe_super9, super9_value
from firmware.games.base import DecisionRequest, Game, Outcome, Settlement, WagerResult, Wagers
from firmware.games.double_super_9_house_way import (
    HAND_SIZE,
    Setting,
    house_way,
    setting_of,
    settings,
)
from firmware.games.errors import DecisionError, GameError, WagerError
from firmware.games.options import GameOptions, Percent, percent_fraction
from firmware.games.results import signed
from firmware.games.setting import HOUSE_WAY, SET_HAND, SET_PREFIX, positions, read_setting

__all__ = [
    "BankerTurn",
    "Comparison",
    "DoubleSuper9",
    "DoubleSuper9Options",
    "dealing_order",
    "dice_position",
    "hand_outcome",
    "next_banker",
]

#: Spots around the table, clockwise; the house's hand is spot 8 with ``banking = house``.
POSITIONS = 8
HOUSE_SPOT = 8

#: Wager names.
BET = "bet"
BANK = "bank"
COLLECTION = "collection"

#: The decision.


# --- pure rule functions ------------------------------------------------------------------------
class Comparison(enum.StrEnum):
    """One of a player's two hands against the banker's hand in the same place."""

    WIN = "win"
    LOSE = "lose"
    COPY = "copy"


def compare(mine: int, banker: int) -> Comparison:
    """Ranks of :func:`~firmware.cards.super9.super9_rank`: higher wins, equal is a copy."""
    if mine > banker:
        return Comparison.WIN
    if mine < banker:
        return Comparison.LOSE
    return Comparison.COPY


#: The rules' showdown table (step 5; seed rule 38 [0050]), symmetric in FRONT and BACK.
_OUTCOMES: dict[frozenset[Comparison], Outcome] = {
    frozenset({Comparison.WIN}): Outcome.WIN,                       # both win
    frozenset({Comparison.LOSE}): Outcome.LOSE,                     # both lose
    frozenset({Comparison.WIN, Comparison.LOSE}): Outcome.PUSH,     # one wins, one loses
    frozenset({Comparison.COPY, Comparison.WIN}): Outcome.WIN,      # copy + win
    frozenset({Comparison.COPY, Comparison.LOSE}): Outcome.LOSE,    # copy + lose
    frozenset({Comparison.COPY}): Outcome.PUSH,                     # copy + copy
}


def hand_outcome(front: Comparison, back: Comparison) -> Outcome:
    """A spot's outcome from its FRONT and BACK comparisons (rules step 5)."""
    return _OUTCOMES[frozenset({front, back})]


def dice_position(total: int, banker: int) -> int:
    """Where a dice total lands: counted clockwise with the banker's position as 1 (seed rule 15
    [0027]: "The Banker position is always 1, 9, or 17; numbers count clockwise")."""
    return (banker - 1 + total - 1) % POSITIONS + 1


def dealing_order(first: int) -> tuple[int, ...]:
    """The eight positions clockwise from ``first``."""
    return tuple((first - 1 + k) % POSITIONS + 1 for k in range(POSITIONS))


@dataclass(frozen=True, slots=True)
class BankerTurn:
    """Who banks a round with ``banking = player``: a spot and its turn, 1st or 2nd banker."""

    spot: int
    term: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.spot <= POSITIONS or self.term not in (1, 2):
            raise ValueError(f"a banker turn is a spot 1-{POSITIONS} and term 1 or 2, not {self}")


def next_banker(
    previous: BankerTurn | None,
    wagered: Collection[int],
    accepts: Collection[int],
) -> BankerTurn | None:
    """The banker of the next round with ``banking = player`` (rules, Table and roles).

    ``previous`` is the last round's banker turn (None when the table opens); ``wagered`` the spots
    that wagered on the previous hand (seed rule 20 [0032]: only they may bank; when the table opens
    the cabinet passes the spots present); ``accepts`` the spots whose players want to bank and can
    cover the minimum. Each spot banks twice in turn, as 1st and then 2nd banker (rule 30 [0042]),
    starting at spot #1 (rule 31 [0043]); a spot that cannot or will not bank passes the role on
    clockwise, and the spot that takes it starts as 1st banker. Returns None when no spot may bank
    (the cabinet then cannot deal a player-banked round).

    >>> next_banker(None, {1, 2, 3}, {1, 2, 3})
    BankerTurn(spot=1, term=1)
    >>> next_banker(BankerTurn(1, 1), {1, 2, 3}, {1, 2, 3})
    BankerTurn(spot=1, term=2)
    >>> next_banker(BankerTurn(1, 2), {1, 2, 3}, {1, 3})      # spot 2 declines: spot 3 banks
    BankerTurn(spot=3, term=1)
    """
    may_bank = set(wagered) & set(accepts)
    if previous is not None and previous.term == 1 and previous.spot in may_bank:
        return BankerTurn(previous.spot, 2)
    start = 1 if previous is None else previous.spot % POSITIONS + 1
    for spot in dealing_order(start):
        if spot in may_bank:
            return BankerTurn(spot, 1)
    return None


# --- options ------------------------------------------------------------------------------------
class DoubleSuper9Options(GameOptions):
    """The rules' **(option)** settings; see docs/games/double-super-9.md."""

    #: Decks of A-6 (24 cards each); a deal takes 32 cards, so at least 2.
    decks: int = Field(12, ge=1, le=MAX_DECKS)
    banking: Literal["house", "player"] = "house"
    #: ``banking = house``: percent of each winning wager the house keeps (rounded up).
    commission: Percent = Field(Decimal(5), ge=0, lt=100)
    #: ``banking = player``: credits every wagering spot pays the club before each bet (0: none).
    collection: int = Field(0, ge=0, le=1_000_000)
    #: ``banking = player``: the spot that must place ``bank`` this round (None: whichever spot
    #: places it). The cabinet sets it from :func:`next_banker` between rounds.
    banker_spot: int | None = Field(None, ge=1, le=POSITIONS)
    #: A setting whose FRONT outranks its BACK: refused (the terminal prevents it) or foul (loses).
    foul_setting: Literal["refuse", "lose"] = "refuse"


    @model_validator(mode="after")
    def _possible(self) -> DoubleSuper9Options:
        if self.decks * 24 < POSITIONS * HAND_SIZE:
            raise ValueError(
                f"decks: a deal takes {POSITIONS * HAND_SIZE} cards and one deck of A-6 holds 24; "
                "use at least 2 decks"
            )
        if self.banking == "house":
            if self.banker_spot is not None:
                raise ValueError("banker_spot: with banking = house the house banks from spot 8")
            if self.collection:
                raise ValueError(
                    "collection: the club's fee applies to banking = player; with banking = house "
                    "the house takes commission instead"
                )
        return self


# --- round state --------------------------------------------------------------------------------
@dataclass(slots=True)
class Hand:
    """Four cards at one position, in dealt order, and how they are set."""

    position: int
    cards: list[Card] = field(default_factory=list)
    setting: Setting | None = None
    house_way: bool = False

    @property
    def foul(self) -> bool:
        return self.setting is not None and self.setting.foul


@dataclass(slots=True)
class Spot:
    seat: int
    wagers: dict[str, int]
    hand: Hand
    actions: tuple[str, ...] = ()            #: the set_hand actions, built on the first request
    front: Comparison | None = None          #: against the banker's FRONT (None: banker or foul)
    back: Comparison | None = None
    action: int = 0                          #: credits settled (won or lost) on its bet
    commission: int = 0


@dataclass(slots=True)
class DoubleSuper9Round:
    options: DoubleSuper9Options
    dice: tuple[int, ...]
    banker: int | None                       #: the banking spot, or None when the house banks
    spots: list[Spot]
    dealer: Hand                             #: the banker's hand
    settlement: Settlement | None = None
    bank_action: int = 0                     #: player banking: credits of action the bank took

    @property
    def total(self) -> int:
        return sum(self.dice)

    @property
    def banker_position(self) -> int:
        return self.dealer.position

    @property
    def first_position(self) -> int:
        return dice_position(self.total, self.banker_position)

    def action_order(self) -> list[Spot]:
        """The playing spots other than the banker, clockwise from the dice position."""
        by_seat = {s.seat: s for s in self.spots if s.seat != self.banker}
        return [by_seat[p] for p in dealing_order(self.first_position) if p in by_seat]


# --- the game -----------------------------------------------------------------------------------
class DoubleSuper9(Game[DoubleSuper9Options, DoubleSuper9Round]):
    id: ClassVar[str] = "double-super-9"
    name: ClassVar[str] = "Double Super 9"
    wager_names: ClassVar[tuple[str, ...]] = (BET, BANK, COLLECTION)
    options_model: ClassVar[type[DoubleSuper9Options]] = DoubleSuper9Options
    has_decisions: ClassVar[bool] = True
    dice: ClassVar[int] = 3
    dice_sides: ClassVar[int] = 6
    max_seats: ClassVar[int] = POSITIONS
    uncapped_wagers: ClassVar[frozenset[str]] = frozenset({BANK})
    fee_wagers: ClassVar[frozenset[str]] = frozenset({COLLECTION})

    def shoe(self, options: DoubleSuper9Options) -> tuple[Card, ...]:
        return double_super_9_shoe(options.decks)

    # --- betting -------------------------------------------------------------------------------
    def validate_wagers(self, options: DoubleSuper9Options, wagers: Wagers) -> None:
        if options.banking == "house":
            self._validate_house(wagers)
        else:
            self._validate_player(options, wagers)

    @staticmethod
    def _validate_house(wagers: Wagers) -> None:
        for seat, bets in sorted(wagers.items()):
            if seat == HOUSE_SPOT:
                raise WagerError(
                    f"spot {HOUSE_SPOT} is the house's hand with banking = house; players sit at "
                    f"spots 1-{HOUSE_SPOT - 1}"
                )
            if BANK in bets:
                raise WagerError(
                    f"seat {seat}: bank is the player-banker's wager; with banking = house the "
                    "house banks"
                )
            if COLLECTION in bets:
                raise WagerError(f"seat {seat}: there is no collection with banking = house")
            if not bets.get(BET):
                raise WagerError(f"seat {seat}: a spot plays with a bet wager")

    @staticmethod
    def _validate_player(options: DoubleSuper9Options, wagers: Wagers) -> None:
        bankers = sorted(s for s, b in wagers.items() if b.get(BANK))
        if not bankers:
            where = f"spot {options.banker_spot}" if options.banker_spot else "one spot"
            raise WagerError(f"banking = player: {where} must place the bank wager")
        if len(bankers) > 1:
            raise WagerError(
                f"banking = player: only one spot banks a round, not spots {', '.join(map(str, bankers))}"
            )
        banker = bankers[0]
        if options.banker_spot is not None and banker != options.banker_spot:
            raise WagerError(
                f"banking = player: spot {options.banker_spot} banks this round (banker_spot), "
                f"not spot {banker}"
            )
        if len(wagers) < 2:
            raise WagerError("banking = player needs a spot that plays against the banker")
        for seat, bets in sorted(wagers.items()):
            if seat == banker and BET in bets:
                raise WagerError(f"seat {seat} banks this round: its wager is bank, not bet")
            if seat != banker and not bets.get(BET):
                raise WagerError(f"seat {seat}: a spot plays with a bet wager")
            fee = bets.get(COLLECTION, 0)
            if fee != options.collection:
                if not options.collection:
                    raise WagerError(f"seat {seat}: no collection is taken (collection = 0)")
                raise WagerError(
                    f"seat {seat}: the club takes a collection of {options.collection} before each "
                    f"bet: place {seat}:collection={options.collection}"
                    + (f", not {fee}" if fee else "")
                )

    def automatic_wagers(
        self, options: DoubleSuper9Options, seats: int, unit: int
    ) -> dict[int, dict[str, int]]:
        """House banking: ``bet = unit`` on spots 1..``seats``. Player banking: ``banker_spot`` (or
        spot 1) banks and covers everyone, ``bank = unit`` x the other spots, and the first
        ``max(seats, 2) - 1`` other spots bet ``unit``; every spot adds ``collection`` when the
        club takes one."""
        if options.banking == "house":
            return {seat: {BET: unit} for seat in range(1, seats + 1)}
        banker = options.banker_spot or 1
        others = [s for s in range(1, POSITIONS + 1) if s != banker][: max(seats, 2) - 1]
        out: dict[int, dict[str, int]] = {banker: {BANK: unit * len(others)}}
        for seat in others:
            out[seat] = {BET: unit}
        if options.collection:
            for bets in out.values():
                bets[COLLECTION] = options.collection
        return dict(sorted(out.items()))

    # --- round ---------------------------------------------------------------------------------
    def new_round(
        self, options: DoubleSuper9Options, wagers: Wagers, dice: tuple[int, ...] | None = None
    ) -> DoubleSuper9Round:
        dice = tuple(dice or ())
        self.check_dice(dice)
        spots = [
            Spot(seat=s, wagers={k: v for k, v in wagers[s].items() if v}, hand=Hand(position=s))
            for s in sorted(wagers)
        ]
        banker = None
        if options.banking == "player":
            banker = next(s.seat for s in spots if s.wagers.get(BANK))
            dealer = next(s.hand for s in spots if s.seat == banker)
        else:
            dealer = Hand(HOUSE_SPOT)
        return DoubleSuper9Round(options=options, dice=dice, banker=banker, spots=spots, dealer=dealer)

    def deal(self, state: DoubleSuper9Round, source: CardSource) -> None:
        """Four rounds of one card to each of the eight positions clockwise from the dice position;
        the hands of positions nobody plays are discarded unseen. The banker's hand is set by the
        house way at once (it is not a decision)."""
        hands: dict[int, Hand] = {s.seat: s.hand for s in state.spots}
        hands.setdefault(state.dealer.position, state.dealer)
        order = dealing_order(state.first_position)
        decks = state.options.decks
        seen: Counter[Card] = Counter()
        for _ in range(HAND_SIZE):
            for position in order:
                card = source.next_card()
                try:
                    super9_value(card)
                except CardError:
                    raise GameError(f"{card} cannot be dealt: {self.id} uses only A-6") from None
                seen[card] += 1
                if seen[card] > decks:
                    raise GameError(
                        f"{card} is dealt {seen[card]} times: the shoe of {decks} decks holds "
                        f"{decks} of each card"
                    )
                hand = hands.get(position)
                if hand is not None:
                    hand.cards.append(card)
        state.dealer.setting = house_way(state.dealer.cards)
        state.dealer.house_way = True

    def pending_decisions(self, state: DoubleSuper9Round) -> list[DecisionRequest]:
        return [
            DecisionRequest(seat=s.seat, kind=SET_HAND, actions=self._actions(state, s), default=HOUSE_WAY)
            for s in state.spots
            if s.hand.setting is None
        ]

    @staticmethod
    def _actions(state: DoubleSuper9Round, spot: Spot) -> tuple[str, ...]:
        """Every setting as an explicit ``set:FRONT|BACK`` (only legal ones with ``foul_setting =
        refuse``), without repeats (a hand holding twin cards), then ``house-way``."""
        if not spot.actions:
            cards = spot.hand.cards
            refuse = state.options.foul_setting == "refuse"
            texts = [
                f"{SET_PREFIX}{' '.join(format_cards(s.front_cards(cards)))}|"
                f"{' '.join(format_cards(s.back_cards(cards)))}"
                for s in settings(cards)
                if not (refuse and s.foul)
            ]
            spot.actions = (*dict.fromkeys(texts), HOUSE_WAY)
        return spot.actions

    def decision_view(self, state: DoubleSuper9Round, seat: int) -> dict[str, Any]:
        """The player's four cards in dealt order, and their position."""
        spot = next((s for s in state.spots if s.seat == seat and s.seat != state.banker), None)
        return {} if spot is None else {"cards": [str(c) for c in spot.hand.cards], "position": spot.hand.position}

    def decide(self, state: DoubleSuper9Round, seat: int, action: str) -> None:
        """``house-way`` or ``set:<FRONT>|<BACK>``; an illegal setting raises DecisionError and
        changes nothing (see the module docstring, step 4)."""
        spot = next((s for s in state.spots if s.seat == seat and s.seat != state.banker), None)
        if spot is None:
            raise DecisionError(f"seat {seat} has no hand to set")
        hand = spot.hand
        if hand.setting is not None:
            raise DecisionError(f"seat {seat} has already set its hand")
        named = read_setting(seat, action, ("FRONT", "BACK"), "set:6s 3h|5d 5c")
        if named is None:
            hand.setting = house_way(hand.cards)
            hand.house_way = True
            return
        front, back = named
        if len(front) != 2 or len(back) != 2:
            raise DecisionError(
                f"seat {seat}: a FRONT hand of {len(front)} and a BACK hand of {len(back)} cards; "
                f"each hand holds exactly 2 of the spot's {HAND_SIZE} cards"
            )
        chosen = setting_of(hand.cards, positions(seat, hand.cards, (*front, *back))[:2])
        if chosen.foul and state.options.foul_setting == "refuse":
            front, back = chosen.front_cards(hand.cards), chosen.back_cards(hand.cards)
            raise DecisionError(
                f"seat {seat}: FRONT {' '.join(format_cards(front))} ({describe_super9(chosen.front_rank)}) "
                f"outranks BACK {' '.join(format_cards(back))} ({describe_super9(chosen.back_rank)}); "
                "the BACK must rank at least as high as the FRONT (a foul hand)"
            )
        hand.setting = chosen

    def showdown(self, state: DoubleSuper9Round, source: CardSource) -> None:
        """Compare each non-foul spot's FRONT and BACK with the banker's (no card is dealt)."""
        banker = state.dealer.setting
        assert banker is not None
        for spot in state.action_order():
            setting = spot.hand.setting
            assert setting is not None
            if not setting.foul:
                spot.front = compare(setting.front_rank, banker.front_rank)
                spot.back = compare(setting.back_rank, banker.back_rank)

    def settle(self, state: DoubleSuper9Round) -> Settlement:
        if state.banker is None:
            return self._settle_house(state)
        return self._settle_player(state)

    @staticmethod
    def _outcome(spot: Spot) -> Outcome:
        if spot.hand.foul:
            return Outcome.LOSE
        assert spot.front is not None and spot.back is not None
        return hand_outcome(spot.front, spot.back)

    def _settle_house(self, state: DoubleSuper9Round) -> Settlement:
        rate = percent_fraction(state.options.commission)
        settlement = Settlement()
        house = 0
        for spot in sorted(state.spots, key=lambda s: s.seat):
            stake = spot.wagers[BET]
            outcome = self._outcome(spot)
            if outcome is Outcome.WIN:
                # Rounded up: -(-a // b) is the ceiling of a / b.
                spot.commission = -(-stake * rate.numerator // rate.denominator)
                result = WagerResult(Outcome.WIN, stake - spot.commission)
                house += spot.commission - stake
            elif outcome is Outcome.LOSE:
                result = WagerResult(Outcome.LOSE, -stake)
                house += stake
            else:
                result = WagerResult(Outcome.PUSH, 0)
            spot.action = stake if outcome is not Outcome.PUSH else 0
            settlement.results[spot.seat] = {BET: result}
            settlement.stakes[spot.seat] = dict(spot.wagers)
        settlement.house_net = house
        state.settlement = settlement
        return settlement

    def _settle_player(self, state: DoubleSuper9Round) -> Settlement:
        settlement = Settlement()
        order = state.action_order()
        # Foul hands were paid to the banker when set ("immediately"), before the showdown.
        order = [s for s in order if s.hand.foul] + [s for s in order if not s.hand.foul]
        banker = next(s for s in state.spots if s.seat == state.banker)
        left = banker.wagers[BANK]
        bank = 0                                 # the banker's side of every settled amount
        results: dict[int, WagerResult] = {}
        for spot in order:
            stake = spot.wagers[BET]
            if not left:
                results[spot.seat] = WagerResult(Outcome.VOID, 0)
                continue
            outcome = self._outcome(spot)
            if outcome is Outcome.PUSH:
                results[spot.seat] = WagerResult(Outcome.PUSH, 0)
                continue
            spot.action = min(stake, left)
            left -= spot.action
            if outcome is Outcome.WIN:
                results[spot.seat] = WagerResult(Outcome.WIN, spot.action)
                bank -= spot.action
            else:
                results[spot.seat] = WagerResult(Outcome.LOSE, -spot.action)
                bank += spot.action
        state.bank_action = banker.wagers[BANK] - left
        banker.action = state.bank_action
        fee = state.options.collection
        for spot in sorted(state.spots, key=lambda s: s.seat):
            entry = {BANK: signed(bank)} if spot is banker else {BET: results[spot.seat]}
            if fee:
                entry[COLLECTION] = WagerResult(Outcome.LOSE, -fee)
            settlement.results[spot.seat] = {n: entry[n] for n in self.wager_names if n in entry}
            settlement.stakes[spot.seat] = dict(spot.wagers)
        # The club has no interest in the outcome: its result is the collections alone.
        settlement.house_net = fee * len(state.spots)
        state.settlement = settlement
        return settlement

    # --- record --------------------------------------------------------------------------------
    def record(self, state: DoubleSuper9Round) -> dict[str, Any]:
        settlement = state.settlement
        seats = []
        for spot in state.spots:
            entry: dict[str, Any] = {
                "seat": spot.seat,
                "position": spot.seat,
                "banker": spot.seat == state.banker,
                **_hand_json(spot.hand),
            }
            if spot.seat != state.banker:
                entry["comparison"] = (
                    {"front": spot.front.value, "back": spot.back.value}
                    if spot.front is not None and spot.back is not None else None
                )
                entry["commission"] = spot.commission
            entry["action"] = spot.action
            entry["wagers"] = dict(spot.wagers)
            if settlement is not None:
                entry["results"] = {k: v.to_json() for k, v in settlement.results[spot.seat].items()}
            seats.append(entry)
        banker: int | str = "house" if state.banker is None else state.banker
        occupied = {s.seat for s in state.spots} | {state.banker_position}
        doc: dict[str, Any] = {
            "banking": state.options.banking,
            "banker": banker,
            "banker_position": state.banker_position,
            "dice_total": state.total,
            "first_position": state.first_position,
            "dealing_order": list(dealing_order(state.first_position)),
            "action_order": [s.seat for s in state.action_order()],
            "empty_positions": [p for p in range(1, POSITIONS + 1) if p not in occupied],
            "seats": seats,
            "dealer": {"seat": banker, **_hand_json(state.dealer)},
        }
        if state.banker is not None:
            bank = next(s.wagers[BANK] for s in state.spots if s.seat == state.banker)
            doc["bank"] = {"wager": bank, "action": state.bank_action, "unused": bank - state.bank_action}
        return doc


def _hand_json(hand: Hand) -> dict[str, Any]:
    """A hand as a screen redraws it: the four cards in dealt order and how they are set."""
    setting = hand.setting
    assert setting is not None
    front, back = setting.front_cards(hand.cards), setting.back_cards(hand.cards)
    front_name, back_name = describe_super9(setting.front_rank), describe_super9(setting.back_rank)
    return {
        "cards": format_cards(hand.cards),
        "front": format_cards(front),
        "back": format_cards(back),
        "front_hand": front_name,
        "back_hand": back_name,
        "house_way": hand.house_way,
        "foul": setting.foul,
        # One line for text screens (``egm round`` without --json prints it).
        "score": (
            f"FRONT {' '.join(format_cards(front))} ({front_name}) / BACK "
            f"{' '.join(format_cards(back))} ({back_name})"
            + (" [house way]" if hand.house_way else "")
            + (" FOUL" if setting.foul else "")
        ),
    }
