"""The war pool's figures for N real players at a live table (issue 24; rules step 6).

At a live table up to seven players, one hand each, place the WAR_POOL ante of ``unit`` credits
and contest one pot with the dealer (the house adds ``pool.dealer_ante``). The figures here are
per player: the pool's return per unit staked (a winning player is paid the pot less
``pool.commission``, rounded down), the probability that a pool *contest* happens (a tied tier of
two or more hands draws war cards, step 6 A), the probability that the dealer takes the pot, and
the commission the house keeps per round in credits.

**Method.**
* ``N = 1`` is the one-seat sheet's WAR_POOL (:mod:`firmware.math.war`, Hold'em War's from
  :mod:`firmware.math.holdem_war`): exact, the contest probability is the initial tie.
* ``N >= 2``: the dealer and the N players are N + 1 participants dealt alike whom step 6 treats
  alike, so each takes the pot with probability exactly ``1 / (N + 1)`` (:func:`exact_figures`):
  the return, the dealer's share and the commission per round are exact, to the probability of a
  contest misdeal (:func:`contest_misdeal`).
* The contest probability for ``N >= 2``, and the check of the exact figures, come from Monte
  Carlo through the real round kernel and game code (:class:`PoolPlay`, the documented automatic
  play of N seats, one per player), cards from DRBGs seeded ``"{seed}/players-{N}:{chunk}"``; the
  kernel's own pool contest, payout and commission decide every round. The pool of one round
  involves every player, so the standard errors come from per-round sums (the covariance of the
  seats' nets), not from independent seats.

**Symmetry.** The players' hands are dealt alike and the contest treats them alike, so every
player's figure is the same; each seat's own Monte Carlo estimate is kept, and
:attr:`MonteCarloFigures.symmetry_z` is the largest deviation, in standard errors, of one seat's
return from the mean of the others.

A pool among one player's own spots (today's terminal) returns the same per unit as N players,
but that one player collects every seat's share; the figures here are each player's own.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Any

from firmware.games.base import Settlement
from firmware.games.options import GameOptions, percent_fraction
from firmware.games.war_engine import DEALER, WarScoring, pool_payout
from firmware.math import cache, montecarlo
from firmware.math.par import ParError, par_sheet
from firmware.math.sheet import Z95

#: The war-family games: one hand per player, a WAR_POOL ante each.
GAMES = ("baccarat-war", "blackjack-war", "holdem-war")
MAX_PLAYERS = 7
#: Monte Carlo rounds per number of players, unless asked otherwise (the shipped figures' size).
DEFAULT_ROUNDS = 200_000
#: A seeded run's estimate lies this many standard errors from the truth at most 1 time in 1,000.
Z999 = 3.29


class PoolTally:
    """Monte Carlo sums of the pool among ``players`` seats (integers; ratios are taken at the end)."""

    __slots__ = ("players", "rounds", "net", "cross", "contests", "dealer_wins", "misdeals",
                 "commission", "commission_sq")

    def __init__(self, players: int) -> None:
        self.players = players
        self.rounds = 0
        self.net = [0] * players                                   #: per seat, sum of nets
        self.cross = [[0] * players for _ in range(players)]       #: sum over rounds of net_i * net_j
        self.contests = 0          #: rounds where two or more hands contested the pot
        self.dealer_wins = 0       #: rounds the dealer took the pot
        self.misdeals = 0          #: rounds the contest ended in a misdeal (antes returned)
        self.commission = 0        #: credits of commission kept
        self.commission_sq = 0     #: sum over rounds of commission^2

    def add(self, nets: list[int], *, contest: bool, dealer: bool, misdeal: bool, commission: int) -> None:
        self.rounds += 1
        for i, a in enumerate(nets):
            self.net[i] += a
            row = self.cross[i]
            for j, b in enumerate(nets):
                row[j] += a * b
        self.contests += contest
        self.dealer_wins += dealer
        self.misdeals += misdeal
        self.commission += commission
        self.commission_sq += commission * commission

    def merge(self, other: PoolTally) -> None:
        if other.players != self.players:
            raise ValueError(f"cannot merge a tally of {other.players} players into one of {self.players}")
        self.rounds += other.rounds
        for i in range(self.players):
            self.net[i] += other.net[i]
            for j in range(self.players):
                self.cross[i][j] += other.cross[i][j]
        self.contests += other.contests
        self.dealer_wins += other.dealer_wins
        self.misdeals += other.misdeals
        self.commission += other.commission
        self.commission_sq += other.commission_sq

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> PoolTally:
        tally = cls(int(doc["players"]))
        for name in cls.__slots__[1:]:
            setattr(tally, name, doc[name])
        if len(tally.net) != tally.players or any(len(row) != tally.players for row in tally.cross):
            raise ValueError("a tally's sums do not match its number of players")
        return tally


class PoolPlay(montecarlo.AutomaticPlay):
    """The documented automatic play of ``players`` seats (one per player), each round's pool
    read from the kernel's own round state into a :class:`PoolTally`."""

    def __init__(self, game_id: str, options: GameOptions, *, players: int, unit: int, seed: str | None,
                 index: int = 0) -> None:
        super().__init__(game_id, options, seats=players, unit=unit, seed=seed, index=index)
        if not all(w.get("war_pool") for w in self.wagers.values()):
            raise ValueError(f"{game_id}: the war pool is not offered with these options")
        self.pool = PoolTally(players)

    def _add(self, settlement: Settlement) -> None:
        state = self._kernel.round
        assert state is not None            # the round just played
        pool = state.pool
        nets = [settlement.results[seat]["war_pool"].net for seat in sorted(self.wagers)]
        self.pool.add(nets, contest=len(pool.contestants) >= 2, dealer=pool.winner == DEALER,
                      misdeal=pool.misdeal, commission=state.pool_commission)


