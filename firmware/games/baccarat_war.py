"""Baccarat War (seed 000, Appendix A; rules/baccarat-war.md): hands score by baccarat points."""

from __future__ import annotations

from typing import ClassVar

from firmware.cards.baccarat import baccarat_score
from firmware.cards.card import Card
from firmware.games.war_family import WarFamilyGame, WarFamilyOptions


class BaccaratWarOptions(WarFamilyOptions):
    """All three war scoring modes; ``baccarat`` (cumulative baccarat score) by default."""


class BaccaratWar(WarFamilyGame):
    id: ClassVar[str] = "baccarat-war"
    name: ClassVar[str] = "Baccarat War"
    options_model: ClassVar[type[BaccaratWarOptions]] = BaccaratWarOptions

    def hand_score(self, cards: list[Card], community: list[Card]) -> int:
        return baccarat_score(cards)
