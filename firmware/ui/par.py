"""The PAR sheet behind the pay table and the help: the active configuration's, never typed in.

In order: a sheet shipped with the firmware or cached for exactly this configuration (the terminal
caches the one its start-up check computed, ``<state-dir>/par``), else the exact sheet computed
now (every war game with one seat, Three Card Poker, Double Super 9: well under a second). A
configuration that only Monte Carlo reaches, with no cached sheet, gets None: the pay table then
shows the pays (from the options) and says the return figures are not computed, rather than
run minutes of simulation on the player's screen.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from firmware.errors import EgmError

log = logging.getLogger(__name__)


def sheet_for(game_id: str, options: Any, *, seats: int, unit: int, rounds: int,
              cache_dir: Path | str | None = None) -> Any:
    """The :class:`~firmware.math.sheet.ParSheet` of the configuration, or None (see above)."""
    from firmware.math import cache
    from firmware.math.par import par_sheet

    sheet = cache.lookup(game_id, options, seats=seats, unit=unit, rounds=rounds, cache_dir=cache_dir)
    if sheet is not None:
        return sheet
    try:
        return par_sheet(game_id, options, method="exact", seats=seats, unit=unit)
    except EgmError as exc:
        log.info("%s: no PAR sheet for the pay table without Monte Carlo: %s", game_id, exc)
        return None


def sheet_for_config(cfg: Any, game_id: str, options: Any, cache_dir: Path | str | None = None) -> Any:
    """:func:`sheet_for` with the figures the start-up check uses (``math.profile.check_configuration``)."""
    unit = max(cfg.limits.min_bet, min(10, cfg.limits.max_bet))
    return sheet_for(game_id, options, seats=cfg.games.seats, unit=unit,
                     rounds=cfg.math.monte_carlo_rounds, cache_dir=cache_dir)
