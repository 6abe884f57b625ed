"""Card notation, shoes, card sources and hand evaluators."""

from firmware.cards.card import CARDS, Card, format_cards, parse_card, parse_cards
from firmware.cards.errors import CardError, ShoeExhausted
from firmware.cards.shoe import double_super_9_shoe, standard_shoe
from firmware.cards.source import CardSource, PhysicalShoeSource, RngShoe, StackedSource

__all__ = [
    "CARDS", "Card", "CardError", "CardSource", "PhysicalShoeSource", "RngShoe", "ShoeExhausted",
    "StackedSource", "double_super_9_shoe", "format_cards", "parse_card", "parse_cards",
    "standard_shoe",
]
