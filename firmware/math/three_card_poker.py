"""The exact PAR sheet of Three Card Poker (rules/three-card-poker.md; docs/math/three-card-poker.md).

Every figure is an exact count over one 52-card deck, through the game's own strength evaluators
(:mod:`firmware.cards.poker3`, :mod:`firmware.cards.poker5`) and its own pay functions and
settlement (:mod:`firmware.games.three_card_poker`):

* ``ante`` -- ANTE and PLAY together, per unit of ante. For each of the 22,100 player hands the
  dealer's hands from the other 49 cards (18,424 with three dealer cards, 211,876 with four, the
  dealer playing its best three) are counted by group -- dealer not qualified, player higher,
  tie, dealer higher -- by inclusion-exclusion over cumulative histograms of dealer strengths
  (all dealer hands, those holding a given card, a given pair, a given triple), so all
  407,170,400 (or 4,682,459,600) player/dealer pairs are counted without visiting them. The
  PLAY/fold decision is then *derived* hand by hand: play when EV(play) >= EV(fold) = -1 (a tie
  plays). The net of each (hand, group) comes from :meth:`ThreeCardPoker.settle`.
* ``pair_plus`` -- the 22,100 hands through :func:`pair_plus_result`.
* ``six_card`` (with ``six_card = true``) -- every 6-card set of the deck (20,358,520, each the
  cards of 20 equally likely ordered deals of three player cards and the dealer's first three),
  best five through :func:`best5_batch`, pays from :func:`six_card_multiple`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import numpy.typing as npt

from firmware.cards.card import RANK_CHARS
from firmware.cards.poker3 import (
    CATEGORY_SHIFT,
    ThreeCardCategory,
    best3_of,
    best3_of_batch,
    category3,
    describe3,
    eval3_batch,
)
from firmware.cards.poker5 import HandCategory, best5_batch, category, tiebreak_ranks
from firmware.games.pay_table import PayTable
from firmware.games.three_card_poker import (
    FOLD,
    PLAY,
    ThreeCardPoker,
    ThreeCardPokerOptions,
    ante_bonus_multiple,
    pair_plus_result,
    parse_qualifier,
    six_card_multiple,
)
from firmware.math.sheet import OutcomeLine, ParSheet, WagerPar, merge_lines

__all__ = [
    "GROUPS", "HANDS3", "AntePlayTable", "ante_play_par", "ante_play_table", "colex",
    "pair_plus_par", "par_sheet", "six_card_par", "strategy_summary",
]

GAME = "three-card-poker"
#: Three-card hands of one deck.
HANDS3 = comb(52, 3)
#: The dealer groups of a player hand, in the order of :attr:`AntePlayTable.counts`.
GROUPS = ("dealer does not qualify", "hand beats the dealer", "hand ties the dealer", "dealer beats the hand")
NOT_QUALIFIED, WIN, PUSH, LOSE = range(4)
#: Ordered deals of three player cards and three dealer cards per 6-card set.
SPLITS6 = comb(6, 3)

_GAME = ThreeCardPoker()


# --- combinations -------------------------------------------------------------------------------
def colex(k: int, n: int) -> npt.NDArray[np.int64]:
    """Every k-subset of ``range(n)`` as an ``[C(n, k), k]`` array, rows ascending, in colex order:
    the subsets of ``range(m)`` are the first ``C(m, k)`` rows, and a row's index is
    ``sum(C(row[i], i + 1))``."""
    rows = np.arange(n, dtype=np.int64)[:, None]
    for size in range(2, k + 1):
        parts = [np.hstack([rows[: comb(t, size - 1)], np.full((comb(t, size - 1), 1), t, np.int64)])
                 for t in range(size - 1, n)]
        rows = np.vstack(parts) if parts else np.empty((0, size), np.int64)
    return rows


def _pair_id(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Colex index of the pair {a, b}, a < b."""
    index: np.ndarray = b * (b - 1) // 2 + a
    return index


