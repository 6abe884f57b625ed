"""The exact probability that Hold'em War's seat and dealer split: equal best five of their two hole
cards and the five community cards (rules/holdem-war.md; docs/math/holdem-war.md).

The nine cards (two hole cards each, five on the board) are drawn without replacement from
``decks`` decks: 52 *kinds* of card, ``decks`` copies of each. The enumeration is over the board,
with suit symmetry, and then over the hole cards as *classes* of cards that the hand values cannot
tell apart:

* **No three of a suit on the board** (``plain``): nobody can hold five of a suit, so a hand's value
  depends on ranks alone. The board is a rank multiset (6,188 of them) and a card's class is its
  rank, ``4 x decks - b_r`` of rank ``r`` left. The board's weight is the number of 5-card sets of
  physical cards with those ranks and at most two of any suit (a product over ranks, summed over
  suit counts).
* **Three, four or five of one suit** (``flush3``, ``flush4``, ``flush5``): only that suit can
  flush, and only whether a card is of it matters. The board is that suit's rank multiset ``f``
  and the other cards' ``o``, weighted ``4 x prod C(decks, f_r) x prod C(3 decks, o_r)``; a class
  is (rank, in the suit or not): 26 classes.

For one board and class counts ``n``, every unordered class pair's value is the game's own
evaluator on real cards (:func:`~firmware.cards.poker5.eval7_batch`, the batch form of the
``eval7`` that :class:`~firmware.games.holdem_war.HoldemWar` scores with). The number of ordered
ways the seat then the dealer draw two cards each and tie is

    T = sum over ordered (a, b) of  n_a (n_b - [a = b])  x  S_v(n - e_a - e_b),   v = value(a, b)

with ``S_v(m) = sum over ordered (c, d) of value v of m_c (m_d - [c = d])``: exact card removal.
As ``S_v`` is a quadratic form, ``S_v(n - e_a - e_b)`` follows from ``S_v(n)`` and the sums
``G[a, b] = sum_c n_c [value(a, c) = v]``, all with numpy integers (no rounding). The tie count is
``sum over boards of weight x T`` out of ``C(N, 5) x (N - 5)_4`` (``N = 52 x decks``).

The counts of the four parts are shipped for the default shoe in ``holdem_war_ties.json`` (about a
minute of CPU to recompute: ``make par-sheets``); any other number of decks is computed on demand.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from itertools import combinations_with_replacement, product
from math import comb, perm, prod
from pathlib import Path

import numpy as np

from firmware.cards.poker5 import eval7_batch

__all__ = ["PARTS", "TieCount", "board_ties", "is_known", "part_count", "tie_count", "total_deals"]

#: The four parts of the board enumeration (see the module docstring).
PARTS = ("plain", "flush3", "flush4", "flush5")
#: Bumped whenever a change could change a shipped count.
VERSION = 1
SHIPPED = "holdem_war_ties.json"
RANKS = tuple(range(2, 15))
CHUNK = 1500


class TieCount:
    """Tie counts of the four parts out of every deal of the nine cards."""

    def __init__(self, decks: int, parts: dict[str, int]) -> None:
        self.decks = decks
        self.parts = dict(parts)

    @property
    def ties(self) -> int:
        return sum(self.parts.values())

    @property
    def deals(self) -> int:
        return total_deals(self.decks)

    @property
    def probability(self) -> Fraction:
        return Fraction(self.ties, self.deals)


def total_deals(decks: int) -> int:
    """Every deal of the board (a 5-card set) and the seat's then the dealer's ordered two cards."""
    n = 52 * decks
    return comb(n, 5) * perm(n - 5, 4)


def _card(rank: int, suit: int) -> int:
    return 4 * (rank - 2) + suit


# --- boards -----------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def _suit_spreads(decks: int, copies: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The ways ``copies`` cards of one rank spread over the four suits: (count per suit, number of
    physical-card sets), at most two of a suit (more could not leave every suit below three)."""
    out = []
    for spread in product(range(min(2, decks) + 1), repeat=4):
        if sum(spread) == copies:
            out.append((spread, prod(comb(decks, c) for c in spread)))
    return tuple(out)


