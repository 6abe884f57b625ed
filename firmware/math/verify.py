"""Verification of the exact PAR figures against rounds played through the real kernel.

``egm par GAME --verify ROUNDS`` plays ROUNDS rounds of the automatic play exactly as
``egm simulate`` does (the same :class:`RoundKernel` loop, split over every core by
:mod:`firmware.math.montecarlo`) and checks that every exact figure lies inside the 95% interval of
the simulated return. A lab runs it at 10^7 rounds (``make par-verify``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware.games.options import GameOptions
from firmware.math import montecarlo
from firmware.math.sheet import ParSheet


@dataclass(frozen=True, slots=True)
class Check:
    wager: str
    exact: float
    simulated: float
    ci95: tuple[float, float]
    rounds: int

    @property
    def inside(self) -> bool:
        return self.ci95[0] <= self.exact <= self.ci95[1]

    def to_json(self) -> dict[str, Any]:
        return {"wager": self.wager, "exact": self.exact, "simulated": self.simulated,
                "ci95": list(self.ci95), "rounds": self.rounds, "inside": self.inside}


def verify(sheet: ParSheet, options: GameOptions, rounds: int, *, seed: str | None = None,
           processes: int | None = None, progress: Callable[[int], None] | None = None) -> list[Check]:
    """Every exact wager of ``sheet`` against ``rounds`` simulated rounds."""
    result = montecarlo.run(sheet.game, options, rounds, seats=sheet.seats, unit=sheet.unit or 10,
                            seed=seed, processes=processes, progress=progress)
    checks = []
    for name, wager in sheet.wagers.items():
        tally = result.wagers.get(name)
        if wager.method == "monte-carlo" or tally is None or not tally.rounds:
            continue
        simulated = montecarlo.wager_par(name, tally)
        ci = simulated.ci95
        assert ci is not None
        checks.append(Check(name, float(wager.rtp), float(simulated.rtp), ci, rounds))
    return checks