# --- ANTE and PLAY ------------------------------------------------------------------------------
@dataclass(frozen=True)
class AntePlayTable:
    """Per player hand, the dealer's hands by group, the nets of each group and the derived decision."""

    options: ThreeCardPokerOptions
    #: ``[22100, 3]`` the player hands (colex order of card indexes).
    hands: npt.NDArray[np.int64]
    #: ``[22100]`` their strengths (:func:`eval3_batch`).
    strengths: npt.NDArray[np.int64]
    #: ``[22100, 4]`` dealer hands from the other 49 cards per group of :data:`GROUPS`.
    counts: npt.NDArray[np.int64]
    #: Dealer hands from 49 cards: 18,424 (three dealer cards) or 211,876 (four).
    dealer_hands: int
    #: ``[22100, 4]`` net of ANTE + PLAY per unit ante when the hand plays, per group (settle()).
    play_nets: npt.NDArray[np.int64]
    #: Net of a fold per unit ante (settle(): -1).
    fold_net: int
    #: ``[22100]`` ``dealer_hands * EV(play)``, exact integers.
    ev_play: npt.NDArray[np.int64]
    #: ``[22100]`` True where the derived strategy plays (EV(play) >= EV(fold); a tie plays).
    play: npt.NDArray[np.bool_]

    def ev(self, hand: int) -> tuple[Fraction, Fraction]:
        """(EV(play), EV(fold)) of player hand number ``hand``, per unit ante."""
        return Fraction(int(self.ev_play[hand]), self.dealer_hands), Fraction(self.fold_net)

    def outcome(self, player: list[int], dealer: list[int]) -> tuple[str, int, int]:
        """(outcome line name, net per unit ante, stake) of one deal under the derived strategy:
        the table's classification of a single player/dealer pair (for cross-checks)."""
        i = self.index(player)
        if not self.play[i]:
            return "fold", self.fold_net, 1
        s = int(self.strengths[i])
        dealer_s = best3_of(dealer)
        if dealer_s < parse_qualifier(self.options.dealer_qualifies)[1]:
            group = NOT_QUALIFIED
        else:
            group = WIN if s > dealer_s else PUSH if s == dealer_s else LOSE
        return _line_name(self.options, s, group), int(self.play_nets[i, group]), 2

    def index(self, cards: tuple[int, ...] | list[int]) -> int:
        """The row of a player hand given as three card indexes (any order)."""
        a, b, c = sorted(int(x) for x in cards)
        return comb(c, 3) + comb(b, 2) + a


def _settled_net(options: ThreeCardPokerOptions, strength: int, group: int | None) -> int:
    """Net (ANTE + PLAY) of a 1-credit ante on a hand of ``strength`` through the game's own
    ``settle``: ``group`` None is a fold; otherwise the dealer is placed in that group. With
    ``banking = player`` the commission and the banker's entry are left out (extras)."""
    state = _GAME.new_round(options, {1: {"ante": 1}})
    state.seats[0].strength = strength
    _GAME.decide(state, 1, FOLD if group is None else PLAY)
    state.qualified = group not in (None, NOT_QUALIFIED)
    by_group: dict[int | None, int] = {WIN: strength - 1, PUSH: strength, LOSE: strength + 1}
    state.dealer_strength = by_group.get(group, 0)
    results = _GAME.settle(state).results[1]           # seat 1 only: not a banker's or a fee
    return sum(results[w].net for w in ("ante", "play") if w in results)


def _cumulative(index: np.ndarray, strength_index: np.ndarray, rows: int, k: int) -> np.ndarray:
    """``[rows, k + 1]``: entry ``[i, t]`` counts the items of row ``i`` with strength index < t."""
    hist = np.bincount(index * k + strength_index, minlength=rows * k).reshape(rows, k)
    out = np.zeros((rows, k + 1), dtype=np.int64)
    np.cumsum(hist, axis=1, out=out[:, 1:])
    return out


