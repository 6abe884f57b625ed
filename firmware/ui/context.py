"""What the screens need to know about the terminal's configuration, read once per game.

A :class:`GameContext` is built from the terminal's configuration (``Terminal.cfg``) for one game:
the game's rules object and validated options, the table limits, how money is shown, how many
seats the player covers, which games are enabled, and the chip values offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from firmware.games.base import Game
from firmware.games.options import GameOptions
from firmware.games.registry import configured_options, get_game
from firmware.kernel.limits import BetLimits
from firmware.ui.money import Money

if TYPE_CHECKING:
    from firmware.config.schema import Config

#: The game's rules object (its :class:`Game` subclass, whose own methods the screens call).
GameT = TypeVar("GameT", bound=Game[Any, Any])
#: The game's options model.
OptionsT = TypeVar("OptionsT", bound=GameOptions)

#: Chip values offered, smallest first; those inside the table limits are used (at most five).
CHIP_SERIES = (1, 5, 10, 25, 100, 500, 1000, 5000, 10000)
MAX_CHIPS = 5


def chip_values(limits: BetLimits) -> tuple[int, ...]:
    fits = [v for v in CHIP_SERIES if limits.min_bet <= v <= limits.max_bet and v % limits.min_bet == 0]
    if not fits:
        fits = [limits.min_bet]
    return tuple(fits[:MAX_CHIPS])


@dataclass(frozen=True)
class GameContext(Generic[GameT, OptionsT]):
    """Typed by the game and its options model: each game's screens (``GameUi[WarFamilyGame,
    WarFamilyOptions]``) read the rules and options they draw with their real types."""

    game_id: str
    game: GameT
    options: OptionsT
    limits: BetLimits
    money: Money
    seats: int
    enabled: tuple[str, ...]
    chips: tuple[int, ...]

    @classmethod
    def from_config(cls, cfg: Config, game_id: str | None = None) -> GameContext[Any, Any]:
        """The context of ``game_id`` (default: the configured default game). Which game, and so
        which options model, is known only at run time: the game's :class:`GameUi` names them."""
        game_id = game_id or cfg.games.default
        limits = BetLimits.from_config(cfg.limits)
        return GameContext(
            game_id=game_id, game=get_game(game_id),
            options=configured_options(cfg, game_id),
            limits=limits, money=Money(cfg.terminal.denomination, cfg.terminal.currency),
            seats=cfg.games.seats, enabled=tuple(cfg.games.enabled), chips=chip_values(limits),
        )
