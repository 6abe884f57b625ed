"""``egm simulate``: many rounds through exactly the terminal's kernel and game code, no I/O.

The automatic play is documented per game (``Game.automatic_wagers`` and
``Game.automatic_decision``): by default every wager the configuration offers, ``unit`` credits
each, on seats 1..``seats``. Cards come from a seeded DRBG shoe (``--seed``) or the production one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from firmware.cards.source import RngShoe
from firmware.games.base import Game, OptionsT, Outcome, StateT
from firmware.kernel.limits import NO_LIMITS
from firmware.kernel.round import RoundKernel
from firmware.rng.interface import RandomSource

Z95 = 1.959963984540054
VOID = Outcome.VOID


@dataclass(slots=True)
class WagerStats:
    """Per-round sums of one wager across all seats, for the return and its confidence interval."""

    rounds: int = 0
    wagered: int = 0
    net: int = 0
    net_sq: int = 0           #: sum over rounds of (that round's net)^2, exact integers

    def add(self, wagered: int, net: int) -> None:
        self.rounds += 1
        self.wagered += wagered
        self.net += net
        self.net_sq += net * net

    def summary(self) -> dict[str, Any]:
        rtp = (self.wagered + self.net) / self.wagered if self.wagered else None
        ci = None
        if self.rounds > 1 and rtp is not None:
            n = self.rounds
            mean = self.net / n
            var = max(self.net_sq / n - mean * mean, 0.0) * n / (n - 1)
            per_round_stake = self.wagered / n
            half = Z95 * math.sqrt(var / n) / per_round_stake
            ci = [rtp - half, rtp + half]
        return {"wagered": self.wagered, "net": self.net, "rtp": rtp, "ci95": ci}


@dataclass(slots=True)
class SimulationResult:
    game: str
    options: dict[str, Any]
    rounds: int
    seats: int
    unit: int
    seed: str | None
    wagers: dict[str, WagerStats] = field(default_factory=dict)
    elapsed: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "options": self.options,
            "rounds": self.rounds,
            "seats": self.seats,
            "unit": self.unit,
            "seed": self.seed,
            "wagers": {name: s.summary() for name, s in self.wagers.items() if s.wagered},
            "rounds_per_second": self.rounds / self.elapsed if self.elapsed > 0 else None,
        }


def simulate(
    game: Game[OptionsT, StateT],
    options: OptionsT,
    rounds: int,
    *,
    rng: RandomSource,
    seed: str | None = None,
    seats: int = 1,
    unit: int = 10,
    wagers: dict[int, dict[str, int]] | None = None,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 10_000,
    source: RngShoe | None = None,
) -> SimulationResult:
    """Play ``rounds`` rounds with the automatic strategy and accumulate each wager's return.

    ``wagers`` replaces the automatic wagers (seats and units) when given. ``source`` continues an
    earlier run's shoe (made on the same ``rng``), so runs in batches deal exactly the cards of one
    long run; by default a fresh shoe is made.
    """
    kernel = RoundKernel(game, options, limits=NO_LIMITS)
    if source is None:
        source = RngShoe(rng, game.shoe(options))
    if wagers is None:
        wagers = game.automatic_wagers(options, seats, unit)
    else:
        seats = len(wagers)
    names = list(game.wager_names)   # PLAY-like wagers appear only through decisions
    stats = {n: WagerStats() for n in names}
    result = SimulationResult(game.id, options.to_json(), rounds, seats, unit, seed, stats)
    play = kernel.play
    roll = game.roll_dice if game.dice else None   # dice games roll from the same RNG, every round
    start = time.perf_counter()
    for i in range(rounds):
        settlement = play(wagers, source, dice=roll(rng) if roll else None)
        per_net = dict.fromkeys(names, 0)
        per_stake = dict.fromkeys(names, 0)
        stakes = settlement.stakes
        for seat, res in settlement.results.items():
            bets = stakes.get(seat, {})
            for name, r in res.items():
                per_net[name] += r.net
                if r.outcome is not VOID:        # a voided wager went back: it was no action
                    per_stake[name] += bets.get(name, 0)
        for name in names:
            stats[name].add(per_stake[name], per_net[name])
        if progress is not None and (i + 1) % progress_every == 0:
            progress(progress_every)
    result.elapsed = time.perf_counter() - start
    if progress is not None and rounds % progress_every:
        progress(rounds % progress_every)
    return result
