"""Monte Carlo PAR figures through the real round kernel and game code, on every core.

Where a wager cannot be enumerated (the war pool among several seats, Split 21 Stud, Hold'em War)
its PAR comes from rounds played exactly as the terminal plays them: :class:`RoundKernel` with the
game's documented automatic wagers and strategy, cards from a DRBG shoe. Nothing is re-implemented
for speed, so the figures certify the code that runs on the floor (ARCHITECTURE: "Monte Carlo
through the real game code").

The rounds are split into chunks, one DRBG per chunk seeded ``"{seed}:{chunk}"`` (or the production
RNG), played in a process pool sized to the machine's cores. Each chunk returns, per wager, the
counts of its (outcome, net per unit stake) results and per-round sums; the parent adds them up.
The results do not depend on the number of processes: chunking is fixed by ``chunk_rounds``.

The standard error of a wager's return is taken from per-round sums (a round's seats share cards,
so seat results within a round are not independent).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TypeVar

from firmware.games.base import Outcome, Settlement
from firmware.games.options import GameOptions
from firmware.math.sheet import OutcomeLine, WagerPar

DEFAULT_CHUNK = 20_000
_Job = TypeVar("_Job")
_Result = TypeVar("_Result")


@dataclass(slots=True)
class WagerTally:
    """One wager's Monte Carlo sums."""

    #: (outcome, net credits, initial stake, credits staked in all) -> occurrences, one per seat
    #: that placed the wager (integers while counting; ratios are taken once, at the end).
    results: Counter[tuple[str, int, int, int]] = field(default_factory=Counter)
    rounds: int = 0          #: rounds in which the wager was placed
    staked: int = 0          #: credits staked (initial stakes)
    net: int = 0             #: credits won (negative: lost)
    net_sq: int = 0          #: sum over rounds of (round net)^2
    staked_sq: int = 0       #: sum over rounds of (round stake)^2
    net_staked: int = 0      #: sum over rounds of round net * round stake

    def merge(self, other: WagerTally) -> None:
        self.results.update(other.results)
        self.rounds += other.rounds
        self.staked += other.staked
        self.net += other.net
        self.net_sq += other.net_sq
        self.staked_sq += other.staked_sq
        self.net_staked += other.net_staked

    def standard_error(self) -> float | None:
        """Standard error of the return net/staked (ratio estimator over rounds)."""
        n = self.rounds
        if n < 2 or not self.staked:
            return None
        ratio = self.net / self.staked
        # Variance of (round net - ratio * round stake), the linearised ratio estimator.
        s = self.net_sq - 2 * ratio * self.net_staked + ratio * ratio * self.staked_sq
        var = max(s / (n - 1), 0.0)
        mean_stake = self.staked / n
        return math.sqrt(var / n) / mean_stake


@dataclass(slots=True)
class MonteCarloResult:
    rounds: int
    wagers: dict[str, WagerTally]
    elapsed: float = 0.0
    processes: int = 1


class AutomaticPlay:
    """The documented automatic play of one game on one DRBG and one shoe, every round tallied as
    the PAR sheet counts it: a raise (PLAY) with the wager it raises, per unit of initial stake,
    a voided wager as staked and returned.

    The DRBG is seeded ``"{seed}:{index}"`` (chunk ``index`` of a run; the production RNG without a
    seed). :func:`run` plays one per chunk; the HTML report's convergence plot plays chunk 0 in
    batches and reads :attr:`tallies` between them.
    """

    def __init__(self, game_id: str, options: GameOptions, *, seats: int, unit: int, seed: str | None,
                 index: int = 0) -> None:
        from firmware.cards.source import RngShoe
        from firmware.games.registry import get_game
        from firmware.kernel.limits import NO_LIMITS
        from firmware.kernel.round import RoundKernel
        from firmware.rng.service import RngService

        game = get_game(game_id)
        self._rng = RngService.seeded(f"{seed}:{index}") if seed is not None else RngService.production()
        self._kernel = RoundKernel(game, options, limits=NO_LIMITS)
        self._source = RngShoe(self._rng, game.shoe(options))
        self._roll = game.roll_dice if game.dice else None
        self.wagers = game.automatic_wagers(options, seats, unit)
        self._raises = dict(getattr(game, "raises", {}))
        self._names = [n for n in game.wager_names if n not in self._raises]
        self.tallies = {n: WagerTally() for n in self._names}

    def play(self, rounds: int, progress: Callable[[int], None] | None = None,
             progress_every: int = 1_000) -> None:
        """Play ``rounds`` more rounds, adding them to :attr:`tallies`."""
        for i in range(rounds):
            self._add(self._kernel.play(self.wagers, self._source,
                                        dice=self._roll(self._rng) if self._roll else None))
            if progress is not None and (i + 1) % progress_every == 0:
                progress(progress_every)
        if progress is not None and rounds % progress_every:
            progress(rounds % progress_every)

    def _add(self, settlement: Settlement) -> None:
        tallies, raises, wagers = self.tallies, self._raises, self.wagers
        round_net = dict.fromkeys(self._names, 0)
        round_stake = dict.fromkeys(self._names, 0)
        for seat, res in settlement.results.items():
            initial = wagers.get(seat, {})
            final = settlement.stakes.get(seat, {})
            merged: dict[str, list[Any]] = {}
            for name, r in res.items():
                target = raises.get(name, name)
                stake = initial.get(target, 0)
                if not stake or target not in tallies:
                    continue          # a fee or the banker's result: not a player's wager
                entry = merged.setdefault(target, [[], 0, stake, 0])
                entry[0].append(r.outcome)
                entry[1] += r.net
                if r.outcome is not Outcome.VOID:
                    entry[3] += final.get(name, 0)
            for name, (outcomes, net, stake, staked) in merged.items():
                tallies[name].results[(_combined(outcomes, net), net, stake, staked or stake)] += 1
                round_net[name] += net
                round_stake[name] += stake
        for name, stake in round_stake.items():
            if stake:
                t = tallies[name]
                net = round_net[name]
                t.rounds += 1
                t.staked += stake
                t.net += net
                t.net_sq += net * net
                t.staked_sq += stake * stake
                t.net_staked += net * stake


