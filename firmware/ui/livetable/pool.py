"""The war pool among the players at a live table, as seed 000 FIGS. 9-14 show it.

The participants (the seats with a WAR POOL ante, and the dealer) are grouped in *tiers* by their
initial two-card score; a tier of two or more hands is tied. The record says who contested the pot
(the highest tied tier, or the single highest hand when no score is shared: rules step 6 A/B), each
step's eliminations, the winner, the commission and what was paid; this module only lays that out
(tiers best first, each with what became of it, and the contest's war scores step by step). The
outcomes are the record's, never recomputed here; the war scores shown are the game's own
(:func:`firmware.ui.games.war.war_scores`). Before the round is settled the panel shows the pot
gathered so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from firmware.ui.games.war import war_scores
from firmware.ui.messages import text
from firmware.ui.money import Money

DEALER = "dealer"
#: The most contest steps the panel lists (the last ones; a long contest scrolls off the top).
MAX_STEPS = 5


@dataclass(frozen=True, slots=True)
class TierView:
    score: str                      #: "Score 8"
    hands: str                      #: "SEAT 2, SEAT 3, SEAT 5"
    tied: bool
    contests: bool                  #: this tier contested the pot
    note: str                       #: CONTESTS THE POT / OUT


@dataclass(frozen=True, slots=True)
class PoolCell:
    score: str                      #: the hand's war score after this step ("WAR 7"); "" once out
    out: bool = False               #: eliminated at this step
    winner: bool = False            #: the last one standing, at the last step


@dataclass(frozen=True, slots=True)
class PoolStep:
    label: str                      #: "Card 2"
    cells: tuple[PoolCell, ...]     #: one per contestant (the columns)


@dataclass(frozen=True, slots=True)
class PoolView:
    title: str
    summary: tuple[str, ...]        #: the pot, the winner, the commission
    tiers: tuple[TierView, ...] = ()
    columns: tuple[str, ...] = ()   #: the contestants' names
    steps: tuple[PoolStep, ...] = ()
    winner_column: int | None = None


def hand_name(who: Any) -> str:
    return text("tbl.dealer_label") if who == DEALER else text("tbl.seat", n=int(who))


def _key(who: Any) -> Any:
    return DEALER if who == DEALER else int(who)


def pool_view(snapshot: Mapping[str, Any], record: Mapping[str, Any] | None, money: Money) -> PoolView | None:
    """The pool's panel, or None when the table plays no pool (no WAR POOL ante and none in the
    record)."""
    title = text("tbl.pool.title")
    pool = (record or {}).get("war_pool") or {}
    if record is not None and (pool.get("contestants") or pool.get("pot")):
        return _contest(record, pool, money, title)
    antes = [int((s.get("bet") or {}).get("war_pool", 0)) for s in snapshot.get("seats", ())]
    if not any(antes):
        return None
    return PoolView(title, (text("tbl.pool.pot", amount=money.credits(sum(antes))),
                            text("tbl.pool.participants", n=sum(1 for a in antes if a))))


def tiers_of(record: Mapping[str, Any], contestants: list[Any]) -> tuple[TierView, ...]:
    """The participants by initial score, best first, and what became of each tier."""
    by_score: dict[int, list[Any]] = {}
    for seat in record.get("seats", ()):
        if int((seat.get("wagers") or {}).get("war_pool", 0)):
            by_score.setdefault(int(seat["score"]), []).append(int(seat["seat"]))
    by_score.setdefault(int(record["dealer"]["score"]), []).append(DEALER)
    out = []
    for score in sorted(by_score, reverse=True):
        hands = by_score[score]
        contests = any(h in contestants for h in hands)
        out.append(TierView(text("tbl.pool.tier", score=score), ", ".join(hand_name(h) for h in hands),
                            len(hands) > 1, contests, text("tbl.pool.contests") if contests else text("tbl.pool.out")))
    return tuple(out)


def _contest(record: Mapping[str, Any], pool: Mapping[str, Any], money: Money, title: str) -> PoolView:
    contestants = [_key(k) for k in pool.get("contestants", ())]
    winner = pool.get("winner")
    summary = [text("tbl.pool.pot", amount=money.credits(int(pool.get("pot", 0))))]
    if pool.get("misdeal"):
        summary.append(text("tbl.pool.misdeal"))
    elif winner is not None and _key(winner) == DEALER:
        summary.append(text("tbl.pool.dealer_won"))
    elif winner is not None:
        summary.append(text("tbl.pool.won", who=hand_name(winner), amount=money.credits(int(pool.get("paid", 0)))))
        summary.append(text("tbl.pool.commission", amount=money.credits(int(pool.get("commission", 0)))))
    if len(contestants) == 1:
        summary.append(text("tbl.pool.outright"))
    docs: dict[Any, Mapping[str, Any]] = {int(s["seat"]): s for s in record.get("seats", ())}
    docs[DEALER] = record["dealer"]
    out_at = {_key(e["hand"]): int(e["step"]) for e in pool.get("eliminated", ())}
    scores = {k: war_scores(record, docs[k]) for k in contestants if k in docs}
    steps = []
    total = int(pool.get("steps", 0))
    for step in range(1, total + 1):
        cells = []
        for k in contestants:
            gone = out_at.get(k)
            if gone is not None and gone < step:
                cells.append(PoolCell(""))
                continue
            shown = scores.get(k, ())
            cells.append(PoolCell(shown[step - 1] if step <= len(shown) else "", out=gone == step,
                                  winner=step == total and winner is not None and _key(winner) == k))
        steps.append(PoolStep(text("tbl.pool.card", step=step), tuple(cells)))
    column = contestants.index(_key(winner)) if winner is not None and _key(winner) in contestants else None
    return PoolView(title, tuple(summary), tiers_of(record, contestants), tuple(hand_name(k) for k in contestants),
                    tuple(steps[-MAX_STEPS:]), column)