@lru_cache(maxsize=64)
def _plain_weight(decks: int, multiplicities: tuple[int, ...]) -> int:
    """Physical 5-card sets with rank multiplicities ``multiplicities`` and at most two of any suit."""
    states: dict[tuple[int, ...], int] = {(0, 0, 0, 0): 1}
    for copies in multiplicities:
        nxt: dict[tuple[int, ...], int] = {}
        for totals, ways in states.items():
            for spread, w in _suit_spreads(decks, copies):
                t = tuple(a + b for a, b in zip(totals, spread, strict=True))
                if max(t) <= 2:
                    nxt[t] = nxt.get(t, 0) + ways * w
        states = nxt
    return sum(states.values())


Board = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def boards(part: str, decks: int) -> Iterator[Board]:
    """The boards of ``part``: (weight, board cards as real cards, hole class cards, class counts).

    A class is represented by one real card: its rank in suit 0 (the flush suit) or suit 1 (any
    other suit: the board holds at most two of those, so suit 1 never reaches five).
    """
    per_rank = 4 * decks
    if part == "plain":
        for ranks in combinations_with_replacement(RANKS, 5):
            mult = [ranks.count(r) for r in RANKS]
            if max(mult) > per_rank:
                continue
            weight = _plain_weight(decks, tuple(sorted((m for m in mult if m), reverse=True)))
            if not weight:
                continue
            cards = tuple(_card(r, i % 4) for i, r in enumerate(ranks))    # at most two a suit
            yield weight, cards, tuple(_card(r, 0) for r in RANKS), tuple(per_rank - m for m in mult)
        return
    k = int(part[-1])
    for suited in combinations_with_replacement(RANKS, k):
        for other in combinations_with_replacement(RANKS, 5 - k):
            fs = [suited.count(r) for r in RANKS]
            os = [other.count(r) for r in RANKS]
            if max(fs) > decks or max(os, default=0) > 3 * decks:
                continue
            weight = 4 * prod(comb(decks, c) for c in fs) * prod(comb(3 * decks, c) for c in os)
            cards = tuple(_card(r, 0) for r in suited) + tuple(_card(r, 1) for r in other)
            hole = tuple(_card(r, 0) for r in RANKS) + tuple(_card(r, 1) for r in RANKS)
            counts = tuple(decks - c for c in fs) + tuple(3 * decks - c for c in os)
            yield weight, cards, hole, counts


