"""Builds a table controller from the configuration: the game and its table options (the pools on),
the limits, the card source (the certified RNG, the card-reading shoe or a stacked list)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from firmware.config.schema import Config, TableSection
from firmware.games.registry import get_game, table_options
from firmware.kernel.limits import BetLimits
from firmware.ledger.ledger import Ledger
from firmware.table.cards import CardSupply, StackedSupply
from firmware.table.controller import Outbound, TableController


def table_rng(cfg: Config, seed: bytes | str | int | None) -> Any:
    """The certified RNG as ``[rng]`` configures it; seeded (``--seed``: a demonstration) or from the
    operating system's entropy through the health tests, as the terminal's."""
    from firmware.cabinet.selftest import terminal_rng
    from firmware.rng.service import RngService

    if seed is not None:
        return RngService.seeded(seed, mechanism=cfg.rng.mechanism)
    return terminal_rng(cfg, os.urandom)


def build_controller(ledger: Ledger, settings: TableSection, *, cfg: Config | None = None, source: str | None = None,
                     stack: Sequence[str] | None = None, shoe: Any = None, out: Outbound | None = None,
                     clock: Callable[[], float] | None = None, seed: bytes | str | int | None = None,
                     rng: Any = None, options: Mapping[str, Any] | None = None) -> TableController:
    """The controller of ``settings.game`` over ``ledger``. ``source`` (default ``settings.source``):
    ``rng``, ``physical`` (``shoe``: the card-reading shoe's driver) or ``stacked`` (``stack``: the
    cards, dealt in order from the first round). ``options``: option overrides over the configured ones."""
    cfg = cfg or Config()
    kind = source or settings.source
    game = get_game(settings.game)
    rules = table_options(cfg, game.id, options)
    wants_rng = kind == "rng" or seed is not None or game.dice > 0     # a dice game rolls them with it
    rng = rng if rng is not None else table_rng(cfg, seed) if wants_rng else None
    supply = CardSupply(kind, rng=rng, shoe_cards=lambda: game.shoe(rules), shoe=shoe,
                        stack=StackedSupply(stack or []) if kind == "stacked" else None)
    kwargs: dict[str, Any] = {} if clock is None else {"clock": clock}
    return TableController(ledger, settings, game, rules, BetLimits.from_config(cfg.limits), supply, out=out,
                           **kwargs)
