"""Wager validation that every game shares: table limits, credits, seat numbers, integer amounts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from firmware.games.base import Game, OptionsT, StateT
from firmware.games.errors import WagerError

if TYPE_CHECKING:
    from firmware.config.schema import LimitsSection


@dataclass(frozen=True, slots=True)
class BetLimits:
    min_bet: int = 1
    max_bet: int = 500
    max_total_bet: int = 5000

    @classmethod
    def from_config(cls, limits: LimitsSection) -> BetLimits:
        return cls(limits.min_bet, limits.max_bet, limits.max_total_bet)


#: For replaying a record (its wagers were validated against the limits in force then) and for PAR work.
NO_LIMITS = BetLimits(1, 1 << 62, 1 << 62)


def validate_wagers(
    game: Game[OptionsT, StateT],
    options: OptionsT,
    wagers: Mapping[int, Mapping[str, int]],
    limits: BetLimits,
    credits: int | None = None,
) -> dict[int, dict[str, int]]:
    """Check every wager before any card is dealt; return a clean copy (seats ascending).

    Raises :class:`WagerError` with one clear sentence for the first problem found.
    """
    if not wagers:
        raise WagerError("no wager placed")
    clean: dict[int, dict[str, int]] = {}
    total = 0             # what the round maximum governs
    stake_total = 0       # everything the credits must cover
    for seat in sorted(wagers):
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= game.max_seats:
            raise WagerError(f"seat {seat!r} does not exist; seats are 1 to {game.max_seats}")
        bets = {}
        for name, amount in wagers[seat].items():
            if name not in game.wager_names:
                raise WagerError(
                    f"seat {seat}: unknown wager {name!r}; {game.id} wagers are {', '.join(game.wager_names)}"
                )
            if not isinstance(amount, int) or isinstance(amount, bool):
                raise WagerError(f"seat {seat}: {name} must be a whole number of credits, not {amount!r}")
            if amount < 0:
                raise WagerError(f"seat {seat}: {name} cannot be negative ({amount})")
            if amount == 0:
                continue
            bets[name] = amount
            stake_total += amount
            if name in game.fee_wagers:
                continue                      # fixed by the options, not a bet the limits govern
            if amount < limits.min_bet:
                raise WagerError(f"seat {seat}: {name} {amount} is below the table minimum {limits.min_bet}")
            if name in game.uncapped_wagers:
                continue
            if amount > limits.max_bet:
                raise WagerError(f"seat {seat}: {name} {amount} is above the table maximum {limits.max_bet}")
            total += amount
        if bets:
            clean[seat] = bets
    if not clean:
        raise WagerError("no wager placed")
    game.validate_wagers(options, clean)
    # What decisions and fees may still stake (PLAY, a commission) counts now: the round must be
    # able to complete whatever the player answers.
    later = game.reserved_stake(options, clean)
    also = f" with the {later} its decisions and fees may add" if later else ""
    if total + later > limits.max_total_bet:
        raise WagerError(f"total stake {total + later}{also} is above the round maximum "
                         f"{limits.max_total_bet}")
    if credits is not None and stake_total + later > credits:
        raise WagerError(f"total stake {stake_total + later}{also} is more than the {credits} "
                         "credits available")
    return clean


def stake(wagers: Mapping[int, Mapping[str, int]]) -> int:
    return sum(sum(b.values()) for b in wagers.values())
