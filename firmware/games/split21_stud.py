"""Split 21 Stud: a five-card poker hand plus a HIGH and a LOW blackjack hand (rules/split21-stud.md;
seed 002, US 6,179,293).

Positions 1-8 run clockwise; players sit at seats 1-7 (seat number = position number) and, with
``banking = house``, the house's hand is position 8. One 52-card deck, shuffled every round.

Round (the rules' steps):

1. **Wagers** before the deal: ``ante`` (poker), ``low`` and ``high`` (blackjack hands), all three
   mandatory, ``high`` exactly ``high_multiple`` x ``low`` (default 2, patent [0040]); ``jackpot``
   optional. ``bank`` is never placed: it is the banker's result with ``banking = player``.
2. **Die.** One eight-sided die from the certified RNG (``egm round --cards`` takes it from
   ``--dice N``). Dealing starts at the position after the die's number (rules step 3: "starting at
   the position left of the die's"; claim 2). With ``banking = house`` the dealer hand is always the
   house's, at position 8. With ``banking = player`` the seat at the die's position banks the round
   if it plays, else the next playing seat clockwise (rules step 2; claim 1 b)): its five cards are
   the dealer hand, set by the house way ([0036]), its own ``ante``, ``low`` and ``high`` are void
   (returned; [0014]: "no high hand or low hand bet is required") and it is counterparty to every
   other seat's ``ante``, ``low`` and ``high``; its result is the ``bank`` entry. Position 8 holds no
   hand in player banking.
3. **Deal** (the documented order that ``--cards`` stacks): one card at a time to each of the eight
   positions clockwise, starting at the position after the die's number, five times: 40 cards. Hands
   of positions nobody plays are dealt and discarded unseen ([0015]). A hand's cards keep that
   dealt order (its positions 0..4, used by the house way's tie-break).
4. **Setting** (a DECISION per playing seat other than the banker, kind ``set_hand``):
   ``set:<HIGH cards>|<LOW cards>`` (cards in any order within a hand, exactly the seat's five, 2 + 3
   or 3 + 2) or ``house-way``; on time-out the house way sets the hand (rules step 4). A split of
   another shape, or naming a card the seat does not hold or a card twice, is refused (patent rule
   4). A split of the right shape whose HIGH ranks below its LOW is **foul** (rules step 4; patent
   rule 2); what happens to it is the option ``foul_setting``:

   * ``refuse`` (default): the terminal prevents the mistake. The decision is a DecisionError that
     names the rule and changes nothing (the seat still has its decision to make), and the request's
     ``actions`` list only the legal splits (and ``house-way``). No hand is ever foul.
   * ``lose``: the split is accepted as a live table would take it; the foul hand loses every wager
     of that seat (patent rule 2: "an automatic losing hand") and cannot win the jackpot. The
     ``actions`` list all 20 splits.

   The house way is :func:`firmware.games.split21_stud_house_way.house_way`.
5. **Betting rounds during placing** (patent [0035]) belong to live tables only: ``betting_rounds``
   must stay off on this terminal.
6. **Showdown and settlement.** The poker wagers are paid first, then the blackjack hands (patent
   [0038]: "The winning poker hand is paid first"); on a terminal every wager settles at the same
   instant, so the order is only the order of the record's ``results``: ante, jackpot, high, low.

   * ``ante``: all five cards as a 5-card poker hand against the dealer hand's five; higher wins 1:1,
     equal pushes (patent rule 3).
   * ``high`` / ``low``: against the dealer's HIGH / LOW by
     :func:`~firmware.cards.blackjack.blackjack_rank` (a 2-card 21 beats a 3-card 21, rule 6). A
     player hand over 21 loses **even when the dealer's hand is also over 21** (rules step 6: "loses
     on a loss or a bust"; patent rule 5: a busted hand "automatically is a losing hand"; [0032]); a
     live hand beats a busted dealer hand. A win pays ``high_pays`` / ``low_pays`` (default 1:1),
     rounded down to whole credits; equal ranks push.
   * ``jackpot``: the pot is every ``jackpot`` wager (a foul seat's included) plus
     ``jackpot.house_ante`` from the house. Contestants: the JACKPOT seats whose hand is not foul,
     and with ``banking = house`` the house's hand, which enters with the house ante as its stake.
     The best 5-card poker hand wins (claim 4). If the house's hand alone is best, or no hand can
     contest, the house keeps the pot. Otherwise the house first keeps the commission,
     ``pot - floor(pot x (1 - jackpot.commission))`` (rounded up, in the house's favour), and the
     rest is shared among the equal best hands pro rata to their stakes ([0042]): each share is
     ``floor(payable x stake / total stake of the best hands)``, and the credits the floors leave
     (at most one per winner) go to the house. A winning seat's jackpot outcome is ``win`` with net
     ``share - wager``, which is negative when the share is smaller than the wager (a lone JACKPOT
     seat wins back its own wager less commission).

The house's result is computed on its own side (counterparty to every banked wager, plus
commission, remainders and its own pot share less the ante it added), so "players' nets + house
result = 0" checks the pool bookkeeping. All money is integer credits; no floats.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from math import floor
from typing import Any, ClassVar, Literal

from pydantic import Field, field_serializer, field_validator, model_validator

from firmware.cards.blackjack import blackjack_total
from firmware.cards.card import Card, format_cards
from firmware.cards.poker5 import describe, eval5
from firmware.cards.shoe import standard_shoe
from firmware.cards.source import CardSource
from firmware.games.base import DecisionRequest, Game, Outcome, Settlement, WagerResult, Wagers
from firmware.games.errors import DecisionError, GameError, WagerError
from firmware.games.options import GameOptions, Percent, percent_fraction
from firmware.games.results import signed
from firmware.games.setting import HOUSE_WAY, SET_HAND, SET_PREFIX, positions, read_setting
from firmware.games.split21_stud_house_way import HAND_SIZE, Split, house_way, split_of, splits

#: Positions around the table, clockwise; the house's hand is position 8 with ``banking = house``.
POSITIONS = 8
HOUSE_POSITION = 8
#: How the dealer hand is named in the jackpot record.
DEALER = "dealer"

#: The decision actions (besides the explicit ``set:HIGH|LOW`` splits).

#: The wagers whose counterparty is the bank (the house, or the player-banker).
BANKED = ("ante", "high", "low")


# --- options ------------------------------------------------------------------------------------
def _parse_ratio(value: Any) -> Any:
    """``"1:1"``, ``"3:2"``, ``"1"`` or ``1`` -> the pay as a ``Fraction``-readable value (N:M = N/M)."""
    if isinstance(value, str) and ":" in value:
        num, _, den = value.partition(":")
        return f"{num.strip()}/{den.strip()}"
    return value


def _format_ratio(value: Fraction) -> str:
    return f"{value.numerator}:{value.denominator}"


class JackpotOptions(GameOptions):
    """The JACKPOT pool (rules step 6)."""

    enabled: bool = True
    house_ante: int = Field(0, ge=0, le=1_000_000, description="credits the house adds to every pot")
    commission: Percent = Field(Decimal(5), ge=0, lt=100, description="percent of a pot players win kept")


    @model_validator(mode="after")
    def _possible(self) -> JackpotOptions:
        if self.house_ante and not self.enabled:
            raise ValueError("house_ante: there is no jackpot pool to add it to (enabled is false)")
        return self


class Split21StudOptions(GameOptions):
    """The rules' **(option)** settings; see docs/games/split21-stud.md."""

    banking: Literal["house", "player"] = "house"
    #: HIGH must be exactly this many times LOW (patent [0040]: "preferably exactly twice"); 0 lets
    #: HIGH be any amount within the table limits.
    high_multiple: int = Field(2, ge=0, le=10)
    #: Blackjack hand pays, ``N:M`` (rules step 6: 1:1).
    high_pays: Fraction = Fraction(1)
    low_pays: Fraction = Fraction(1)
    #: A split whose HIGH ranks below its LOW (patent rule 2): ``refuse`` it (the terminal prevents
    #: the mistake) or accept it as a foul hand that ``lose``-s every wager.
    foul_setting: Literal["refuse", "lose"] = "refuse"
    #: The patent's betting rounds while cards are placed ([0035]); live tables only.
    betting_rounds: bool = False
    #: Seconds the terminal allows for setting a hand before the house way sets it; ``None`` uses
    #: the terminal's ``games.decision_timeout_s`` (``RoundKernel.expire`` applies it).
    setting_time_limit_s: int | None = Field(None, ge=5, le=3600)
    jackpot: JackpotOptions = JackpotOptions()

    _ratios = field_validator("high_pays", "low_pays", mode="before")(_parse_ratio)

    @field_validator("high_pays", "low_pays")
    @classmethod
    def _positive(cls, value: Fraction) -> Fraction:
        if not 0 < value <= 100:
            raise ValueError(f"a win pays more than 0:1 and at most 100:1, not {_format_ratio(value)}")
        return value

    @field_serializer("high_pays", "low_pays")
    def _ratio(self, value: Fraction) -> str:
        return _format_ratio(value)

    @model_validator(mode="after")
    def _possible(self) -> Split21StudOptions:
        if self.betting_rounds:
            raise ValueError(
                "betting_rounds: the patent's betting rounds apply to live multi-player tables only, "
                "not to this terminal"
            )
        return self