def ante_play_table(options: ThreeCardPokerOptions) -> AntePlayTable:
    """Count every player/dealer pair by group and derive the PLAY/fold decision (module docstring)."""
    hands = colex(3, 52)
    strengths = eval3_batch(hands).astype(np.int64)
    levels = np.unique(strengths)                     # every three-card strength, ascending
    k = len(levels)
    player = np.searchsorted(levels, strengths)
    d = options.dealer_cards
    if d == 3:
        dealer, dealer_idx = hands, player
    else:
        dealer = colex(4, 52)
        dealer_idx = np.searchsorted(levels, best3_of_batch(dealer).astype(np.int64))
    dealer_hands = comb(49, d)
    n = len(dealer)

    # Cumulative histograms: all dealer hands, those holding a card, those holding a pair.
    total = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(dealer_idx, minlength=k), out=total[1:])
    cols = range(d)
    card_cum = _cumulative(dealer.T.ravel(), np.tile(dealer_idx, d), 52, k)
    pairs = [(i, j) for i in cols for j in cols if i < j]
    pid = np.concatenate([_pair_id(dealer[:, i], dealer[:, j]) for i, j in pairs])
    pair_cum = _cumulative(pid, np.tile(dealer_idx, len(pairs)), comb(52, 2), k)
    del pid

    p_cards = [hands[:, i] for i in range(3)]
    p_pairs = [_pair_id(hands[:, i], hands[:, j]) for i, j in ((0, 1), (0, 2), (1, 2))]
    if d == 3:
        triple_idx = player[:, None]                  # the one dealer hand holding all three
    else:                                             # the 49 dealer hands holding all three
        free = np.ones((len(hands), 52), dtype=bool)
        free[np.arange(len(hands))[:, None], hands] = False
        others = np.nonzero(free)[1]
        four = np.concatenate([np.repeat(hands, 49, axis=0), others.reshape(-1, 1)], axis=1)
        triple_idx = np.searchsorted(levels, best3_of_batch(four).astype(np.int64)).reshape(-1, 49)
        del four, others

    def below(t: np.ndarray) -> np.ndarray:
        """Per player hand: dealer hands disjoint from it with strength index < t."""
        out = total[t].copy()
        for c in p_cards:
            out -= card_cum[c, t]
        for p in p_pairs:
            out += pair_cum[p, t]
        out -= (triple_idx < t[:, None]).sum(axis=1)
        counts: np.ndarray = out
        return counts

    qualify = parse_qualifier(options.dealer_qualifies)[1]
    q = np.full_like(player, int(np.searchsorted(levels, qualify)))
    qualifies = player >= q                           # the player's own strength would qualify
    nq = below(q)
    lt = below(player)
    le = below(player + 1)
    counts = np.empty((len(hands), 4), dtype=np.int64)
    counts[:, NOT_QUALIFIED] = nq
    counts[:, WIN] = np.where(qualifies, lt - nq, 0)
    counts[:, PUSH] = np.where(qualifies, le - lt, 0)
    counts[:, LOSE] = dealer_hands - below(np.maximum(player + 1, q))
    if not (counts.sum(axis=1) == dealer_hands).all() or (counts < 0).any():  # pragma: no cover
        raise AssertionError("inclusion-exclusion lost a dealer hand")
    assert n == comb(52, d)

    # Nets per group from settle(), memoised by the ante bonus (the only part that varies by hand).
    memo: dict[tuple[int, int], int] = {}
    level_nets = np.empty((k, 4), dtype=np.int64)
    for u, s in enumerate(levels.tolist()):
        bonus = ante_bonus_multiple(options, s)
        for g in range(4):
            if (bonus, g) not in memo:
                memo[(bonus, g)] = _settled_net(options, s, g)
            level_nets[u, g] = memo[(bonus, g)]
    play_nets = level_nets[player]
    fold_net = _settled_net(options, int(levels[0]), None)
    ev_play = (counts * play_nets).sum(axis=1)
    play = ev_play >= fold_net * dealer_hands
    return AntePlayTable(options, hands, strengths, counts, dealer_hands, play_nets, fold_net,
                         ev_play, play)


def _category_name(cat: ThreeCardCategory | HandCategory) -> str:
    return cat.name.lower().replace("_", " ")


def _line_name(options: ThreeCardPokerOptions, strength: int, group: int) -> str:
    """``hand beats the dealer``, ``dealer beats the hand + straight bonus 1:1``, ...: the group,
    and the ante bonus where one is paid (the bonus is by category)."""
    bonus = ante_bonus_multiple(options, strength)
    if not bonus:
        return GROUPS[group]
    return f"{GROUPS[group]} + {_category_name(category3(strength))} bonus {bonus}:1"


def _hand_name(strength: int) -> str:
    """``Q-6-4`` for a high-card hand, else the player-facing name (``Pair of Twos``)."""
    if category3(strength) is ThreeCardCategory.HIGH_CARD:
        return "-".join(RANK_CHARS[(strength >> shift & 0xF) - 2] for shift in (8, 4, 0))
    return describe3(strength)


