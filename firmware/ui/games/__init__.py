"""The games that have screens: game id -> its :class:`~firmware.ui.games.base.GameUi`, imported
lazily (nothing registers itself at import time). A game is added by writing its module and one
line here (docs/ui.md, "Adding a game")."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from firmware.errors import EgmError

if TYPE_CHECKING:
    from firmware.ui.context import GameContext
    from firmware.ui.games.base import GameUi

    #: The screens of a game known by its id only at run time (their game and options types are
    #: the class's own).
    AnyGameUi = GameUi[Any, Any]

GAME_UIS: dict[str, str] = {
    "baccarat-war": "firmware.ui.games.war:BaccaratWarUi",
    "blackjack-war": "firmware.ui.games.war:BlackjackWarUi",
    "three-card-poker": "firmware.ui.games.three_card_poker:ThreeCardPokerUi",
    "holdem-war": "firmware.ui.games.holdem_war:HoldemWarUi",
    "split21-stud": "firmware.ui.games.split21:Split21StudUi",
    "double-super-9": "firmware.ui.games.ds9:DoubleSuper9Ui",
}


class NoScreenError(EgmError):
    """A game with no screens yet."""


def has_screens(game_id: str) -> bool:
    return game_id in GAME_UIS


def game_ui_class(game_id: str) -> type[AnyGameUi]:
    target = GAME_UIS.get(game_id)
    if target is None:
        built = ", ".join(GAME_UIS)
        raise NoScreenError(f"game {game_id!r} has no screens yet; games with screens: {built}")
    module, _, name = target.partition(":")
    cls: type[AnyGameUi] = getattr(importlib.import_module(module), name)
    return cls


def game_ui(ctx: GameContext[Any, Any]) -> AnyGameUi:
    """The :class:`GameUi` of ``ctx.game_id``."""
    return game_ui_class(ctx.game_id)(ctx)
