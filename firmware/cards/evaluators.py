"""Every hand evaluator of the cards layer in one place.

Pure functions over card indexes (ints 0..51; :class:`~firmware.cards.card.Card` is an ``int``), no
I/O and no state beyond lookup tables built once at import:

* baccarat: :func:`baccarat_score` (and a numpy batch form);
* blackjack: :func:`blackjack_total`, :func:`blackjack_rank` (Split 21 Stud comparison key);
* 5-card poker: :func:`eval5`, :func:`eval7` (best five of seven), :func:`best5` (of 5-7),
  their ``*_batch`` forms, :func:`category`, :func:`describe`;
* 3-card poker: :func:`eval3`, :func:`best3_of`, :func:`category3`, :func:`describe3`, batch forms;
* 4-card poker (FOUR_CARD side bet): :func:`category4`, :func:`four_card_counts`,
  :func:`four_card_rarity_order`;
* Double Super 9: :func:`super9_rank`, :func:`describe_super9`.

Every poker strength and ranking key is an ``int``: higher is better, equal is a tie.
"""

from __future__ import annotations

from firmware.cards.baccarat import baccarat_score, baccarat_score_batch
from firmware.cards.blackjack import BlackjackTotal, blackjack_rank, blackjack_total
from firmware.cards.poker3 import (
    ThreeCardCategory,
    best3_of,
    best3_of_batch,
    category3,
    describe3,
    eval3,
    eval3_batch,
    strength3,
)
from firmware.cards.poker4 import (
    FourCardCategory,
    category4,
    category4_batch,
    four_card_counts,
    four_card_rarity_order,
)
from firmware.cards.poker5 import (
    HandCategory,
    best5,
    best5_batch,
    category,
    category_batch,
    describe,
    eval5,
    eval5_batch,
    eval7,
    eval7_batch,
    tiebreak_ranks,
)
from firmware.cards.super9 import describe_super9, super9_points, super9_rank, super9_value

__all__ = [
    "BlackjackTotal", "FourCardCategory", "HandCategory", "ThreeCardCategory", "baccarat_score",
    "baccarat_score_batch", "best3_of", "best3_of_batch", "best5", "best5_batch", "blackjack_rank",
    "blackjack_total", "category", "category3", "category4", "category4_batch", "category_batch",
    "describe", "describe3", "describe_super9", "eval3", "eval3_batch", "eval5", "eval5_batch",
    "eval7", "eval7_batch", "four_card_counts", "four_card_rarity_order", "strength3",
    "super9_points", "super9_rank", "super9_value", "tiebreak_ranks",
]
