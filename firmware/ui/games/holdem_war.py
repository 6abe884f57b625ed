"""Hold'em War's screens: the war family's table (``games/war.py``) with the five community cards in
the dealer area, each hand's two hole cards, and each hand's made poker hand by name.

Every seat and the dealer get two hole cards, then five community cards; a hand is the best five of
its seven cards (the kernel's ``poker5.eval7``: the record's ``score``). The names shown are made
from that very strength (``games/poker.py``); an exact split is the tie that starts a war, and
wars and the war pool go as in Baccarat War.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from firmware.ui import theme
from firmware.ui.cards import card_size, fan
from firmware.ui.games.base import DemoRound
from firmware.ui.games.poker import hand_name5
from firmware.ui.games.war import POOL_DEMO, WarFamilyUi, WarFeltView, WarTableScreen
from firmware.ui.layout import Rect
from firmware.ui.messages import key, text
from firmware.ui.painter import Painter
from firmware.ui.screens.base import TableScreen
from firmware.ui.widgets import draw_card_view, draw_hand


class HoldemWarTable(WarTableScreen):
    """The dealer area holds the dealer's hole cards (and war cards) at the left and the five
    community cards at the right."""

    DEALER = Rect(240, 80, 560, 222)
    COMMUNITY = Rect(820, 80, 640, 222)
    DEALER_CARD_H = 140
    COMMUNITY_CARD_H = 140

    def draw_dealer(self, p: Painter, felt: WarFeltView, origin: tuple[int, int]) -> None:
        draw_hand(p, self.DEALER, felt.dealer, card_h=self.DEALER_CARD_H, origin=origin, label_size=theme.LABEL)
        r = self.COMMUNITY
        p.region("community", r)
        p.text(text("holdem.community"), Rect(r.x, r.y, r.w, theme.LABEL + 6), theme.LABEL, theme.FELT_LINE)
        card_w, _ = card_size(self.COMMUNITY_CARD_H)
        slots = fan(Rect(r.x, r.y + theme.LABEL + 6, r.w, self.COMMUNITY_CARD_H), 5, card_w)
        for slot in slots:                                   # the five places, outlined on the felt
            p.rect(slot, theme.FELT_LINE, radius=10, width=2)
        for slot, card in zip(slots, felt.community, strict=False):
            draw_card_view(p, slot, card, origin)


class HoldemWarUi(WarFamilyUi):
    game_id: ClassVar[str] = "holdem-war"
    screen: ClassVar[type[TableScreen]] = HoldemWarTable
    counting_help: ClassVar[str] = key("holdem.help.counting")
    side_bets_caption: ClassVar[str] = key("holdem.caption.side_bets")
    tie_help: ClassVar[str] = key("holdem.help.tie")
    tie_note: ClassVar[str] = key("holdem.paytable.tie_note")
    pool_tiers_help: ClassVar[str] = key("holdem.help.pool_tiers")
    #: Spot 1's 9 2 and the dealer's 9 3 both play the board's 5 6 7 8 for a nine-high straight: an
    #: exact split, so TIE wins and a war starts; the war cards K and 4 win it for spot 1 (high card),
    #: and the same cards decide the war pool between spot 1 and the dealer.
    demo: ClassVar[DemoRound] = DemoRound(
        "9h 9d 2c 3c 5s 6h 7d 8c Kd Kh 4s", {1: {"bac": 10, "war": 10, "tie": 5, "war_pool": 10}},
        {1: {"bac": 25, "war": 25, "tie": 5, "war_pool": 10}}, options=POOL_DEMO, seek="war_step")

    def hand_text(self, doc: Mapping[str, Any]) -> str:
        """The hand's name from its strength in the record (the kernel's ``eval7`` of its seven cards)."""
        return hand_name5(int(doc["score"]))

    def score_line(self, doc: Mapping[str, Any], war: str | None) -> str:
        """The made hand stays named during a war, beside the war card's rank."""
        if war is not None:
            return text("holdem.hand.war_score", hand=self.hand_text(doc), score=war)
        return super().score_line(doc, None)
