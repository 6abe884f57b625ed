"""One set of game options: ``egm par``, ``egm simulate``, ``egm round``, ``egm screenshot`` and the
terminal play each game with the terminal's default configuration, or ``--config``'s, then
``--option``'s."""

from __future__ import annotations

from typing import Any

import pytest

from firmware.cli import main
from firmware.config import load_config
from firmware.games.registry import GAMES, configured_options
from firmware.ui.context import GameContext


class Captured(Exception):
    """Raised by a stand-in for the heavy work, carrying the options the command handed it."""

    def __init__(self, options: Any) -> None:
        super().__init__("captured")
        self.options = options


def _options_used(monkeypatch, argv: list[str]) -> Any:
    """The game options the command ``argv`` plays, caught where it hands them to the math (``par``,
    ``simulate``), the kernel (``round``) or the renderer (``screenshot``)."""
    import firmware.kernel.round
    import firmware.kernel.simulate
    import firmware.math.par
    import firmware.ui.render

    def par_sheet(game_id, options, **kw):
        raise Captured(options)

    def simulate(game, options, rounds, **kw):
        raise Captured(options)

    def render(screen, size, game, *, page=0, config=None):
        raise Captured(GameContext.from_config(config, game).options)

    class Kernel:
        def __init__(self, game, options, **kw):
            raise Captured(options)

    monkeypatch.setattr(firmware.math.par, "par_sheet", par_sheet)
    monkeypatch.setattr(firmware.kernel.simulate, "simulate", simulate)
    monkeypatch.setattr(firmware.ui.render, "render", render)
    monkeypatch.setattr(firmware.kernel.round, "RoundKernel", Kernel)
    with pytest.raises(Captured) as caught:
        main(argv)
    return caught.value.options


def _commands(game: str, out: str) -> dict[str, list[str]]:
    return {"par": ["par", game], "simulate": ["simulate", game, "--rounds", "10"],
            "round": ["round", game, "--seed", "s"],
            "screenshot": ["screenshot", "table", "--game", game, "--out", out]}


@pytest.mark.parametrize("game", list(GAMES))
def test_every_command_plays_the_terminals_default_options(monkeypatch, tmp_path, game):
    terminal = configured_options(load_config(), game)                 # Terminal._kernel's options
    assert GameContext.from_config(load_config(), game).options == terminal   # and its screens'
    for name, argv in _commands(game, str(tmp_path / "shot.png")).items():
        assert _options_used(monkeypatch, argv) == terminal, name


def test_the_pools_and_the_six_card_bonus_are_those_of_the_terminal(monkeypatch, tmp_path):
    out = str(tmp_path / "shot.png")
    for game in ("baccarat-war", "blackjack-war", "holdem-war"):
        for argv in _commands(game, out).values():
            assert not _options_used(monkeypatch, argv).pool.enabled, argv
    for argv in _commands("split21-stud", out).values():
        assert not _options_used(monkeypatch, argv).jackpot.enabled, argv
    for argv in _commands("three-card-poker", out).values():
        assert not _options_used(monkeypatch, argv).six_card, argv


def test_config_and_option_choose_other_options_for_every_command(monkeypatch, tmp_path):
    cfg = tmp_path / "egm.toml"
    cfg.write_text("[games.options.baccarat-war]\npool.enabled = true\npool.dealer_ante = 10\n"
                   "[games.options.three-card-poker]\nsix_card = true\n")
    out = str(tmp_path / "shot.png")
    for game, check in (("baccarat-war", lambda o: o.pool.enabled and o.pool.dealer_ante == 10 and o.decks == 6),
                        ("three-card-poker", lambda o: o.six_card and o.pair_plus_pays.flush == 3)):
        option = "decks=6" if game == "baccarat-war" else "pair_plus_pays.flush=3"
        for name, argv in _commands(game, out).items():
            options = _options_used(monkeypatch, [*argv, "--config", str(cfg), "--option", option])
            assert check(options), (name, options)