def strategy_summary(table: AntePlayTable) -> dict[str, Any]:
    """The derived PLAY/fold strategy: the weakest hand played, counts, and whether it is a plain
    threshold (every hand at or above the weakest played hand plays, every hand below folds)."""
    s, play = table.strengths, table.play
    played, folded = s[play], s[~play]
    weakest = int(played.min()) if played.size else None
    strongest_fold = int(folded.max()) if folded.size else None
    mixed = sorted({int(x) for x in played} & {int(x) for x in folded})
    threshold = weakest is not None and (strongest_fold is None or strongest_fold < weakest)
    ties = int((table.ev_play == table.fold_net * table.dealer_hands).sum())
    doc: dict[str, Any] = {
        "play_at_or_above": _hand_name(weakest) if weakest is not None else None,
        "strongest_hand_folded": _hand_name(strongest_fold) if strongest_fold is not None else None,
        "threshold": threshold,
        "hands_played": int(play.sum()),
        "hands_folded": int((~play).sum()),
        "tie_rule": "play when EV(play) >= EV(fold) = -1 (an exact tie plays)",
        "ties": ties,
    }
    if mixed:
        doc["played_or_folded_by_suits"] = [_hand_name(x) for x in mixed]
    if weakest is not None:
        i = int(np.flatnonzero(play & (s == weakest))[0])
        doc["ev_play_weakest_played"] = table.ev(i)[0]
    if strongest_fold is not None:
        i = int(np.flatnonzero(~play & (s == strongest_fold))[-1])
        doc["ev_play_strongest_folded"] = table.ev(i)[0]
    return doc


def ante_play_par(table: AntePlayTable) -> WagerPar:
    """The ``ante`` wager (ANTE + PLAY per unit ante) from a counted table."""
    opts = table.options
    total = HANDS3 * table.dealer_hands
    lines: list[OutcomeLine] = []
    folded = int((~table.play).sum())
    if folded:
        lines.append(OutcomeLine("fold", Fraction(folded * table.dealer_hands, total),
                                 table.fold_net, folded * table.dealer_hands, 1))
    play = table.play
    cats = table.strengths >> CATEGORY_SHIFT
    for cat in np.unique(cats[play]).tolist():
        rows = play & (cats == cat)
        strength = int(table.strengths[rows][0])
        for g in range(len(GROUPS)):
            for net in np.unique(table.play_nets[rows, g]).tolist():
                sel = rows & (table.play_nets[:, g] == net)
                count = int(table.counts[sel, g].sum())
                if count:
                    lines.append(OutcomeLine(_line_name(opts, strength, g), Fraction(count, total),
                                             net, count, 2))
    strategy = strategy_summary(table)
    qualifier = opts.dealer_qualifies
    notes = [
        f"per unit ante; ANTE and PLAY together (stake 2 where PLAY is placed); "
        f"{HANDS3:,} player hands x {table.dealer_hands:,} dealer hands = {total:,} deals",
        f"optimal strategy derived hand by hand: play {strategy['play_at_or_above']} or better "
        f"({strategy['hands_played']:,} hands played, {strategy['hands_folded']:,} folded); "
        "a tie EV(play) = EV(fold) plays",
        f"dealer_cards = {opts.dealer_cards}"
        + (" (dealer's best three of four)" if opts.dealer_cards == 4 else "")
        + f", dealer qualifies with {qualifier}, not qualified: {opts.not_qualified}, "
        f"ante bonus {_pays(opts.ante_bonus_pays)}",
    ]
    if not strategy["threshold"]:
        notes.append("the derived strategy is not a plain threshold: see extras['strategy']")
    return WagerPar("ante", merge_lines(lines), "exact", notes=notes)


def _pays(table: PayTable) -> str:
    return "/".join(str(v) for v in table.model_dump().values())


# --- PAIR PLUS ------------------------------------------------------------------------------------
def pair_plus_par(options: ThreeCardPokerOptions) -> WagerPar:
    """PAIR PLUS: every one of the 22,100 hands through :func:`pair_plus_result`."""
    strengths = eval3_batch(colex(3, 52))
    levels, per_level = np.unique(strengths, return_counts=True)
    counts: dict[tuple[str, int], int] = {}
    for s, n in zip(levels.tolist(), per_level.tolist(), strict=True):
        net = pair_plus_result(options, s, 1).net
        name = _category_name(category3(s)) if net > 0 else "lose"
        counts[(name, net)] = counts.get((name, net), 0) + n
    lines = [OutcomeLine(name, Fraction(n, HANDS3), net, n) for (name, net), n in counts.items()]
    notes = [f"pay table {_pays(options.pair_plus_pays)} (N:1), the player's three cards alone; "
             f"counts out of {HANDS3:,} hands"]
    return WagerPar("pair_plus", merge_lines(lines), "exact", notes=notes)