def _chunk(args: tuple[str, dict[str, Any], int, int, int, str | None, int]) -> PoolTally:
    """Play one chunk of rounds with ``players`` seats; runs in a worker process."""
    game_id, options_json, rounds, players, unit, seed, index = args
    from firmware.games.registry import make_options

    play = PoolPlay(game_id, make_options(game_id, options_json), players=players, unit=unit,
                    seed=seed, index=index)
    play.play(rounds)
    return play.pool


@dataclass(slots=True)
class MonteCarloFigures:
    """The pool among ``players`` seats as the kernel played it, with standard errors from
    per-round sums (one round's seats share a pot, so their results are not independent)."""

    rounds: int
    seed: str | None
    rtp: float                 #: each player's return (the seats' average) per unit staked
    rtp_se: float
    seats: list[tuple[float, float]]       #: each seat's own return and its standard error
    symmetry_z: float | None   #: the largest |a seat's return - the others' mean|, in standard errors
    p_contest: float
    p_contest_se: float
    p_dealer: float
    p_dealer_se: float
    p_misdeal: float
    commission_per_round: float
    commission_se: float

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds, "seed": self.seed, "rtp": self.rtp, "rtp_standard_error": self.rtp_se,
            "ci95": [self.rtp - Z95 * self.rtp_se, self.rtp + Z95 * self.rtp_se],
            "per_seat": [{"seat": i, "rtp": r, "standard_error": se}
                         for i, (r, se) in enumerate(self.seats, start=1)],
            "symmetry_max_z": self.symmetry_z,
            "contest_probability": self.p_contest, "contest_standard_error": self.p_contest_se,
            "dealer_wins_probability": self.p_dealer, "dealer_wins_standard_error": self.p_dealer_se,
            "misdeal_probability": self.p_misdeal,
            "commission_per_round": self.commission_per_round,
            "commission_per_round_standard_error": self.commission_se,
        }


@dataclass(slots=True)
class PlayerFigures:
    """The pool's figures for one number of players; every player's are the same (symmetry).

    ``rtp``, ``p_dealer`` and ``commission_per_round`` are exact (N = 1: the one-seat sheet; N >= 2:
    the dealer is one of N + 1 alike participants, see :func:`exact_figures`) to ``precision``;
    ``p_contest`` is exact for N = 1 and the kernel's Monte Carlo estimate (``p_contest_se``) above.
    """

    players: int
    unit: int
    pot: int                   #: credits in the pot: every player's ante and the dealer ante
    paid: int                  #: credits paid to a winning player (the pot less the commission)
    rtp: Fraction              #: each player's return from the pool per unit staked
    p_dealer: Fraction         #: the probability that the dealer takes the pot
    commission_per_round: Fraction   #: credits the house keeps as commission, per round
    p_contest: Fraction | float      #: two or more hands contest the pot (step 6 A)
    derivation: str
    p_contest_se: float | None = None
    #: A bound on the error of the exact figures (the contest's misdeal; None: none).
    precision: float | None = None
    monte_carlo: MonteCarloFigures | None = None

    @property
    def commission(self) -> int:
        """Credits kept from a pot a player wins."""
        return self.pot - self.paid

    @property
    def house_pool_per_round(self) -> Fraction:
        """What the house takes from the pool per round, in credits: the players' stakes less what
        they get back (the dealer's pots and the commission, less the dealer ante)."""
        return self.players * self.unit * (1 - self.rtp)

    @property
    def agrees(self) -> bool | None:
        """The Monte Carlo return lies within 3.29 standard errors (99.9%) of the exact one."""
        mc = self.monte_carlo
        if mc is None:
            return None
        return abs(mc.rtp - float(self.rtp)) <= Z999 * mc.rtp_se + (self.precision or 0.0)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "players": self.players, "unit": self.unit, "pot": self.pot,
            "paid_to_winner": self.paid, "commission_on_win": self.commission,
            "rtp": float(self.rtp), "rtp_exact": _fraction_text(self.rtp), "house_edge": float(1 - self.rtp),
            "dealer_wins_probability": float(self.p_dealer),
            "commission_per_round": float(self.commission_per_round),
            "house_pool_per_round": float(self.house_pool_per_round),
            "contest_probability": float(self.p_contest),
            "contest_method": "exact" if self.p_contest_se is None else "monte-carlo",
            "contest_standard_error": self.p_contest_se,
            "derivation": self.derivation,
            "precision": self.precision,
        }
        if self.monte_carlo is not None:
            doc["monte_carlo"] = {**self.monte_carlo.to_json(), "agrees": self.agrees}
        return doc


