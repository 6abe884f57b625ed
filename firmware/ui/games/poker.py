"""Poker hands as the player reads them, shared by the games whose hands are poker hands (Three
Card Poker, Hold'em War): a hand's name from its strength, the strength being the game's own
evaluator's (``firmware.cards.poker3`` / ``poker5``), so the name is never worked out differently
from the outcome. The words are the catalogue fragment ``messages.poker_hands.toml``; the pay
tables' category names too."""

from __future__ import annotations

from firmware.cards.poker3 import ThreeCardCategory, category3
from firmware.cards.poker5 import HandCategory, category, tiebreak_ranks
from firmware.ui.messages import key, text

RANK: dict[int, str] = {
    2: key("poker_hand.rank.two"), 3: key("poker_hand.rank.three"), 4: key("poker_hand.rank.four"),
    5: key("poker_hand.rank.five"), 6: key("poker_hand.rank.six"), 7: key("poker_hand.rank.seven"),
    8: key("poker_hand.rank.eight"), 9: key("poker_hand.rank.nine"), 10: key("poker_hand.rank.ten"),
    11: key("poker_hand.rank.jack"), 12: key("poker_hand.rank.queen"), 13: key("poker_hand.rank.king"),
    14: key("poker_hand.rank.ace"),
}
RANKS: dict[int, str] = {
    2: key("poker_hand.ranks.two"), 3: key("poker_hand.ranks.three"), 4: key("poker_hand.ranks.four"),
    5: key("poker_hand.ranks.five"), 6: key("poker_hand.ranks.six"), 7: key("poker_hand.ranks.seven"),
    8: key("poker_hand.ranks.eight"), 9: key("poker_hand.ranks.nine"), 10: key("poker_hand.ranks.ten"),
    11: key("poker_hand.ranks.jack"), 12: key("poker_hand.ranks.queen"), 13: key("poker_hand.ranks.king"),
    14: key("poker_hand.ranks.ace"),
}
#: Pay-table category names (the options' category field names).
CATEGORY_LABELS: dict[str, str] = {
    "royal_flush": key("poker_hand.category.royal_flush"),
    "straight_flush": key("poker_hand.category.straight_flush"),
    "four_of_a_kind": key("poker_hand.category.four_of_a_kind"),
    "full_house": key("poker_hand.category.full_house"),
    "flush": key("poker_hand.category.flush"),
    "straight": key("poker_hand.category.straight"),
    "three_of_a_kind": key("poker_hand.category.three_of_a_kind"),
    "pair": key("poker_hand.category.pair"),
}


def rank_name(rank: int) -> str:
    """``Queen`` for 12."""
    return text(RANK[rank])


def ranks_name(rank: int) -> str:
    """``Queens`` for 12."""
    return text(RANKS[rank])


def hand_name3(strength: int) -> str:
    """A three-card hand's name (``poker3.eval3`` / ``best3_of`` strength): ``Pair of Queens``."""
    top = (int(strength) >> 8) & 0xF
    match category3(strength):
        case ThreeCardCategory.STRAIGHT_FLUSH:
            return text("poker_hand.straight_flush", rank=rank_name(top))
        case ThreeCardCategory.THREE_OF_A_KIND:
            return text("poker_hand.three_of_a_kind", ranks=ranks_name(top))
        case ThreeCardCategory.STRAIGHT:
            return text("poker_hand.straight", rank=rank_name(top))
        case ThreeCardCategory.FLUSH:
            return text("poker_hand.flush", rank=rank_name(top))
        case ThreeCardCategory.PAIR:
            return text("poker_hand.pair", ranks=ranks_name(top))
        case _:
            return text("poker_hand.high_card", rank=rank_name(top))


def hand_name5(strength: int) -> str:
    """A five-card hand's name (``poker5.eval5`` / ``eval7`` strength): ``Full House, Kings over Fives``."""
    r = tiebreak_ranks(strength)
    match category(strength):
        case HandCategory.FIVE_OF_A_KIND:
            return text("poker_hand.five_of_a_kind", ranks=ranks_name(r[0]))
        case HandCategory.STRAIGHT_FLUSH if r[0] == 14:
            return text("poker_hand.royal_flush")
        case HandCategory.STRAIGHT_FLUSH:
            return text("poker_hand.straight_flush", rank=rank_name(r[0]))
        case HandCategory.FOUR_OF_A_KIND:
            return text("poker_hand.four_of_a_kind", ranks=ranks_name(r[0]))
        case HandCategory.FULL_HOUSE:
            return text("poker_hand.full_house", high=ranks_name(r[0]), low=ranks_name(r[1]))
        case HandCategory.FLUSH:
            return text("poker_hand.flush", rank=rank_name(r[0]))
        case HandCategory.STRAIGHT:
            return text("poker_hand.straight", rank=rank_name(r[0]))
        case HandCategory.THREE_OF_A_KIND:
            return text("poker_hand.three_of_a_kind", ranks=ranks_name(r[0]))
        case HandCategory.TWO_PAIR:
            return text("poker_hand.two_pair", high=ranks_name(r[0]), low=ranks_name(r[1]))
        case HandCategory.PAIR:
            return text("poker_hand.pair", ranks=ranks_name(r[0]))
        case _:
            return text("poker_hand.high_card", rank=rank_name(r[0]))