def hand_counts() -> dict[str, int]:
    """The 22,100 three-card hands by category, best first."""
    cats = eval3_batch(colex(3, 52)) >> CATEGORY_SHIFT
    return {_category_name(c): int((cats == c).sum()) for c in sorted(ThreeCardCategory, reverse=True)}


# --- SIX CARD -------------------------------------------------------------------------------------
def six_card_strengths() -> tuple[np.ndarray, np.ndarray]:
    """(distinct best-five strengths, number of 6-card sets of each) over all C(52, 6) sets."""
    five = colex(5, 51)
    acc: dict[int, int] = {}
    for top in range(5, 52):
        rows = comb(top, 5)
        six = np.empty((rows, 6), dtype=np.int64)
        six[:, :5] = five[:rows]
        six[:, 5] = top
        levels, n = np.unique(best5_batch(six), return_counts=True)
        for s, c in zip(levels.tolist(), n.tolist(), strict=True):
            acc[s] = acc.get(s, 0) + c
    keys = np.array(sorted(acc), dtype=np.int64)
    return keys, np.array([acc[s] for s in keys.tolist()], dtype=np.int64)


def six_card_par(options: ThreeCardPokerOptions) -> WagerPar:
    """SIX CARD: the best five of the player's three and the dealer's first three cards."""
    levels, sets = six_card_strengths()
    total = comb(52, 3) * comb(49, 3)
    counts: dict[tuple[str, int], int] = {}
    for s, n in zip(levels.tolist(), sets.tolist(), strict=True):
        multiple = six_card_multiple(options, s)
        net = multiple if multiple else -1
        if net > 0:
            cat = category(s)
            royal = cat is HandCategory.STRAIGHT_FLUSH and tiebreak_ranks(s)[0] == 14
            name = "royal flush" if royal else _category_name(cat)
        else:
            name = "lose"
        counts[(name, net)] = counts.get((name, net), 0) + n * SPLITS6
    lines = [OutcomeLine(name, Fraction(n, total), net, n) for (name, net), n in counts.items()]
    notes = [f"pay table {_pays(options.six_card_pays)} (N:1); best five of the player's three "
             f"and the dealer's first three cards; counts are ordered deals out of {total:,} "
             f"({comb(52, 6):,} six-card sets x {SPLITS6}); independent of dealer_cards and of "
             "the PLAY decision"]
    return WagerPar("six_card", merge_lines(lines), "exact", notes=notes)


# --- the sheet ----------------------------------------------------------------------------------
def par_sheet(options: ThreeCardPokerOptions, *, unit: int = 10) -> ParSheet:
    """The exact PAR sheet of Three Card Poker under ``options`` (``unit``: the wager size the
    percentage commission of ``banking = player`` is computed on)."""
    if unit < 1:
        raise ValueError(f"unit: a wager is at least 1 credit, not {unit}")
    start = time.perf_counter()
    table = ante_play_table(options)
    wagers = {"ante": ante_play_par(table), "pair_plus": pair_plus_par(options)}
    if options.six_card:
        wagers["six_card"] = six_card_par(options)
    extras: dict[str, Any] = {"strategy": strategy_summary(table), "hand_counts": hand_counts()}
    if options.banking == "player":
        fee = options.commission.fee(unit)
        extras["commission"] = {
            "mode": options.commission.mode,
            "amount": str(options.commission.amount),
            "unit": unit,
            "fee": fee,
            "fee_per_unit": Fraction(fee, unit),
        }
        for wager in wagers.values():
            wager.notes.append(
                f"banking = player: the banker seat (seat {options.banker_seat}) is the "
                "counterparty; the wager's figures are unchanged; the house's only result is the "
                f"commission ({fee} credits per seat and round at {unit} credits, "
                "extras['commission'])")
    sheet = ParSheet(GAME, options.to_json(), wagers, seats=1, unit=unit, extras=extras)
    sheet.elapsed = time.perf_counter() - start
    return sheet
