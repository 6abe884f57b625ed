"""Builds a table controller from the configuration: the game and its table options (the pools on),
the limits, the card source (the certified RNG, the card-reading shoe or a stacked list)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from firmware.config.schema import Config, TableSection
from firmware.games.registry import configured_options, get_game
from firmware.kernel.limits import BetLimits
from firmware.ledger.ledger import Ledger
from firmware.table.cards import CardSupply, StackedSupply
from firmware.table.controller import Outbound, TableController

#: What a table changes in a game's configured options: the war pool is contested among the seats,
#: so it is always on at a table (a lone terminal turns it off: docs/math/README.md).
TABLE_OPTIONS: dict[str, dict[str, Any]] = {
    "baccarat-war": {"pool": {"enabled": True}},
    "blackjack-war": {"pool": {"enabled": True}},
    "holdem-war": {"pool": {"enabled": True}},
}


def table_options(cfg: Config, game_id: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """The game's options at a table: the configuration's, the table's (the pool on), then
    ``overrides`` (``egm table demo --option``)."""
    return configured_options(cfg, game_id, TABLE_OPTIONS.get(game_id, {}), overrides or {})


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
