"""Game ids to game classes, imported lazily (nothing registers itself at import time)."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from firmware.games.base import Game
from firmware.games.errors import GameError, OptionError
from firmware.games.options import GameOptions, build_options

if TYPE_CHECKING:
    from firmware.config.schema import Config

#: Game id -> "module:Class". The order is the order screens and reports list the games.
GAMES: dict[str, str] = {
    "baccarat-war": "firmware.games.baccarat_war:BaccaratWar",
    "blackjack-war": "firmware.games.blackjack_war:BlackjackWar",
    "holdem-war": "firmware.games.holdem_war:HoldemWar",
    "three-card-poker": "firmware.games.three_card_poker:ThreeCardPoker",
    "split21-stud": "firmware.games.split21_stud:Split21Stud",
    "double-super-9": "firmware.games.double_super_9:DoubleSuper9",
}

#: A game the registry hands out. Which options model and round state it has depends on the id,
#: known only at run time; code that needs them typed names the game class itself.
AnyGame = Game[Any, Any]

_cache: dict[str, AnyGame] = {}


def available() -> list[str]:
    """Every game id this firmware plays, in the order of :data:`GAMES`."""
    return list(GAMES)


def get_game(game_id: str) -> AnyGame:
    """The (stateless) game object for ``game_id``."""
    if game_id in _cache:
        return _cache[game_id]
    target = GAMES.get(game_id)
    if target is None:
        raise GameError(f"unknown game {game_id!r}; games are {', '.join(GAMES)}")
    module_name, _, class_name = target.partition(":")
    game: AnyGame = getattr(importlib.import_module(module_name), class_name)()
    _cache[game_id] = game
    return game


def make_options(game_id: str, *tables: Mapping[str, Any], prefix: str = "") -> GameOptions:
    """Validated options of ``game_id`` from option tables (config first, then command line)."""
    game = get_game(game_id)
    try:
        return build_options(game.options_model, *tables, prefix=prefix)
    except OptionError as exc:
        raise OptionError(f"{game_id} option {exc}" if not prefix else str(exc)) from None


def configured_options(cfg: Config, game_id: str, *overrides: Mapping[str, Any]) -> GameOptions:
    """``game_id``'s options under the configuration ``cfg`` (a :class:`firmware.config.Config`):
    its ``[games.options.GAME]`` table over the rules' defaults, then ``overrides`` (``--option``).

    The one place the terminal, its screens and the ``egm`` commands (``par``, ``simulate``,
    ``round``, ``screenshot``) take a game's options from, so that they all play the same game.
    """
    return make_options(game_id, cfg.games.options.get(game_id, {}), *overrides)


#: What a live table changes in a game's configured options: the war pool is contested among the
#: seats, so it is always on at a table (a lone terminal turns it off: docs/math/README.md). The
#: controller and its player stations both play with these (the station's wagers offer the pool).
TABLE_OPTIONS: dict[str, dict[str, Any]] = {
    "baccarat-war": {"pool": {"enabled": True}},
    "blackjack-war": {"pool": {"enabled": True}},
    "holdem-war": {"pool": {"enabled": True}},
}


def table_options(cfg: Config, game_id: str, overrides: Mapping[str, Any] | None = None) -> GameOptions:
    """``game_id``'s options at a live table: the configuration's, the table's (:data:`TABLE_OPTIONS`:
    the pool on), then ``overrides`` (``egm table demo --option``)."""
    return configured_options(cfg, game_id, TABLE_OPTIONS.get(game_id, {}), overrides or {})


def validate_options(game_id: str, table: Mapping[str, Any]) -> GameOptions:
    """The configuration loader's ``check_options`` (the commands pass it: the configuration sits
    below the games); raises the config layer's error type (a bad option, or a game id this
    firmware does not play)."""
    from firmware.config.errors import ConfigError

    try:
        return make_options(game_id, table, prefix=f"games.options.{game_id}")
    except GameError as exc:
        raise ConfigError(str(exc)) from None
