"""What the hand-setting games' screens share (Split 21 Stud, Double Super 9): setting the cards
into two hands by touch, the decision's buttons, and a round shown from its record.

While the kernel waits for a ``set_hand`` decision, the spot's cards (the request's ``view``, in
dealt order) are shown in the two hands they will be set into, first in dealt order
(:attr:`HandSettingUi.initial`). Touching a card moves it to the other hand (``UiAction("game",
("move", seat, index))``); HOUSE WAY arranges them as the game's own house way would (shown, not
yet sent); RESET puts them back; SET HAND sends the kernel's own action for that arrangement (the
request's ``set:FIRST|SECOND`` with the same cards in each hand, or ``house-way`` when the house
way is shown unchanged). An arrangement of the wrong shape, or one the request does not list (a
foul, with ``foul_setting = refuse``), is refused on the spot's note line with a catalogue message
and changes nothing; the kernel would refuse it too. ``round_started`` forgets the arrangements.

A completed round is shown from its record (never recomputed): the dice and the spot's hands as
set, the dealer's hands (set the house way), then the game's result steps (:meth:`result_steps`),
then the settlement.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from firmware.cards.card import Card, parse_cards
from firmware.games.setting import HOUSE_WAY, SET_PREFIX
from firmware.ui.actions import UiAction
from firmware.ui.betting import Wagers
from firmware.ui.context import GameContext, GameT, OptionsT
from firmware.ui.games.base import GameUi, result_view, stakes_of
from firmware.ui.games.set_table import (
    RESULT_S,
    DiceView,
    PositionMark,
    SetFeltView,
    SetHandView,
    SetReveal,
    SetSeatView,
    beat,
)
from firmware.ui.messages import text
from firmware.ui.playback import Beat
from firmware.ui.view import BetAreaView, ButtonView, CardView, ResultView

POSITIONS = 8


class HandSettingUi(GameUi[GameT, OptionsT]):
    """A game whose players set their cards into two hands; a subclass says which hands and how
    a hand scores, and supplies its bet areas, dice words and result steps."""

    #: The two hands, in the order of the kernel's action ``set:FIRST|SECOND`` and of the record's keys.
    hands: ClassVar[tuple[str, str]]
    #: Cards dealt to a hand.
    hand_size: ClassVar[int]
    #: Positions (in dealt order) of the first hand's cards before the player moves any.
    initial: ClassVar[tuple[int, ...]] = (0, 1)

    def __init__(self, ctx: GameContext[GameT, OptionsT]) -> None:
        super().__init__(ctx)
        self.round_started()

    # --- what the game supplies ------------------------------------------------------------------
    @abstractmethod
    def hand_label(self, hand: str) -> str:
        """The name of one of the two hands (HIGH, FRONT...)."""

    @abstractmethod
    def score(self, cards: Sequence[Card]) -> str:
        """A hand's score as the player reads it (a blackjack total, Super 9 points)."""

    @abstractmethod
    def shape_ok(self, first: int) -> bool:
        """Whether a first hand of ``first`` cards (the second holds the rest) is a setting."""

    @abstractmethod
    def shape_message(self) -> str:
        """Why an arrangement of the wrong size cannot be set."""

    @abstractmethod
    def foul_message(self) -> str:
        """Why a foul arrangement is refused."""

    @abstractmethod
    def house_way_first(self, cards: Sequence[Card]) -> tuple[int, ...]:
        """Positions of the first hand's cards in the game's own house way."""

    def summary(self, cards: Sequence[Card]) -> str:
        """A line about all the spot's cards (Split 21 Stud: the poker hand); "" for none."""
        return ""

    @abstractmethod
    def dice_view(self, dice: Sequence[int], record: Mapping[str, Any] | None, wagers: Wagers) -> DiceView:
        """The dice box: the round's dice and what they decided (``dice`` is () before a round)."""

    @abstractmethod
    def result_steps(self, record: Mapping[str, Any]) -> list[tuple[str, frozenset[tuple[int, str]], str]]:
        """The round's result beats after the dealer's hands are shown: (kind, the (seat, wager)s
        settled in it, caption)."""

    def hand_result(self, seat: Mapping[str, Any], hand: str) -> ResultView | None:
        """The tag on one of a spot's hands once its wagers are settled (None: no tag)."""
        return None

    def reminders(self) -> tuple[str, tuple[str, ...]]:
        """The top-right box: a title and the rules a player sets by."""
        return "", ()

    def dealer_label(self, record: Mapping[str, Any] | None) -> str:
        return text("setgame.dealer")

    def linked(self, wager: str) -> bool:
        """A wager that follows another on the slip and cannot be touched alone."""
        return False

    # --- setting the cards ----------------------------------------------------------------------
    def round_started(self) -> None:
        self._first: dict[int, frozenset[int]] = {}
        self._house: set[int] = set()
        self._notes: dict[int, str] = {}
        self._turn: int | None = None

    def arrangement(self, seat: int) -> frozenset[int]:
        """Positions of the cards in the spot's first hand, as the screen holds them now."""
        return self._first.get(seat, frozenset(self.initial))

    def act(self, arg: Any, status: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        what, seat, *more = arg
        request = next((r for r in (status.get("round") or {}).get("pending") or [] if r["seat"] == seat), None)
        if request is None:
            return None
        cards = parse_cards(" ".join(request["view"]["cards"]))
        if what == "move":
            index = int(more[0])
            self._first[seat] = self.arrangement(seat) ^ {index}
            self._house.discard(seat)
            self._notes.pop(seat, None)
        elif what == "reset":
            self._first.pop(seat, None)
            self._house.discard(seat)
            self._notes.pop(seat, None)
        elif what == "house_way":
            self._first[seat] = frozenset(self.house_way_first(cards))
            self._house.add(seat)
            self._notes[seat] = text("setting.house_way_shown")
        elif what == "set":
            return self._send(seat, cards, request)
        else:
            raise ValueError(f"unknown hand-setting action {arg!r}")
        return None

    def _send(self, seat: int, cards: Sequence[Card], request: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
        first = self.arrangement(seat)
        if seat in self._house and HOUSE_WAY in request["actions"]:
            return ("decide", {"seat": seat, "action": HOUSE_WAY})
        if not self.shape_ok(len(first)):
            self._notes[seat] = self.shape_message()
            return None
        mine = (sorted(cards[i] for i in first), sorted(c for i, c in enumerate(cards) if i not in first))
        for action in request["actions"]:
            if action.startswith(SET_PREFIX) and _hands_of(action) == mine:
                return ("decide", {"seat": seat, "action": action})
        self._notes[seat] = self.foul_message()
        return None

    def decision_buttons(self, request: Mapping[str, Any]) -> list[ButtonView]:
        seat = request["seat"]
        if request.get("kind") != "set_hand" or (self._turn is not None and seat != self._turn):
            return []
        return [
            ButtonView("button.house_way", text("setting.house_way"), UiAction("game", ("house_way", seat))),
            ButtonView("button.reset", text("setting.reset"), UiAction("game", ("reset", seat))),
            ButtonView("button.set_hand", text("setting.set_hand"), UiAction("game", ("set", seat)),
                       self.shape_ok(len(self.arrangement(seat))), "deal"),
        ]

    # --- a round ---------------------------------------------------------------------------------
    def timeline(self, record: Mapping[str, Any]) -> list[Beat]:
        beats = [beat("dice", SetReveal(), self.dice_caption(record))]
        beats.append(beat("dealer", SetReveal(dealer=True), self.dealer_caption(record)))
        done: set[tuple[int, str]] = set()
        for kind, settled, caption in self.result_steps(record):
            done |= settled
            beats.append(beat(kind, SetReveal(True, frozenset(done)), caption, RESULT_S))
        every = frozenset((int(s["seat"]), w) for s in record["seats"] for w in s.get("results", {}))
        caption = self.settled_caption(record)
        beats.append(Beat("settle", 0.0, SetReveal(True, every, True), caption))
        return beats

    def dice_caption(self, record: Mapping[str, Any]) -> str:
        return self.dice_view(record.get("dice") or (), record, {}).note

    def dealer_caption(self, record: Mapping[str, Any]) -> str:
        dealer = record["dealer"]
        return text("setgame.caption_dealer", hands=self.hands_text(dealer))

    def hands_text(self, hand: Mapping[str, Any]) -> str:
        """``HIGH 20 and LOW 17``: a set hand of the record in words."""
        return text("list.separator").join(
            text("setgame.hand_score", hand=self.hand_label(h), score=self.score(parse_cards(" ".join(hand[h]))))
            for h in self.hands)

    # --- the felt's view -------------------------------------------------------------------------
    def felt(self, *, wagers: Wagers, record: Mapping[str, Any] | None, beat: Beat | None,
             progress: float, betting: bool, pending: Sequence[Mapping[str, Any]] = (),
             dice: tuple[int, ...] | None = None, decided: Sequence[Mapping[str, Any]] = ()) -> SetFeltView:
        reveal = beat.reveal if (record is not None and beat is not None) else None
        if record is not None and reveal is None:
            reveal = SetReveal(True, frozenset((int(s["seat"]), w) for s in record["seats"]
                                               for w in s.get("results", {})), True)
        by_seat = {int(s["seat"]): s for s in record["seats"]} if record is not None else {}
        requests = {int(r["seat"]): r for r in pending if r.get("kind") == "set_hand"}
        answered = {int(d["seat"]): d for d in decided}
        # The spot being set now (the first waiting in the dealing order the dice chose: the one
        # that acts first): its buttons are the ones drawn (decision_buttons, asked after the felt
        # by builders.table_view).
        self._turn = self._first_to_act(requests, dice, wagers)
        title, lines = self.reminders()
        if record is not None:
            assert reveal is not None
            dealer = self._dealer_from_record(record, reveal.dealer)
            shown_dice: Sequence[int] = record["dice"]
        else:
            hidden = self.hand_size if (pending or (wagers and not betting)) else 0
            dealer = SetSeatView(0, self.dealer_label(None), () if hidden else self._empty_hands("dealer"), hidden)
            shown_dice = dice or ()
        seats = []
        numbers = sorted(set(by_seat) | {s for s, b in wagers.items() if any(b.values())}) if not betting else []
        for seat in numbers or range(1, self.ctx.seats + 1):
            if seat in requests:
                seats.append(self._setting_seat(seat, requests[seat], wagers.get(seat, {})))
            elif seat in answered and record is None:
                seats.append(self._set_seat(seat, answered[seat], wagers.get(seat, {})))
            elif seat in by_seat and reveal is not None:
                seats.append(self._seat_from_record(by_seat[seat], reveal, wagers.get(seat, {}), betting))
            else:
                bets = wagers.get(seat, {})
                hidden = self.hand_size if (pending or (bets and not betting)) else 0
                seats.append(SetSeatView(seat, text("setgame.spot", n=seat), self._empty_hands(seat) if not hidden
                                         else (), hidden, areas=self._areas(seat, bets, None, betting)))
        dice_view = self.dice_view(tuple(shown_dice), record, wagers)
        return SetFeltView(dealer, dice_view, tuple(seats), lines, title)

    def _first_to_act(self, requests: Mapping[int, Mapping[str, Any]], dice: tuple[int, ...] | None, wagers: Wagers) -> int | None:
        """Of the spots waiting, the first in the dealing order from the position the dice chose."""
        if not requests:
            return None
        marks = self.dice_view(tuple(dice or ()), None, wagers).positions
        first = next((m.position for m in marks if m.first), None)
        if first is None:
            return min(requests)
        return min(requests, key=lambda seat: (seat - first) % max(len(marks), 1))

    def _empty_hands(self, seat: int | str) -> tuple[SetHandView, ...]:
        name = "dealer" if seat == "dealer" else f"spot.{seat}"
        return tuple(SetHandView(f"{name}.hand.{h}", self.hand_label(h)) for h in self.hands)

    def _setting_seat(self, seat: int, request: Mapping[str, Any], bets: Mapping[str, int]) -> SetSeatView:
        cards = parse_cards(" ".join(request["view"]["cards"]))
        first = self.arrangement(seat)
        groups = (sorted(first), [i for i in range(len(cards)) if i not in first])
        hands = []
        for name, indices in zip(self.hands, groups, strict=True):
            held = [cards[i] for i in indices]
            hands.append(SetHandView(
                f"spot.{seat}.hand.{name}", self.hand_label(name),
                tuple(CardView(str(c), outline=seat in self._house) for c in held),
                tuple(UiAction("game", ("move", seat, i)) for i in indices),
                self.score(held) if held else "",
                touch_names=tuple(f"spot.{seat}.card.{i}" for i in indices)))
        note = self._notes.get(seat) or (
            text("setting.touch_to_move") if self._turn in (None, seat)
            else text("setting.after_turn", spot=text("setgame.spot", n=self._turn)))
        return SetSeatView(seat, text("setgame.spot", n=seat), tuple(hands), summary=self.summary(cards), note=note,
                           areas=self._areas(seat, bets, None, False), highlight=seat == self._turn)

    def _set_seat(self, seat: int, decided: Mapping[str, Any], bets: Mapping[str, int]) -> SetSeatView:
        """A spot already set while another is being set: its two hands as the player set them."""
        cards = parse_cards(" ".join((decided.get("view") or {}).get("cards", ())))
        action = str(decided.get("action", ""))
        if action.startswith(SET_PREFIX):
            groups = _hands_of(action)
        else:                                             # house-way (asked for, or by time-out)
            first = set(self.house_way_first(cards))
            groups = ([c for i, c in enumerate(cards) if i in first], [c for i, c in enumerate(cards) if i not in first])
        hands = tuple(SetHandView(f"spot.{seat}.hand.{name}", self.hand_label(name), tuple(CardView(str(c)) for c in held),
                                  score=self.score(held) if held else "")
                      for name, held in zip(self.hands, groups, strict=True))
        return SetSeatView(seat, text("setgame.spot", n=seat), hands, summary=self.summary(cards),
                           note=text("setting.set_done"), areas=self._areas(seat, bets, None, False))

    def _hands_from(self, who: Mapping[str, Any], name: str,
                    result: Callable[[str], ResultView | None] | None = None) -> tuple[SetHandView, ...]:
        out = []
        for h in self.hands:
            cards = parse_cards(" ".join(who[h]))
            out.append(SetHandView(f"{name}.hand.{h}", self.hand_label(h), tuple(CardView(str(c)) for c in cards),
                                   score=self.score(cards), result=result(h) if result else None))
        return tuple(out)

    def _dealer_from_record(self, record: Mapping[str, Any], shown: bool) -> SetSeatView:
        dealer = record["dealer"]
        if not shown:
            return SetSeatView(0, self.dealer_label(record), (), self.hand_size)
        summary = text("setgame.house_way_set")
        extra = self.summary(parse_cards(" ".join(dealer["cards"])))
        if extra:
            summary = text("setgame.summary_pair", first=extra, second=summary)
        return SetSeatView(0, self.dealer_label(record), self._hands_from(dealer, "dealer"), summary=summary)

    def _seat_from_record(self, entry: Mapping[str, Any], reveal: SetReveal, bets: Mapping[str, int],
                          betting: bool) -> SetSeatView:
        seat = int(entry["seat"])
        settled = {w for s, w in reveal.results if s == seat}

        def result(hand: str) -> ResultView | None:
            return self.hand_result(entry, hand) if settled else None

        summary = self.summary(parse_cards(" ".join(entry["cards"])))
        if entry.get("foul"):
            summary = text("setgame.summary_pair", first=summary, second=text("setgame.foul")) if summary \
                else text("setgame.foul")
        elif entry.get("house_way"):
            summary = text("setgame.summary_pair", first=summary, second=text("setgame.house_way_set")) if summary \
                else text("setgame.house_way_set")
        results = {w: entry["results"][w] for w in settled if w in entry.get("results", {})}
        shown = bets if betting and bets else entry.get("wagers", {})
        return SetSeatView(seat, text("setgame.spot", n=seat), self._hands_from(entry, f"spot.{seat}", result),
                           summary=summary, areas=self._areas(seat, shown, results, betting, stakes_of(entry)))

    def _areas(self, seat: int, bets: Mapping[str, int], results: Mapping[str, Any] | None,
               betting: bool, stakes: Mapping[str, Any] | None = None) -> tuple[BetAreaView, ...]:
        money = self.ctx.money
        out = []
        for s, wager in self.bet_areas():
            if s != seat:
                continue
            amount = int(bets.get(wager, 0))
            result = (result_view(results[wager], int((stakes or {}).get(wager, 0)))
                      if results and wager in results else None)
            linked = self.linked(wager)
            out.append(BetAreaView(seat, wager, self.area_label(wager), amount, money.credits(amount) if amount else "",
                                   result, enabled=betting and not linked, linked=linked))
        return tuple(out)

    # --- shared pieces of the dice box -------------------------------------------------------------
    def positions(self, first: int, dealer: int, players: Sequence[int], dealer_mark: str) -> tuple[PositionMark, ...]:
        marks = []
        for position in range(1, POSITIONS + 1):
            state = "dealer" if position == dealer else "player" if position in players else ""
            marks.append(PositionMark(position, dealer_mark if position == dealer else str(position), state,
                                      position == first))
        return tuple(marks)


def stack(order: Sequence[int], hands: Mapping[int, str], filler: str, size: int) -> str:
    """The cards in dealing order (``order``: the positions, first dealt to first; one card to
    each position, ``size`` times) that deal ``hands`` (position -> its cards in dealt order) and
    ``filler`` to the positions nobody plays: a shoe stacked for a demonstration or a test."""
    spare = iter(filler.split())
    dealt = {p: c.split() for p, c in hands.items()}
    return " ".join(dealt[p][k] if p in dealt else next(spare) for k in range(size) for p in order)


def _hands_of(action: str) -> tuple[list[Card], list[Card]]:
    first, _, second = action[len(SET_PREFIX):].partition("|")
    return sorted(parse_cards(first)), sorted(parse_cards(second))
