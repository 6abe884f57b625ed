"""Hold'em War (seed 000, claims 10, 15, 16): best five of two hole cards and five community cards."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from firmware.cards.card import Card
from firmware.cards.poker5 import describe, eval7
from firmware.cards.source import CardSource
from firmware.games.war_engine import WarScoring
from firmware.games.war_family import WarFamilyGame, WarFamilyOptions, WarRound


class HoldemWarOptions(WarFamilyOptions):
    """No FOUR_CARD unless configured; war steps by ``high_card`` (default) or ``aggregate``.

    TIE (an exact split of the best five cards) has its own pay: with 8 decks a split happens with
    probability 0.0506761384 (exact: firmware.math.holdem_war_tie), so TIE pays 18:1 by default
    (return 96.2847%).
    """

    ALLOWED_SCORING = (WarScoring.HIGH_CARD, WarScoring.AGGREGATE)
    war_scoring: WarScoring = WarScoring.HIGH_CARD
    four_card: bool = False
    tie_pays: int = Field(18, ge=1, le=100_000)


class HoldemWar(WarFamilyGame):
    id: ClassVar[str] = "holdem-war"
    name: ClassVar[str] = "Hold'em War"
    options_model: ClassVar[type[HoldemWarOptions]] = HoldemWarOptions

    def deal_community(self, state: WarRound, source: CardSource) -> None:
        """Five community cards after the hole cards."""
        state.community.extend(source.next_card() for _ in range(5))

    def hand_score(self, cards: list[Card], community: list[Card]) -> int:
        return eval7([*cards, *community])

    def describe_hand(self, cards: list[Card], community: list[Card]) -> str | None:
        return describe(eval7([*cards, *community]))