def _chunk(args: tuple[str, dict[str, Any], int, int, int, str | None, int]) -> dict[str, WagerTally]:
    """Play ``rounds`` rounds (one chunk) and tally them; runs in a worker process."""
    game_id, options_json, rounds, seats, unit, seed, index = args
    from firmware.games.registry import make_options

    play = AutomaticPlay(game_id, make_options(game_id, options_json), seats=seats, unit=unit,
                         seed=seed, index=index)
    play.play(rounds)
    return play.tallies


def _combined(outcomes: list[Outcome], net: int) -> str:
    """The outcome of a wager together with its raise (ANTE with PLAY): a fold or a void stays
    one; otherwise the sign of the combined net decides."""
    if len(outcomes) == 1:
        return outcomes[0].value
    for special in (Outcome.FOLD, Outcome.VOID):
        if special in outcomes:
            return special.value
    return "win" if net > 0 else "lose" if net < 0 else "push"


def run(
    game_id: str,
    options: GameOptions,
    rounds: int,
    *,
    seats: int = 1,
    unit: int = 10,
    seed: str | None = None,
    processes: int | None = None,
    chunk_rounds: int = DEFAULT_CHUNK,
    progress: Callable[[int], None] | None = None,
) -> MonteCarloResult:
    """Play ``rounds`` rounds of ``game_id`` with the automatic play and tally every wager."""
    import time

    sizes = chunk_sizes(rounds, chunk_rounds)
    options_json = options.to_json()
    jobs = [(game_id, options_json, n, seats, unit, seed, i) for i, n in enumerate(sizes)]
    start = time.perf_counter()
    totals: dict[str, WagerTally] = {}
    workers = map_chunks(_chunk, jobs, sizes, lambda tallies: _add(totals, tallies),
                         processes=processes, progress=progress)
    return MonteCarloResult(rounds, totals, time.perf_counter() - start, workers)


def chunk_sizes(rounds: int, chunk_rounds: int = DEFAULT_CHUNK) -> list[int]:
    """``rounds`` split into fixed chunks of ``chunk_rounds`` (the last one shorter): the results do
    not depend on the number of processes."""
    if rounds < 1:
        raise ValueError("a Monte Carlo run needs at least one round")
    sizes = [chunk_rounds] * (rounds // chunk_rounds)
    if rounds % chunk_rounds:
        sizes.append(rounds % chunk_rounds)
    return sizes


def map_chunks(play: Callable[[_Job], _Result], jobs: list[_Job], sizes: list[int],
               collect: Callable[[_Result], None], *, processes: int | None = None,
               progress: Callable[[int], None] | None = None) -> int:
    """Run ``play`` on every chunk's job (chunk ``i`` plays ``sizes[i]`` rounds) in a process pool
    of ``processes`` workers (default: every core), handing each result to ``collect`` in chunk
    order. Returns the number of workers."""
    workers = max(1, min(processes or os.cpu_count() or 1, len(jobs)))
    if workers == 1:
        for n, result in zip(sizes, map(play, jobs), strict=True):
            collect(result)
            if progress:
                progress(n)
        return workers
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for n, result in zip(sizes, pool.map(play, jobs), strict=True):
            collect(result)
            if progress:
                progress(n)
    return workers


def _add(totals: dict[str, WagerTally], tallies: dict[str, WagerTally]) -> None:
    for name, t in tallies.items():
        totals.setdefault(name, WagerTally()).merge(t)


def wager_par(name: str, tally: WagerTally, notes: list[str] | None = None) -> WagerPar:
    """A Monte Carlo :class:`WagerPar` from a tally: observed frequencies of each result."""
    total = sum(tally.results.values())
    per_unit: Counter[tuple[str, Fraction, Fraction]] = Counter()
    for (outcome, net, stake, staked), count in tally.results.items():
        per_unit[(outcome, Fraction(net, stake), Fraction(staked, stake))] += count
    lines = [
        OutcomeLine(outcome, count / total, net, count, staked)
        for (outcome, net, staked), count in per_unit.items()
    ]
    lines.sort(key=lambda o: (-o.net, o.name))
    return WagerPar(
        name, lines, method="monte-carlo", sample_size=tally.rounds,
        measured_standard_error=tally.standard_error(), notes=list(notes or []),
    )