def _fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def pot_and_paid(options: Any, players: int, unit: int) -> tuple[int, int]:
    """The pot of ``players`` antes of ``unit`` and the dealer ante, and what a winning player gets."""
    pot = players * unit + options.pool.dealer_ante
    paid, _commission = pool_payout(pot, percent_fraction(options.pool.commission))
    return pot, paid


def monte_carlo_figures(tally: PoolTally, unit: int, *, seed: str | None) -> MonteCarloFigures:
    """Each player's figures from a Monte Carlo tally, standard errors from per-round sums."""
    n, k = tally.rounds, tally.players
    if n < 2:
        raise ValueError("the pool's figures need at least two rounds")
    mean = [s / n for s in tally.net]
    cov = [[(tally.cross[i][j] - n * mean[i] * mean[j]) / (n - 1) for j in range(k)] for i in range(k)]
    seats = [(1 + mean[i] / unit, math.sqrt(max(cov[i][i], 0.0) / n) / unit) for i in range(k)]
    # Each player's figure: the seats' average, its variance from the whole covariance matrix.
    avg_var = sum(map(sum, cov)) / (k * k)
    symmetry = None
    if k > 1:
        z = []
        for i in range(k):
            w = [1.0 if j == i else -1 / (k - 1) for j in range(k)]
            var = sum(w[a] * w[b] * cov[a][b] for a in range(k) for b in range(k))
            diff = sum(w[a] * mean[a] for a in range(k))
            z.append(abs(diff) / math.sqrt(var / n) if var > 0 else 0.0)
        symmetry = max(z)

    def proportion(count: int) -> tuple[float, float]:
        p = count / n
        return p, math.sqrt(p * (1 - p) / n)

    p_contest, contest_se = proportion(tally.contests)
    p_dealer, dealer_se = proportion(tally.dealer_wins)
    c_mean = tally.commission / n
    c_var = max((tally.commission_sq - n * c_mean * c_mean) / (n - 1), 0.0)
    return MonteCarloFigures(
        rounds=n, seed=seed, rtp=1 + sum(mean) / k / unit, rtp_se=math.sqrt(max(avg_var, 0.0) / n) / unit,
        seats=seats, symmetry_z=symmetry, p_contest=p_contest, p_contest_se=contest_se,
        p_dealer=p_dealer, p_dealer_se=dealer_se, p_misdeal=tally.misdeals / n,
        commission_per_round=c_mean, commission_se=math.sqrt(c_var / n),
    )


def one_player(game_id: str, options: GameOptions, unit: int) -> PlayerFigures:
    """``N = 1``: the one-seat sheet's exact WAR_POOL, its initial tie the contest."""
    sheet = par_sheet(game_id, options, method="exact", seats=1, unit=unit)
    pool = sheet.wagers["war_pool"]
    p = {line.name: Fraction(line.probability) for line in pool.outcomes}
    p_tie = next(line.probability for line in sheet.wagers["tie"].outcomes if line.name == "tie")
    pot, paid = pot_and_paid(options, 1, unit)
    p_win = p["seat wins the pot"]
    return PlayerFigures(
        players=1, unit=unit, pot=pot, paid=paid, rtp=Fraction(pool.rtp), p_dealer=p["dealer wins the pot"],
        commission_per_round=p_win * (pot - paid), p_contest=Fraction(p_tie),
        derivation="the one-seat sheet's WAR_POOL (one seat against the dealer)", precision=pool.precision,
    )


