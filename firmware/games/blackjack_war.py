"""Blackjack War (seed 000, claims 10, 15, 16): initial 2-card blackjack totals, higher wins."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from firmware.cards.blackjack import blackjack_total
from firmware.cards.card import Card
from firmware.games.war_engine import WarScoring
from firmware.games.war_family import WarFamilyGame, WarFamilyOptions


class BlackjackWarOptions(WarFamilyOptions):
    """War steps compare by ``high_card`` (default) or ``aggregate``; baccarat points make no sense here.

    Two 2-card blackjack totals tie far more rarely than baccarat scores (8 decks: exactly
    0.071365, against about 0.10), so TIE pays 12:1 by default (return 92.77%), not baccarat's 8:1
    (which would return 64.2%).
    """

    ALLOWED_SCORING = (WarScoring.HIGH_CARD, WarScoring.AGGREGATE)
    war_scoring: WarScoring = WarScoring.HIGH_CARD
    tie_pays: int = Field(12, ge=1, le=100_000)


class BlackjackWar(WarFamilyGame):
    id: ClassVar[str] = "blackjack-war"
    name: ClassVar[str] = "Blackjack War"
    options_model: ClassVar[type[BlackjackWarOptions]] = BlackjackWarOptions

    def hand_score(self, cards: list[Card], community: list[Card]) -> int:
        """Best total of the two initial cards, an ace 1 or 11 (A+A = 12)."""
        return blackjack_total(cards).total