# --- round state --------------------------------------------------------------------------------
@dataclass(slots=True)
class Hand:
    """Five cards at one position, in dealt order, and how they are set."""

    position: int
    cards: list[Card] = field(default_factory=list)
    split: Split | None = None
    house_way: bool = False
    poker: int = 0                 #: eval5 strength of the five cards

    @property
    def foul(self) -> bool:
        return self.split is not None and self.split.foul


@dataclass(slots=True)
class SeatState:
    seat: int
    wagers: dict[str, int]
    hand: Hand
    actions: tuple[str, ...] = ()  #: the set_hand actions, built on the first request


@dataclass(slots=True)
class JackpotResult:
    """The JACKPOT pool of one round; keys are seat numbers or :data:`DEALER`."""

    pot: int
    stakes: dict[int | str, int]   #: every stake in the pot (the house ante under DEALER)
    contestants: list[int | str]   #: hands that may win it (not foul)
    best: int | None = None        #: the winning poker strength
    winners: list[int | str] = field(default_factory=list)
    shares: dict[int | str, int] = field(default_factory=dict)
    commission: int = 0
    remainder: int = 0             #: credits no share took (floors; the whole pot if nobody contests)


@dataclass(slots=True)
class Split21Round:
    options: Split21StudOptions
    die: int
    banker: int | None             #: the banking seat, or None when the house banks
    seats: list[SeatState]
    dealer: Hand
    jackpot: JackpotResult | None = None
    settlement: Settlement | None = None

    @property
    def first_position(self) -> int:
        return self.die % POSITIONS + 1

    @property
    def dealer_position(self) -> int:
        return self.dealer.position