def exact_figures(options: Any, players: int, unit: int, p_contest: float, p_contest_se: float) -> PlayerFigures:
    """``N >= 2``: the dealer and the N players are N + 1 participants dealt alike (two cards from
    the same shoe, or hole cards with the same board) whom the pool's rules (step 6 A/B, the
    contest) treat alike, so each takes the pot with probability ``1 / (N + 1)``. A player's
    return is ``paid / ((N + 1) unit)``, the commission per round ``N / (N + 1) (pot - paid)``,
    exactly but for a contest still tied after ``max_war_steps`` (a misdeal, antes returned),
    whose probability bounds the error: :func:`contest_misdeal`."""
    pot, paid = pot_and_paid(options, players, unit)
    share = Fraction(1, players + 1)
    return PlayerFigures(
        players=players, unit=unit, pot=pot, paid=paid, rtp=share * Fraction(paid, unit), p_dealer=share,
        commission_per_round=players * share * (pot - paid), p_contest=p_contest, p_contest_se=p_contest_se,
        derivation=f"symmetry: the dealer and {players} players each take the pot 1 time in {players + 1}",
        precision=contest_misdeal(options, players + 1) or None,
    )


def contest_misdeal(options: Any, hands: int) -> float:
    """The probability (an estimate) that a pool contest of up to ``hands`` hands is still tied after
    ``max_war_steps`` steps, from the worst start, with war cards drawn with replacement (card
    removal changes it little in a large shoe; a small shoe's cards can run out first, a misdeal
    too, which the kernel's misdeal count shows). A misdeal returns the antes, so it moves a
    return by less than its probability."""
    from firmware.math.war import RANKS, war_class

    mode = options.war_scoring
    cyclic = mode is WarScoring.BACCARAT        # a step's score is (common score + value) % 10
    dist: dict[int, Fraction] = {}
    for rank in RANKS:
        c = war_class(mode, rank)
        dist[c] = dist.get(c, Fraction(0)) + Fraction(1, len(RANKS))
    starts = range(10) if cyclic else range(1)

    def step(k: int, s: int) -> dict[tuple[int, int], Fraction]:
        """From ``k`` live hands at common score ``s``: the chance of each (survivors >= 2, score)."""
        scores: dict[int, Fraction] = {}
        for c, p in dist.items():
            x = (s + c) % 10 if cyclic else c
            scores[x] = scores.get(x, Fraction(0)) + p
        out: dict[tuple[int, int], Fraction] = {}
        below = Fraction(0)
        for x in sorted(scores):
            p = scores[x]
            for m in range(2, k + 1):
                key = (m, x if cyclic else 0)    # only the cyclic score carries to the next step
                out[key] = out.get(key, Fraction(0)) + math.comb(k, m) * p**m * below ** (k - m)
            below += p
        return out

    moves = {(k, s): [(key, float(q)) for key, q in step(k, s).items()]
             for k in range(2, hands + 1) for s in starts}
    worst = 0.0
    for start in moves:
        state = {start: 1.0}
        for _ in range(options.max_war_steps):
            nxt: dict[tuple[int, int], float] = {}
            for here, p in state.items():
                for key, q in moves[here]:
                    nxt[key] = nxt.get(key, 0.0) + p * q
            state = nxt
        worst = max(worst, sum(state.values()))
    return worst


def player_figures(
    game_id: str,
    options: GameOptions,
    players: int,
    *,
    unit: int = 10,
    rounds: int = DEFAULT_ROUNDS,
    seed: str | None = None,
    processes: int | None = None,
    monte_carlo_one: bool = False,
    use_shipped: bool = True,
    progress: Callable[[int], None] | None = None,
) -> list[PlayerFigures]:
    """The pool's figures for 1..``players`` players: exact returns, and for N >= 2 (N = 1 too with
    ``monte_carlo_one``) ``rounds`` rounds through the kernel, which give the contest probability
    and check the exact figures seat by seat. Shipped figures of the same configuration with at least ``rounds`` rounds (and the same
    seed, if one is given) are used instead of playing again."""
    check(game_id, options, players, unit)
    wanted = range(1 if monte_carlo_one else 2, players + 1)
    found: dict[int, PoolTally] = {}
    stored_seed: dict[int, str | None] = {}
    for n in wanted:
        hit = lookup(game_id, options, n, unit, rounds=rounds, seed=seed) if use_shipped else None
        if hit is not None:
            found[n], stored_seed[n] = hit
    todo = [n for n in wanted if n not in found]
    totals = play(game_id, options, todo, unit=unit, rounds=rounds, seed=seed, processes=processes,
                  progress=progress)
    found.update(totals)
    stored_seed.update(dict.fromkeys(todo, seed))
    out = []
    for n in range(1, players + 1):
        mc = monte_carlo_figures(found[n], unit, seed=stored_seed[n]) if n in found else None
        if n == 1:
            fig = one_player(game_id, options, unit)
        else:
            assert mc is not None
            fig = exact_figures(options, n, unit, mc.p_contest, mc.p_contest_se)
        fig.monte_carlo = mc
        out.append(fig)
    return out


