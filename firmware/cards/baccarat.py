"""Baccarat hand scoring (seed 000, FIG. 8).

A card's baccarat value is A = 1, 2-9 face value, 10/J/Q/K = 0 (:data:`BACCARAT_VALUE`); a hand's
score is the sum of its values mod 10. Q+3+10+6 scores 9; 2+1+10+9 scores 2.

Cards are plain ints 0..51 (a :class:`~firmware.cards.card.Card` is an ``int``), so the functions also
accept numpy integers; the batch form works on a whole array of hands at once for enumeration.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from firmware.cards.card import BACCARAT_VALUE

__all__ = ["baccarat_score", "baccarat_score_batch"]

_VALUE_ARRAY = np.array(BACCARAT_VALUE, dtype=np.int64)
_VALUE_ARRAY.flags.writeable = False


def baccarat_score(cards: Iterable[int]) -> int:
    """The baccarat score (0..9) of any number of cards: the sum of their values mod 10.

    >>> from firmware.cards.card import parse_cards
    >>> baccarat_score(parse_cards("Qs 3h Td 6c"))
    9
    """
    value = BACCARAT_VALUE
    return sum(value[c] for c in cards) % 10


def baccarat_score_batch(hands: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Baccarat scores of an ``[N, k]`` array of card indexes (one hand per row)."""
    arr = np.asarray(hands)
    if arr.ndim != 2:
        raise ValueError(f"expected an [N, k] array of card indexes, got shape {arr.shape}")
    if arr.size and (arr.min() < 0 or arr.max() > 51):
        raise ValueError("card indexes must be 0..51")
    totals: npt.NDArray[np.int64] = _VALUE_ARRAY[arr].sum(axis=1) % 10
    return totals
