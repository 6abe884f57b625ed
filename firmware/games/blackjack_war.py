"""Blackjack War (seed 000, claims 10, 15, 16): initial 2-card blackjack totals, higher wins."""

from __future__ import annotations

from typing import ClassVar

from firmware.cards.blackjack import blackjack_total
from firmware.cards.card import Card
from firmware.games.war_engine import WarScoring
from firmware.games.war_family import WarFamilyGame, WarFamilyOptions


class BlackjackWarOptions(WarFamilyOptions):
    """War steps compare by ``high_card`` (default) or ``aggregate``; baccarat points make no sense here."""

    ALLOWED_SCORING = (WarScoring.HIGH_CARD, WarScoring.AGGREGATE)
    war_scoring: WarScoring = WarScoring.HIGH_CARD


class BlackjackWar(WarFamilyGame):
    id: ClassVar[str] = "blackjack-war"
    name: ClassVar[str] = "Blackjack War"
    options_model: ClassVar[type[BlackjackWarOptions]] = BlackjackWarOptions

    def hand_score(self, cards: list[Card], community: list[Card]) -> int:
        """Best total of the two initial cards, an ace 1 or 11 (A+A = 12)."""
        return blackjack_total(cards).total