def dealing_order(die: int) -> tuple[int, ...]:
    """The eight positions in dealing order: clockwise from the one after the die's number."""
    return tuple((die + k) % POSITIONS + 1 for k in range(POSITIONS))


def banker_seat(die: int, seats: list[int]) -> int:
    """``banking = player``: the seat at the die's position if it plays, else the next playing seat
    clockwise (rules step 2). ``seats`` are the playing seats (1-7); position 8 is never a seat."""
    playing = set(seats)
    for k in range(POSITIONS):
        position = (die - 1 + k) % POSITIONS + 1
        if position in playing:
            return position
    raise GameError("banking = player needs a playing seat to bank")


def share_jackpot(
    pot: int,
    stakes: Mapping[int | str, int],
    strengths: Mapping[int | str, int],
    commission: Fraction,
    house: int | str | None,
) -> JackpotResult:
    """Decide the JACKPOT pool (see the module docstring, step 6).

    ``stakes``: each key's credits in the pot (the house ante under ``house``); ``strengths``: the
    poker strength of each hand that may contest (foul hands left out); ``house``: the key of the
    house's own hand, or None when the house has no hand in the round (player banking).
    """
    result = JackpotResult(pot=pot, stakes=dict(stakes), contestants=list(strengths))
    if not strengths:
        result.remainder = pot               # nobody can win it: the house keeps the pot
        return result
    best = max(strengths.values())
    result.best = best
    result.winners = [k for k, s in strengths.items() if s == best]
    if house is not None and result.winners == [house]:
        result.shares = {house: pot}         # the house's hand is best: the house keeps the pot
        return result
    payable = floor(pot * (1 - commission))
    result.commission = pot - payable
    total = sum(stakes[k] for k in result.winners)
    result.shares = {k: payable * stakes[k] // total for k in result.winners}
    result.remainder = payable - sum(result.shares.values())
    return result


def _blackjack_result(stake: int, mine: int, theirs: int, pays: Fraction) -> WagerResult:
    """A HIGH or LOW hand against the dealer's: ranks of blackjack_rank (0 = bust)."""
    if mine == 0 or mine < theirs:         # a bust loses, whatever the dealer holds
        return WagerResult(Outcome.LOSE, -stake)
    if mine == theirs:
        return WagerResult(Outcome.PUSH, 0)
    return WagerResult(Outcome.WIN, stake * pays.numerator // pays.denominator)


# --- the game -----------------------------------------------------------------------------------
class Split21Stud(Game[Split21StudOptions, Split21Round]):
    id: ClassVar[str] = "split21-stud"
    name: ClassVar[str] = "Split 21 Stud"
    #: Record order: the poker wagers first (patent [0038]), then the blackjack hands, then the bank.
    wager_names: ClassVar[tuple[str, ...]] = ("ante", "jackpot", "high", "low", "bank")
    options_model: ClassVar[type[Split21StudOptions]] = Split21StudOptions
    has_decisions: ClassVar[bool] = True
    dice: ClassVar[int] = 1
    dice_sides: ClassVar[int] = POSITIONS
    max_seats: ClassVar[int] = 7

    def decision_time_limit(self, options: Split21StudOptions) -> float | None:
        return options.setting_time_limit_s

    def shoe(self, options: Split21StudOptions) -> tuple[Card, ...]:
        return standard_shoe(1)

    # --- betting -------------------------------------------------------------------------------
    @staticmethod
    def offered_wagers(options: Split21StudOptions) -> tuple[str, ...]:
        return ("ante", "low", "high", "jackpot") if options.jackpot.enabled else ("ante", "low", "high")

    def validate_wagers(self, options: Split21StudOptions, wagers: Wagers) -> None:
        offered = self.offered_wagers(options)
        for seat, bets in sorted(wagers.items()):
            for name in bets:
                if name == "bank":
                    raise WagerError(
                        f"seat {seat}: bank is not a wager to place; it is the banker's result "
                        "with banking = player"
                    )
                if name not in offered:
                    raise WagerError(
                        f"seat {seat}: {self.id} offers no wager {name!r} here; offered: {', '.join(offered)}"
                    )
            missing = [n for n in BANKED if not bets.get(n)]
            if missing:
                raise WagerError(
                    f"seat {seat}: ante, low and high are mandatory; missing {', '.join(missing)}"
                )
            k = options.high_multiple
            if k and bets["high"] != k * bets["low"]:
                raise WagerError(
                    f"seat {seat}: high must be {k} x low ({k * bets['low']}), not {bets['high']}"
                )
        if options.banking == "player" and len(wagers) < 2:
            raise WagerError("banking = player needs at least two seats: a banker and a player")

    def automatic_wagers(
        self, options: Split21StudOptions, seats: int, unit: int
    ) -> dict[int, dict[str, int]]:
        """On seats 1..``seats``: ante and low ``unit``, high ``high_multiple`` x ``unit`` (``unit``
        when the multiple is 0), and jackpot ``unit`` when the pool is enabled."""
        bets = {"ante": unit, "low": unit, "high": (options.high_multiple or 1) * unit}
        if options.jackpot.enabled:
            bets["jackpot"] = unit
        return {seat: dict(bets) for seat in range(1, seats + 1)}

    # --- round ---------------------------------------------------------------------------------
    def new_round(
        self, options: Split21StudOptions, wagers: Wagers, dice: tuple[int, ...] | None = None
    ) -> Split21Round:
        dice = tuple(dice or ())
        self.check_dice(dice)
        die = dice[0]
        seats = [
            SeatState(seat=s, wagers={k: v for k, v in wagers[s].items() if v}, hand=Hand(position=s))
            for s in sorted(wagers)
        ]
        banker = banker_seat(die, sorted(wagers)) if options.banking == "player" else None
        dealer = next(s.hand for s in seats if s.seat == banker) if banker else Hand(HOUSE_POSITION)
        return Split21Round(options=options, die=die, banker=banker, seats=seats, dealer=dealer)

    def deal(self, state: Split21Round, source: CardSource) -> None:
        """Five rounds of one card to each of the eight positions in :func:`dealing_order`; the
        hands of positions nobody plays are discarded unseen. The dealer hand is set by the house
        way at once (it is not a decision)."""
        hands: dict[int, Hand] = {s.seat: s.hand for s in state.seats}
        hands.setdefault(state.dealer.position, state.dealer)
        order = dealing_order(state.die)
        seen: set[Card] = set()
        for _ in range(HAND_SIZE):
            for position in order:
                card = source.next_card()
                if card in seen:
                    raise GameError(f"{card} is dealt twice: {self.id} deals from one 52-card deck")
                seen.add(card)
                hand = hands.get(position)
                if hand is not None:
                    hand.cards.append(card)
        for hand in hands.values():
            hand.poker = eval5(hand.cards)
        state.dealer.split = house_way(state.dealer.cards)
        state.dealer.house_way = True

    def pending_decisions(self, state: Split21Round) -> list[DecisionRequest]:
        accept_foul = state.options.foul_setting == "lose"
        return [
            DecisionRequest(seat=s.seat, kind=SET_HAND, actions=self._actions(s, accept_foul),
                            default=HOUSE_WAY)
            for s in state.seats
            if s.hand.split is None
        ]

    @staticmethod
    def _actions(seat: SeatState, accept_foul: bool) -> tuple[str, ...]:
        """The splits a seat may choose as explicit ``set:HIGH|LOW`` actions, then ``house-way``:
        the legal ones, or all 20 (foul ones too) when ``accept_foul`` (``foul_setting = lose``)."""
        if not seat.actions:
            cards = seat.hand.cards
            seat.actions = (
                *(
                    f"{SET_PREFIX}{' '.join(format_cards(s.high_cards(cards)))}|"
                    f"{' '.join(format_cards(s.low_cards(cards)))}"
                    for s in splits(cards)
                    if accept_foul or not s.foul
                ),
                HOUSE_WAY,
            )
        return seat.actions

    def decision_view(self, state: Split21Round, seat: int) -> dict[str, Any]:
        """The player's five cards in dealt order, and their position."""
        mine = next((s for s in state.seats if s.seat == seat), None)
        return {} if mine is None else {"cards": [str(c) for c in mine.hand.cards], "position": mine.hand.position}

    def decide(self, state: Split21Round, seat: int, action: str) -> None:
        """``house-way`` or ``set:<HIGH>|<LOW>``; an illegal split raises DecisionError and changes
        nothing. A foul split (HIGH below LOW) is refused the same way with ``foul_setting = refuse``
        and accepted with ``lose`` (it then loses every wager, patent rule 2)."""
        hand = next((s.hand for s in state.seats if s.seat == seat), None)
        if hand is None or seat == state.banker:
            raise DecisionError(f"seat {seat} has no hand to set")
        if hand.split is not None:
            raise DecisionError(f"seat {seat} has already set its hand")
        named = read_setting(seat, action, ("HIGH", "LOW"), "set:As Kd|2c 3h 4s")
        if named is None:
            hand.split = house_way(hand.cards)
            hand.house_way = True
            return
        high, low = named
        high_positions = positions(seat, hand.cards, (*high, *low))[:len(high)]
        if len(high) not in (2, 3) or len(high) + len(low) != HAND_SIZE:
            raise DecisionError(
                f"seat {seat}: a HIGH hand of {len(high)} and a LOW hand of {len(low)} cards; each "
                f"hand holds 2 or 3 cards and together exactly the seat's {HAND_SIZE}"
            )
        split = split_of(hand.cards, high_positions)
        if split.foul and state.options.foul_setting == "refuse":
            high, low = split.high_cards(hand.cards), split.low_cards(hand.cards)
            raise DecisionError(
                f"seat {seat}: HIGH {' '.join(format_cards(high))} ({_rank_text(high)}) ranks below "
                f"LOW {' '.join(format_cards(low))} ({_rank_text(low)}); the HIGH hand must rank at "
                "least as high as the LOW hand (rules step 4, patent rule 2): set it again or answer "
                "house-way"
            )
        hand.split = split

    def showdown(self, state: Split21Round, source: CardSource) -> None:
        """The JACKPOT contest (the blackjack hands and the ante need no cards and settle in
        :meth:`settle`)."""
        bettors = [s for s in state.seats if s.wagers.get("jackpot")]
        if not bettors:
            return
        opts = state.options.jackpot
        house = DEALER if state.banker is None else None
        stakes: dict[int | str, int] = {s.seat: s.wagers["jackpot"] for s in bettors}
        strengths: dict[int | str, int] = {s.seat: s.hand.poker for s in bettors if not s.hand.foul}
        pot = sum(stakes.values()) + opts.house_ante
        if house is not None:
            stakes[house] = opts.house_ante
            strengths[house] = state.dealer.poker
        state.jackpot = share_jackpot(pot, stakes, strengths, percent_fraction(opts.commission), house)

    def settle(self, state: Split21Round) -> Settlement:
        opts = state.options
        dealer = state.dealer
        assert dealer.split is not None
        settlement = Settlement()
        bank = 0                       # the bank's result on ante, high and low
        for seat in state.seats:
            w = seat.wagers
            split = seat.hand.split
            assert split is not None
            results: dict[str, WagerResult] = {}
            if seat.seat == state.banker:
                for name in BANKED:
                    results[name] = WagerResult(Outcome.VOID, 0)
            elif split.foul:
                for name in BANKED:
                    results[name] = WagerResult(Outcome.LOSE, -w[name])
            else:
                mine, theirs = seat.hand.poker, dealer.poker
                results["ante"] = (
                    WagerResult(Outcome.WIN, w["ante"]) if mine > theirs
                    else WagerResult(Outcome.LOSE, -w["ante"]) if mine < theirs
                    else WagerResult(Outcome.PUSH, 0)
                )
                results["high"] = _blackjack_result(w["high"], split.high_rank, dealer.split.high_rank,
                                                    opts.high_pays)
                results["low"] = _blackjack_result(w["low"], split.low_rank, dealer.split.low_rank,
                                                   opts.low_pays)
            bank -= sum(r.net for r in results.values())
            if "jackpot" in w:
                results["jackpot"] = self._jackpot_result(state, seat)
            settlement.results[seat.seat] = {n: results[n] for n in self.wager_names if n in results}
            settlement.stakes[seat.seat] = dict(w)
        if state.banker is not None:
            # The player-banker is counterparty to ante, high and low; "bank" is last in wager_names.
            settlement.results[state.banker]["bank"] = signed(bank)
            settlement.stakes[state.banker]["bank"] = 0
            bank = 0
        settlement.house_net = bank + self._house_jackpot_result(state)
        state.settlement = settlement
        return settlement

    @staticmethod
    def _jackpot_result(state: Split21Round, seat: SeatState) -> WagerResult:
        stake = seat.wagers["jackpot"]
        pool = state.jackpot
        assert pool is not None
        if seat.seat in pool.winners:
            return WagerResult(Outcome.WIN, pool.shares[seat.seat] - stake)
        return WagerResult(Outcome.LOSE, -stake)

    @staticmethod
    def _house_jackpot_result(state: Split21Round) -> int:
        """The house's gain from the pool: commission, floors and its own share, less its ante."""
        pool = state.jackpot
        if pool is None:
            return 0
        return pool.commission + pool.remainder + pool.shares.get(DEALER, 0) - state.options.jackpot.house_ante

    # --- record --------------------------------------------------------------------------------
    def record(self, state: Split21Round) -> dict[str, Any]:
        settlement = state.settlement
        seats = []
        for seat in state.seats:
            entry: dict[str, Any] = {"seat": seat.seat, "position": seat.seat, **_hand_json(seat.hand),
                                     "banker": seat.seat == state.banker, "wagers": dict(seat.wagers)}
            if settlement is not None:
                entry["results"] = {k: v.to_json() for k, v in settlement.results[seat.seat].items()}
            seats.append(entry)
        dealer = {"seat": "house" if state.banker is None else state.banker, **_hand_json(state.dealer)}
        occupied = {s.seat for s in state.seats} | {state.dealer.position}
        doc: dict[str, Any] = {
            "banker": "house" if state.banker is None else state.banker,
            "dealer_position": state.dealer_position,
            "first_position": state.first_position,
            "dealing_order": list(dealing_order(state.die)),
            "empty_positions": [p for p in range(1, POSITIONS + 1) if p not in occupied],
            "seats": seats,
            "dealer": dealer,
        }
        pool = state.jackpot
        doc["jackpot"] = {
            "pot": pool.pot if pool else 0,
            "house_ante": state.options.jackpot.house_ante if pool else 0,
            "stakes": {str(k): v for k, v in pool.stakes.items()} if pool else {},
            "contestants": pool.contestants if pool else [],
            "best": describe(pool.best) if pool and pool.best is not None else None,
            "winners": pool.winners if pool else [],
            "shares": {str(k): v for k, v in pool.shares.items()} if pool else {},
            "commission": pool.commission if pool else 0,
            "remainder": pool.remainder if pool else 0,
        }
        return doc


def _total_text(cards: list[Card]) -> str:
    t = blackjack_total(cards)
    return "bust" if t.bust else str(t.total)


def _rank_text(cards: list[Card]) -> str:
    """A blackjack hand's rank in words, for messages: ``bust``, ``21 in two cards`` or the total."""
    t = blackjack_total(cards)
    return "bust" if t.bust else "21 in two cards" if t.natural else str(t.total)


def _hand_json(hand: Hand) -> dict[str, Any]:
    """A hand as a screen redraws it: the five cards in dealt order, the split, totals, poker."""
    split = hand.split
    assert split is not None
    high, low = split.high_cards(hand.cards), split.low_cards(hand.cards)
    poker = describe(hand.poker)
    return {
        "cards": format_cards(hand.cards),
        "high": format_cards(high),
        "low": format_cards(low),
        "high_total": blackjack_total(high).total,
        "low_total": blackjack_total(low).total,
        "house_way": hand.house_way,
        "foul": split.foul,
        "poker": poker,
        # One line for text screens (``egm round`` without --json prints it).
        "score": f"HIGH {_total_text(high)} / LOW {_total_text(low)} / {poker}",
    }
