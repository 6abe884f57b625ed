"""``egm par``: the PAR sheet of any game under any configuration, exact where it can be enumerated.

Which method serves which wager:

| game | exact | Monte Carlo |
|---|---|---|
| three-card-poker | every wager (``firmware.math.three_card_poker``) | on request |
| double-super-9 | the bet (``firmware.math.double_super_9``) | on request |
| baccarat-war, blackjack-war | one seat: every wager (``firmware.math.war``); several seats: TIE and FOUR_CARD | BAC, WAR, WAR_POOL with several seats |
| holdem-war | TIE, FOUR_CARD; one seat: BAC, WAR, BAC+WAR, WAR_POOL too (``firmware.math.holdem_war``) | several seats: BAC, WAR, WAR_POOL |
| split21-stud | house banking: ANTE, HIGH, LOW; one seat: JACKPOT too (``firmware.math.split21_stud``) | several seats: JACKPOT; player banking: every wager |

``method = "auto"`` (the default) takes the exact sheet where there is one and Monte Carlo for
the rest; ``"exact"`` refuses a sheet that would need Monte Carlo; ``"monte-carlo"`` plays every
wager through the kernel (the verification of the exact figures).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

from firmware.errors import EgmError
from firmware.games.options import GameOptions
from firmware.games.registry import AnyGame, get_game
from firmware.math import montecarlo
from firmware.math.sheet import ParSheet, WagerPar

MethodChoice = Literal["auto", "exact", "monte-carlo"]
DEFAULT_ROUNDS = 1_000_000
WAR_GAMES = ("baccarat-war", "blackjack-war")


class ParError(EgmError):
    """A PAR sheet that cannot be made as asked (e.g. exact for a game only Monte Carlo reaches)."""


def par_sheet(
    game_id: str,
    options: GameOptions,
    *,
    method: MethodChoice = "auto",
    seats: int = 1,
    unit: int = 10,
    rounds: int = DEFAULT_ROUNDS,
    seed: str | None = None,
    processes: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ParSheet:
    """The PAR sheet of ``game_id`` with validated ``options``."""
    game = get_game(game_id)
    if not 1 <= seats <= game.max_seats:
        raise ParError(f"{game_id} has seats 1-{game.max_seats}, not {seats}")
    if unit < 1:
        raise ParError(f"the stake unit is a whole number of credits >= 1, not {unit}")
    start = time.perf_counter()
    exact = None if method == "monte-carlo" else _exact(game_id, game, options, seats=seats, unit=unit)
    if exact is not None and not exact.missing:
        sheet = exact.sheet
    else:
        if method == "exact":
            missing = ", ".join(exact.missing) if exact else "every wager"
            raise ParError(
                f"{game_id}: no exact method for {missing} with {seats} seat(s); "
                "use --method monte-carlo (or auto)"
            )
        result = montecarlo.run(game_id, options, rounds, seats=seats, unit=unit, seed=seed,
                                processes=processes, progress=progress)
        mc = {
            name: montecarlo.wager_par(name, tally, _mc_notes(result, seats, unit, seed))
            for name, tally in result.wagers.items() if tally.rounds
        }
        if exact is None:
            sheet = ParSheet(game_id, options.to_json(), mc, seats=seats, unit=unit)
        else:
            sheet = exact.sheet
            for name in exact.missing:
                if name in mc:
                    sheet.wagers[name] = mc[name]
            sheet.wagers = {n: sheet.wagers[n] for n in _order(game.wager_names, sheet.wagers)}
        sheet.extras["monte_carlo"] = {
            "rounds": rounds, "processes": result.processes, "seed": seed,
            "rounds_per_second": rounds / result.elapsed if result.elapsed else None,
            "rounds_per_second_per_process": (rounds / result.elapsed / result.processes
                                              if result.elapsed else None),
        }
    sheet.elapsed = time.perf_counter() - start
    return sheet


class _Exact:
    def __init__(self, sheet: ParSheet, missing: tuple[str, ...] = ()) -> None:
        self.sheet = sheet
        self.missing = missing


def _exact(game_id: str, game: AnyGame, options: GameOptions, *, seats: int, unit: int) -> _Exact | None:
    """The exact part of the sheet, and the wagers it leaves to Monte Carlo; None if no part.

    ``options`` are ``game_id``'s own model (the registry made them for that id); each branch
    says which, for the exact module that reads them."""
    if game_id == "three-card-poker":
        from firmware.games.three_card_poker import ThreeCardPokerOptions
        from firmware.math import three_card_poker

        assert isinstance(options, ThreeCardPokerOptions)
        sheet = three_card_poker.par_sheet(options, unit=unit)
        sheet.seats = seats
        return _Exact(sheet)
    if game_id == "double-super-9":
        from firmware.games.double_super_9 import DoubleSuper9Options
        from firmware.math import double_super_9

        assert isinstance(options, DoubleSuper9Options)
        sheet = double_super_9.par_sheet(options, unit=unit)
        sheet.seats = seats
        return _Exact(sheet)
    if game_id in (*WAR_GAMES, "holdem-war"):
        if game_id == "holdem-war":
            from firmware.games.holdem_war import HoldemWarOptions
            from firmware.math import holdem_war

            assert isinstance(options, HoldemWarOptions)
            sheet = holdem_war.par_sheet(options, unit=unit)
        else:
            from firmware.games.war_family import WarFamilyGame, WarFamilyOptions
            from firmware.math import war

            assert isinstance(game, WarFamilyGame) and isinstance(options, WarFamilyOptions)
            sheet = war.par_sheet(game, options, unit=unit)
        if seats == 1:
            return _Exact(sheet)
        # Several seats: each seat's initial cards with the dealer's are still four random cards
        # of the shoe, so TIE and FOUR_CARD keep their one-seat figures; the wars share the
        # dealer's war cards and the pot is shared: those come from Monte Carlo.
        shared = [n for n in ("bac", "war", "war_pool") if n in sheet.wagers]
        for name in (*shared, "bac+war"):
            sheet.wagers.pop(name, None)
        sheet.extras.pop("war", None)
        sheet.seats = seats
        return _Exact(sheet, tuple(shared))
    if game_id == "split21-stud":
        from firmware.games.split21_stud import Split21Stud, Split21StudOptions
        from firmware.math import split21_stud

        assert isinstance(game, Split21Stud) and isinstance(options, Split21StudOptions)
        if options.banking != "house":
            return None

        sheet = split21_stud.par_sheet(options, seats=seats, unit=unit)
        missing = tuple(n for n in game.offered_wagers(options) if n not in sheet.wagers)
        return _Exact(sheet, missing)
    return None


def _order(wager_names: tuple[str, ...], wagers: dict[str, WagerPar]) -> list[str]:
    rank = {n: i for i, n in enumerate(wager_names)}
    return sorted(wagers, key=lambda n: (rank.get(n.split("+")[0], 99), n))


def _mc_notes(result: montecarlo.MonteCarloResult, seats: int, unit: int, seed: str | None) -> list[str]:
    return [
        f"Monte Carlo: {result.rounds:,} rounds through the round kernel, {seats} seat(s), "
        f"automatic wagers of {unit} credits, the documented automatic strategy",
        f"cards from {'a DRBG seeded ' + repr(seed) if seed is not None else 'the production RNG'}",
    ]
