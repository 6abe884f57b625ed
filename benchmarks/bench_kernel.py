"""Rounds per second through the real kernel and game code (``egm simulate``), and what the
``transitions`` state machine alone costs per round, measured in the same run."""

from __future__ import annotations

import time

from firmware.games.registry import get_game, make_options
from firmware.kernel.simulate import simulate
from firmware.rng.service import RngService

SECONDS = 2.0


def _rate(game_id: str, *, seats: int = 1, wagers=None, options=None) -> tuple[float, str]:
    game = get_game(game_id)
    opts = make_options(game_id, options or {})
    rounds = 2000
    while True:
        result = simulate(game, opts, rounds, rng=RngService.seeded(1), seats=seats, wagers=wagers)
        if result.elapsed >= SECONDS or rounds >= 2_000_000:
            return result.rounds / result.elapsed, "rounds/s"
        rounds = int(rounds * max(2.0, SECONDS / max(result.elapsed, 1e-3)))


def _transitions_only() -> tuple[float, str]:
    """The round machine's four triggers (and the per-round reset) with no game work at all."""
    from firmware.kernel.round import round_machine
    from firmware.kernel.states import RoundState

    class Model:
        phase = RoundState.BETTING

    model = Model()
    # The machine every kernel that journals nothing (simulation) shares, fired as the kernel fires it.
    machine = round_machine(False)
    events = machine.events
    n = 20_000
    start = time.perf_counter()
    for _ in range(n):
        machine.set_state(RoundState.BETTING, model=model)
        events["deal"].trigger(model)
        events["showdown"].trigger(model)
        events["settle"].trigger(model)
        events["complete"].trigger(model)
    return n / (time.perf_counter() - start), "rounds/s (machine alone)"


BENCHMARKS = [
    ("simulate baccarat-war, 1 seat, bac+war", lambda: _rate("baccarat-war", wagers={1: {"bac": 10, "war": 10}})),
    ("simulate baccarat-war, 1 seat, all 5 wagers", lambda: _rate("baccarat-war", seats=1)),
    ("simulate baccarat-war, 7 seats, all 5 wagers", lambda: _rate("baccarat-war", seats=7)),
    ("simulate blackjack-war, 1 seat, all wagers", lambda: _rate("blackjack-war", seats=1)),
    ("simulate holdem-war, 1 seat, all wagers", lambda: _rate("holdem-war", seats=1)),
    ("simulate three-card-poker, 1 seat, ante + pair plus, Q-6-4", lambda: _rate("three-card-poker", seats=1)),
    ("simulate split21-stud, 1 seat, ante/high/low/jackpot, house way",
     lambda: _rate("split21-stud", seats=1)),
    ("simulate double-super-9, 1 spot, house banking, house way", lambda: _rate("double-super-9", seats=1)),
    ("transitions round machine alone (4 triggers)", _transitions_only),
]
