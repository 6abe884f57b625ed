"""The war procedure shared by every war-family game (rules/baccarat-war.md, steps 5 and 6).

Only the *initial* hand score differs between Baccarat War, Blackjack War and Hold'em War; the wars
against the dealer and the war-pool contest are the same code, parameterised by the war scoring mode.

One war-card sequence per hand: a hand's n-th war card is dealt once, the first time any contest
needs it, and every later contest reuses it. So a hand's war score after n cards is the same in the
war against the dealer and in the pool contest.

Dealing order of a step: every hand that needs a card, seats ascending, the dealer last.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from firmware.cards.card import BACCARAT_VALUE, BLACKJACK_VALUE, Card
from firmware.cards.errors import ShoeExhausted
from firmware.cards.source import CardSource

#: The dealer's key: it sorts after every seat, so the dealer is dealt last in each step.
DEALER = 99


class WarScoring(enum.StrEnum):
    """How hands compare in a war step (claims 1, 10-13, 19; [0077])."""

    #: Cumulative baccarat score of the initial cards plus the war cards so far (FIG. 8, FIG. 10).
    BACCARAT = "baccarat"
    #: Only this step's war card, by poker rank, ace high (casino-war style, claim 1).
    HIGH_CARD = "high_card"
    #: Point total of the war cards so far, tens kept, A = 1, 2-10 face, J/Q/K = 10 ([0077]).
    AGGREGATE = "aggregate"


class WarEnd(enum.StrEnum):
    WIN = "win"
    LOSE = "lose"
    MISDEAL = "misdeal"


@dataclass(slots=True)
class WarHand:
    """A seat's or the dealer's hand as the war procedure sees it."""

    key: int                      #: seat number, or DEALER
    initial: list[Card]           #: the initial cards (the hole cards in Hold'em War)
    score: int                    #: the game's own initial hand score (higher is better)
    war_cards: list[Card] = field(default_factory=list)

    @property
    def is_dealer(self) -> bool:
        return self.key == DEALER


class MisdealSignal(Exception):
    """Internal: the card source ran out during a war and the source says that is a misdeal."""


def _war_card(hand: WarHand, n: int, source: CardSource, exhaustion_is_misdeal: bool) -> None:
    """Make sure ``hand`` holds its n-th war card (1-based), dealing it if it is not dealt yet."""
    if len(hand.war_cards) >= n:
        return
    try:
        hand.war_cards.append(source.next_card())
    except ShoeExhausted:
        if exhaustion_is_misdeal:
            raise MisdealSignal from None
        raise


def war_score(mode: WarScoring, hand: WarHand, step: int) -> int:
    """The hand's score after its first ``step`` war cards, by ``mode``."""
    cards = hand.war_cards
    if mode is WarScoring.HIGH_CARD:
        return cards[step - 1].rank
    if mode is WarScoring.AGGREGATE:
        return sum(BLACKJACK_VALUE[c] for c in cards[:step])
    total = sum(BACCARAT_VALUE[c] for c in hand.initial)
    return (total + sum(BACCARAT_VALUE[c] for c in cards[:step])) % 10


def _deal_step(hands: Sequence[WarHand], step: int, source: CardSource, misdeal_ok: bool) -> None:
    for hand in sorted(hands, key=lambda h: h.key):
        _war_card(hand, step, source, misdeal_ok)


@dataclass(slots=True)
class DealerWarResult:
    ends: dict[int, WarEnd]       #: seat -> how its war with the dealer ended
    steps: int                    #: war steps dealt
    misdeal: bool                 #: the war stopped on max_war_steps or an empty shoe
    reason: str | None = None