# --- ties on a batch of boards ----------------------------------------------------------------------
def board_ties(board_cards: np.ndarray, hole: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``T`` of each board: ordered (seat's two, dealer's two) draws of equal value.

    ``board_cards``: [B, 5] real cards; ``hole``: [K] one real card per class; ``counts``: [B, K]
    cards of each class left in the shoe.
    """
    b, k = counts.shape
    ia, ib = np.triu_indices(k)
    rows = np.concatenate([
        np.repeat(board_cards, len(ia), axis=0),
        np.tile(np.stack([hole[ia], hole[ib]], axis=1), (b, 1)),
    ], axis=1)
    upper = eval7_batch(rows).astype(np.int64).reshape(b, len(ia))
    value = np.empty((b, k, k), dtype=np.int64)
    value[:, ia, ib] = upper
    value[:, ib, ia] = upper
    n = counts.astype(np.int64)
    w = n[:, :, None] * (n[:, None, :] - np.eye(k, dtype=np.int64)[None])      # n_a (n_b - [a=b])
    # S_v(n) at every (a, b): the sum of w over the board's pairs of the same value.
    keys = (np.arange(b, dtype=np.int64)[:, None] * (1 << 32) + value.reshape(b, -1)).ravel()
    uniq, inverse = np.unique(keys, return_inverse=True)
    s = np.bincount(inverse, weights=w.ravel().astype(np.float64), minlength=len(uniq))
    s_at = np.rint(s).astype(np.int64)[inverse].reshape(b, k, k)
    # G[a, b] = sum_c n_c [value(a, c) = value(a, b)]
    same = value[:, :, None, :] == value[:, :, :, None]                       # [B, a, b, c]
    g = np.einsum("xabc,xc->xab", same, n)
    diag = np.diagonal(value, axis1=1, axis2=2)                               # value(a, a)
    da = (diag[:, :, None] == value).astype(np.int64)                         # [value(a,a) = v(a,b)]
    db = (diag[:, None, :] == value).astype(np.int64)
    after = s_at - 2 * (g + g.transpose(0, 2, 1)) + 2 + 2 * da + 2 * db
    ties: np.ndarray = (w * after).sum(axis=(1, 2))
    return ties


def part_count(part: str, decks: int, progress: Callable[[int], None] | None = None) -> int:
    """The tie count of one part of the board enumeration."""
    total = 0
    batch: list[Board] = []

    def flush() -> int:
        weights = [x[0] for x in batch]
        t = board_ties(np.array([x[1] for x in batch], dtype=np.int64), np.array(batch[0][2]),
                       np.array([x[3] for x in batch], dtype=np.int64))
        if progress is not None:
            progress(len(batch))
        return sum(wt * int(x) for wt, x in zip(weights, t.tolist(), strict=True))

    for board in boards(part, decks):
        batch.append(board)
        if len(batch) == CHUNK:
            total += flush()
            batch = []
    if batch:
        total += flush()
    return total


def board_total(decks: int) -> int:
    """Every board's weight added: must be ``C(52 x decks, 5)`` (the parts cover each board once)."""
    return sum(w for part in PARTS for w, *_ in boards(part, decks))


def board_count(decks: int) -> int:
    """Boards enumerated over all parts (for a progress bar)."""
    return sum(1 for part in PARTS for _ in boards(part, decks))


# --- shipped counts ---------------------------------------------------------------------------------
def _shipped_path() -> Path:
    return Path(str(resources.files("firmware.math").joinpath("sheets", SHIPPED)))


def shipped() -> dict[int, TieCount]:
    """The tie counts shipped with the firmware, by number of decks (none if the file is unreadable)."""
    try:
        doc = json.loads(_shipped_path().read_text("utf-8"))
        if doc.get("version") != VERSION:
            return {}
        return {int(d): TieCount(int(d), {p: int(v) for p, v in entry["parts"].items()})
                for d, entry in doc["decks"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def compute(decks: int, progress: Callable[[int], None] | None = None) -> TieCount:
    return TieCount(decks, {part: part_count(part, decks, progress) for part in PARTS})


_computed: dict[int, TieCount] = {}


def is_known(decks: int) -> bool:
    """Whether :func:`tie_count` has ``decks`` at hand (shipped or computed in this process)."""
    return decks in _computed or decks in shipped()


def tie_count(decks: int, progress: Callable[[int], None] | None = None) -> TieCount:
    """The shipped count for ``decks``, else computed once per process (about a minute of CPU)."""
    if decks not in _computed:
        known = shipped().get(decks)
        _computed[decks] = known if known is not None else compute(decks, progress)
    return _computed[decks]


def main(argv: list[str]) -> int:
    """Recompute and store the shipped counts: ``python -m firmware.math.holdem_war_tie [DECKS ...]``
    (default: 8, the game's default shoe)."""
    decks = [int(a) for a in argv] or [8]
    per_deck: dict[str, dict[str, object]] = {}
    doc = {"version": VERSION, "decks": per_deck}
    old = shipped()
    for d, count in sorted(old.items()):
        per_deck[str(d)] = {"parts": {p: str(v) for p, v in count.parts.items()}}
    for d in decks:
        count = compute(d)
        per_deck[str(d)] = {"parts": {p: str(v) for p, v in count.parts.items()},
                            "deals": str(count.deals),
                            "tie_probability": float(count.probability)}
        print(f"holdem-war ties, {d} deck(s): {count.ties}/{count.deals} = {float(count.probability):.10f}")
    path = _shipped_path()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", "utf-8")
    tmp.replace(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
