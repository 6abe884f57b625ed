"""The exact sheets against the real kernel: seeded rounds through ``simulate``."""

from __future__ import annotations

from typing import Any

from firmware.games.registry import get_game
from firmware.kernel.simulate import simulate
from firmware.rng.service import RngService


def assert_simulation_agrees(game_id: str, options: Any, exact: Any, rounds: int, seed: str) -> None:
    """Every wager's simulated return lies within the 99.9% interval around the exact one."""
    result = simulate(get_game(game_id), options, rounds, rng=RngService.seeded(seed), seed="v")
    for name, stats in result.to_json()["wagers"].items():
        lo, hi = stats["ci95"]
        mid, half = (lo + hi) / 2, (hi - lo) / 2 * 3.29 / 1.96
        assert mid - half <= float(exact.wagers[name].rtp) <= mid + half, (name, mid, half)