def war_against_dealer(
    seats: Sequence[WarHand],
    dealer: WarHand,
    *,
    mode: WarScoring,
    max_steps: int,
    source: CardSource,
    exhaustion_is_misdeal: bool,
) -> DealerWarResult:
    """Rules step 5: every seat tied with the dealer wars against the dealer's shared war cards.

    Each step deals one war card to every seat still at war and then to the dealer; a seat above the
    dealer wins, below loses, equal goes on. After ``max_steps`` steps (or when a physical shoe runs
    out) every seat still at war ends in a misdeal.
    """
    ends: dict[int, WarEnd] = {}
    at_war = sorted(seats, key=lambda h: h.key)
    step = 0
    reason = None
    while at_war:
        if step >= max_steps:
            reason = f"max_war_steps ({max_steps}) reached"
            break
        step += 1
        try:
            _deal_step([*at_war, dealer], step, source, exhaustion_is_misdeal)
        except MisdealSignal:
            reason = "the shoe ran out of cards"
            break
        d = war_score(mode, dealer, step)
        still = []
        for hand in at_war:
            s = war_score(mode, hand, step)
            if s > d:
                ends[hand.key] = WarEnd.WIN
            elif s < d:
                ends[hand.key] = WarEnd.LOSE
            else:
                still.append(hand)
        at_war = still
    for hand in at_war:
        ends[hand.key] = WarEnd.MISDEAL
    return DealerWarResult(ends=ends, steps=step, misdeal=bool(at_war), reason=reason if at_war else None)


def pool_contestants(participants: Sequence[WarHand]) -> list[WarHand]:
    """Rules step 6 A/B: who contests the pot, decided on the initial scores.

    A. If any score is shared by two or more participants, the highest such tied tier contests and
       everyone else (a higher single hand included) is out.
    B. Otherwise the single highest hand wins outright (a one-hand "contest").
    """
    if not participants:
        return []
    tiers: dict[int, list[WarHand]] = {}
    for hand in participants:
        tiers.setdefault(hand.score, []).append(hand)
    tied = [score for score, hands in tiers.items() if len(hands) >= 2]
    if tied:
        return sorted(tiers[max(tied)], key=lambda h: h.key)
    return [max(participants, key=lambda h: h.score)]


@dataclass(slots=True)
class PoolContestResult:
    contestants: list[int]
    winner: int | None            #: seat number, DEALER, or None on a misdeal / no contest
    steps: int
    eliminated: list[tuple[int, int]] = field(default_factory=list)  #: (step, key) in order
    misdeal: bool = False
    reason: str | None = None


def pool_contest(
    contestants: Sequence[WarHand],
    *,
    mode: WarScoring,
    max_steps: int,
    source: CardSource,
    exhaustion_is_misdeal: bool,
) -> PoolContestResult:
    """Rules step 6 contest: live contestants draw one war card per step (reusing cards already
    dealt to them); those below the step's best score are eliminated; the last one standing wins."""
    keys = [h.key for h in contestants]
    live = sorted(contestants, key=lambda h: h.key)
    if not live:
        return PoolContestResult(contestants=keys, winner=None, steps=0)
    eliminated: list[tuple[int, int]] = []
    step = 0
    while len(live) > 1:
        if step >= max_steps:
            return PoolContestResult(keys, None, step, eliminated, True, f"max_war_steps ({max_steps}) reached")
        step += 1
        try:
            _deal_step(live, step, source, exhaustion_is_misdeal)
        except MisdealSignal:
            return PoolContestResult(keys, None, step, eliminated, True, "the shoe ran out of cards")
        scores = {h.key: war_score(mode, h, step) for h in live}
        best = max(scores.values())
        eliminated.extend((step, h.key) for h in live if scores[h.key] < best)
        live = [h for h in live if scores[h.key] == best]
    return PoolContestResult(keys, live[0].key, step, eliminated)


def pool_payout(pot: int, commission: Fraction) -> tuple[int, int]:
    """A seat winning ``pot`` receives it less ``commission``, rounded down; the house keeps the rest.

    Returns ``(paid_to_winner, commission_kept)`` in integer credits.
    """
    paid = (pot * (1 - commission)).__floor__()
    return paid, pot - paid
