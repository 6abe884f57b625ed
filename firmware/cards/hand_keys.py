"""What the poker evaluators share: the card keys they add up, the check of a batch of hands, and
the rank names a hand description uses (:mod:`firmware.cards.poker3`, :mod:`firmware.cards.poker5`,
:mod:`firmware.cards.poker4`).

A card ``c`` (``rank = c // 4 + 2``, ``suit = c % 4``) has the key ``8 ** (rank - 2)`` (an octal
digit per rank counts the cards of that rank in a hand) plus a one in its suit's 4-bit counter above
bit :data:`SUIT_SHIFT`. The counters start at a bias (:func:`suit_bias`) that rides on the first
card's key (:func:`first_keys`), chosen so that a counter's bit 3 (:data:`FLUSH_BITS`) is set
exactly when its suit holds enough cards for a flush. The sum of a hand's keys is, in one integer, its rank multiset
(``key & RANK_MASK``) and whether it holds a flush.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from firmware.cards.card import RANK_NAMES

SUIT_SHIFT = 40
RANK_MASK = (1 << 39) - 1
FLUSH_BITS = 0x8888 << SUIT_SHIFT

#: The rank part of each card's key.
RANK_KEY: tuple[int, ...] = tuple(8 ** (c >> 2) for c in range(52))
#: Each card's key: its rank digit plus a one in its suit's counter.
CARD_KEY: tuple[int, ...] = tuple(RANK_KEY[c] + (1 << (SUIT_SHIFT + 4 * (c & 3))) for c in range(52))


def suit_bias(flush_size: int) -> int:
    """The suit counters' start: each counter's bit 3 is set once its suit holds ``flush_size``
    cards (3 for three-card poker, 5 for five-card)."""
    return (8 - flush_size) * 0x1111 << SUIT_SHIFT


def first_keys(flush_size: int) -> tuple[int, ...]:
    """The first card's keys: :data:`CARD_KEY` plus the :func:`suit_bias`."""
    bias = suit_bias(flush_size)
    return tuple(k + bias for k in CARD_KEY)


def freeze(*arrays: np.ndarray) -> None:
    """Make lookup tables read-only."""
    for a in arrays:
        a.flags.writeable = False


def frozen(values: tuple[int, ...]) -> npt.NDArray[np.int64]:
    """A read-only int64 array of ``values`` (a key table for the batch evaluators)."""
    arr = np.array(values, dtype=np.int64)
    freeze(arr)
    return arr


#: :data:`RANK_KEY` and :data:`CARD_KEY` as arrays, for the batch evaluators.
RANK_KEY_A = frozen(RANK_KEY)
CARD_KEY_A = frozen(CARD_KEY)


def card_array(hands: npt.ArrayLike, sizes: tuple[int, ...]) -> np.ndarray:
    """``hands`` as an ``[N, k]`` integer array of card indexes 0..51, ``k`` one of ``sizes``;
    ``ValueError`` otherwise."""
    arr = np.asarray(hands)
    if arr.ndim != 2 or arr.shape[1] not in sizes:
        want = " or ".join(str(n) for n in sizes)
        raise ValueError(f"expected an [N, {want}] array of card indexes, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"card indexes must be integers, not {arr.dtype}")
    if arr.size and (arr.min() < 0 or arr.max() > 51):
        raise ValueError("card indexes must be 0..51")
    return arr


#: A rank's name in a hand description (``'Queen'``) and its plural (``'Queens'``, ``'Sixes'``).
NAME: dict[int, str] = {r: n.capitalize() for r, n in RANK_NAMES.items()}
PLURAL: dict[int, str] = {r: ("Sixes" if r == 6 else n + "s") for r, n in NAME.items()}