def check(game_id: str, options: GameOptions, players: int, unit: int) -> None:
    """Refuse what has no pool figures: another game, the pool off, a player count outside 1..7."""
    if game_id not in GAMES:
        raise ParError(f"{game_id} has no war pool; the players' pool figures are for {', '.join(GAMES)}")
    pool = getattr(options, "pool", None)
    if pool is None or not pool.enabled:
        raise ParError(f"{game_id}: the war pool is off in this configuration (--option pool.enabled=true)")
    if not 1 <= players <= MAX_PLAYERS:
        raise ParError(f"a live table has 1-{MAX_PLAYERS} players, not {players}")
    if unit < 1:
        raise ParError(f"the stake unit is a whole number of credits >= 1, not {unit}")


def play(game_id: str, options: GameOptions, players: list[int], *, unit: int, rounds: int,
         seed: str | None, processes: int | None = None,
         progress: Callable[[int], None] | None = None) -> dict[int, PoolTally]:
    """Play ``rounds`` rounds for each number of players in ``players`` (all chunks in one process
    pool); the DRBG of chunk ``i`` with ``N`` players is seeded ``"{seed}/players-{N}:{i}"``."""
    totals = {n: PoolTally(n) for n in players}
    jobs, sizes = [], []
    options_json = options.to_json()
    for n in players:
        for i, size in enumerate(montecarlo.chunk_sizes(rounds)):
            jobs.append((game_id, options_json, size, n, unit, _seed(seed, n), i))
            sizes.append(size)
    if jobs:
        montecarlo.map_chunks(_chunk, jobs, sizes, lambda t: totals[t.players].merge(t),
                              processes=processes, progress=progress)
    return totals


def _seed(seed: str | None, players: int) -> str | None:
    return None if seed is None else f"{seed}/players-{players}"


# --- shipped figures ------------------------------------------------------------------------------

def _name(game_id: str, options: GameOptions, players: int, unit: int) -> str:
    return "players-" + cache.key(game_id, options, seats=players, unit=unit) + ".json"


def lookup(game_id: str, options: GameOptions, players: int, unit: int, *, rounds: int,
           seed: str | None, directory: Path | None = None) -> tuple[PoolTally, str | None] | None:
    """A stored tally of this configuration with at least ``rounds`` rounds (and ``seed``, if
    given), from ``directory`` or the firmware's shipped ones; None if there is none (or it is
    unreadable)."""
    base = directory or resources.files("firmware.math").joinpath(cache.SHIPPED)
    path = base.joinpath(_name(game_id, options, players, unit))
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        doc = json.loads(path.read_text("utf-8"))
        tally = PoolTally.from_json(doc["tally"])
        if tally.players == players and tally.rounds >= rounds and seed in (None, doc["seed"]):
            return tally, doc["seed"]
    return None


def store(game_id: str, options: GameOptions, tally: PoolTally, unit: int, *, seed: str | None,
          directory: Path) -> Path:
    """Write a tally (atomically) where :func:`lookup` finds it."""
    path = directory / _name(game_id, options, tally.players, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"game": game_id, "options": options.to_json(), "unit": unit, "seed": seed,
           "tally": tally.to_json()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc) + "\n", "utf-8")
    tmp.replace(path)
    return path


def main(argv: list[str]) -> int:
    """Compute and ship the figures of every war game's default options with the pool on, unit 10,
    2..7 players: ``python -m firmware.math.war_pool [ROUNDS] [GAME ...]``."""
    from firmware.games.registry import make_options

    rounds = int(argv[0]) if argv else DEFAULT_ROUNDS
    out = Path(str(resources.files("firmware.math").joinpath(cache.SHIPPED)))
    for game_id in argv[1:] or GAMES:
        options = make_options(game_id, {"pool": {"enabled": True}})
        seed = f"shipped:{game_id}"
        for n, tally in play(game_id, options, list(range(2, MAX_PLAYERS + 1)), unit=10, rounds=rounds,
                             seed=seed).items():
            print(f"{game_id}, {n} players: {store(game_id, options, tally, 10, seed=seed, directory=out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
