"""The player banker at a live table (Double Super 9 with ``banking = player``; rules/double-super-9.md,
"Table and roles"; seed 003 [0042]-[0043]): the rules both sides of the table apply, the controller
(``firmware.table``: the rotation, the coverage before the deal) and the station
(``firmware.cabinet.table_rounds``: its bet and cover).

The controller names the round's banker when the window opens: the next turn of the rotation
(:func:`firmware.games.double_super_9.next_banker`: each spot banks twice, 1st then 2nd banker,
starting at spot #1; only a spot that wagered on the previous hand may bank), among the stations
seated and online. The snapshot shows it (``banker_seat``).

The banker's station bets with ``cover`` = the credits it holds to bank (held on the station like a
stake) and its other wagers (the club's ``collection``, if any); the round's ``bank`` wager is that
cover. A player's station bets ``bet`` (and ``collection``) with cover 0. Before the deal the
controller checks the cover against what the banker may owe (the total of the other seats' ``bet``
wagers); a banker that cannot cover it, or did not bet, is **passed over**: the round is not dealt,
every wager comes back (the round's record says why) and the next round's banker is the next spot
clockwise.

A game without a player banker has no banker here: :func:`player_banking` is False and nothing
changes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from firmware.games.double_super_9 import BANK, BET, BankerTurn, next_banker
from firmware.games.errors import WagerError
from firmware.games.options import GameOptions


def player_banking(options: GameOptions) -> bool:
    """True when the game's options make a player bank the round (Double Super 9's ``banking``)."""
    return getattr(options, "banking", None) == "player"


def turn_to_json(turn: BankerTurn | None) -> dict[str, int] | None:
    return None if turn is None else {"spot": turn.spot, "term": turn.term}


def turn_from_json(doc: Mapping[str, Any] | None) -> BankerTurn | None:
    return None if not doc else BankerTurn(int(doc["spot"]), int(doc["term"]))


@dataclass
class BankerRotation:
    """Who banks: the turn of the round now and the seats that wagered on the previous hand."""

    turn: BankerTurn | None = None          #: the banker of the current window (None: no one may)
    wagered: frozenset[int] = frozenset()   #: the seats that bet in the last round dealt
    dealt: bool = False                     #: the current window's round was played (or passed over)

    def played(self, seats: Iterable[int]) -> None:
        """The window's round is being dealt with bets from ``seats``."""
        self.wagered, self.dealt = frozenset(seats), True

    def next(self, present: Collection[int], passed: int | None = None) -> BankerTurn | None:
        """The banker of the next window among the seats ``present`` (online). ``passed``: the last
        banker was passed over (it could not cover), so the role moves on clockwise; a window in
        which no hand was played keeps its banker."""
        previous, dealt = self.turn, self.dealt
        self.dealt = False
        if passed is None and not dealt and previous is not None and previous.spot in present:
            return previous                            # a window with no hand played: the turn stands
        if passed is not None:
            previous = BankerTurn(passed, 2)           # its turn is over: on to the next spot
        # Only a spot that wagered on the previous hand may bank; when none of them is here (or the
        # table opens), the table starts again with the spots present.
        self.turn = next_banker(previous, self.wagered, present) or next_banker(previous, present, present)
        return self.turn


def seat_wagers(wagers: Mapping[str, int], cover: int, banker_seat: int | None, seat: int) -> dict[str, int]:
    """A bet's wagers as the round kernel takes them: the banker's cover is its ``bank``."""
    out = dict(wagers)
    if seat == banker_seat and cover:
        out[BANK] = cover
    return out


def check_bet_role(seat: int, banker_seat: int | None, wagers: Mapping[str, int], cover: int) -> None:
    """The bet fits the seat's role this round; WagerError saying why not."""
    if banker_seat is None:
        raise WagerError("no spot may bank this round: a player-banked round cannot be played")
    if BANK in wagers:
        raise WagerError("the bank is stated as the bet's cover, not as a wager")
    if seat == banker_seat:
        if cover <= 0:
            raise WagerError(f"seat {seat} banks this round: its bet states the bank it covers (cover)")
        if BET in wagers:
            raise WagerError(f"seat {seat} banks this round and cannot also place bet")
    elif cover:
        raise WagerError(f"seat {seat} does not bank this round (seat {banker_seat} does): no cover")


def counterpart(seat: int, banker_seat: int, max_seats: int, options: GameOptions, min_bet: int) -> dict[int, dict[str, int]]:
    """A stand-in for the rest of the table, so that one seat's bet can be checked by the game's own
    rules (which judge a whole player-banked table): the banker when ``seat`` plays, else a player."""
    fee = int(getattr(options, "collection", 0))
    extra = {"collection": fee} if fee else {}
    if seat != banker_seat:
        return {banker_seat: {BANK: min_bet, **extra}}
    other = next(s for s in range(1, max_seats + 1) if s != seat)
    return {other: {BET: min_bet, **extra}}


def role_wagers(options: GameOptions, banker: bool, unit: int) -> dict[str, int]:
    """The automatic wagers of one seat at a player-banked table: a player's ``bet`` (and the club's
    collection); the banker's collection alone (its bank is its cover)."""
    fee = int(getattr(options, "collection", 0))
    out = {} if banker else {BET: unit}
    if fee:
        out["collection"] = fee
    return out


def coverage_shortfall(wagers: Mapping[int, Mapping[str, int]], banker_seat: int | None) -> str | None:
    """Why the round's banker cannot bank it (None: it covers what it may owe)."""
    if banker_seat is None:
        return "no spot may bank: the round is not dealt"
    if banker_seat not in wagers:
        return f"the banker, seat {banker_seat}, placed no bank: passed over"
    owed = sum(w.get(BET, 0) for s, w in wagers.items() if s != banker_seat)
    if owed == 0:
        return f"no player bet against the banker, seat {banker_seat}: the round is not dealt"
    cover = wagers[banker_seat].get(BANK, 0)
    if cover < owed:
        return f"the banker, seat {banker_seat}, covers {cover} of the {owed} credits it may owe: passed over"
    return None
