"""The configuration page's editor: :class:`ConfigEditor`.

``config show`` lists every game's options; the technician picks a game, a row (an option), a
value (a choice, or steps of a numeric option within its bounds) and applies it as ``config set
GAME KEY=VALUE``, which the API checks and stores. The page's data is asked again after a change.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.options import flatten, option_specs
from firmware.ui.service.text import msg


class ConfigEditor(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"game": self.game, "choice": self.choice, "step": self.step, "apply": self.apply}

    def _game(self) -> tuple[str | None, Answer]:
        """The game shown (the one chosen, else the first) and the games of ``config show``."""
        s = self.ctx.state
        doc = s.answer("config") or {}
        games = doc.get("games", {})
        return (s.config_game if s.config_game in games else next(iter(games), None)), games

    def game(self, game: str) -> None:
        s = self.ctx.state
        s.config_game, s.option, s.option_value, s.list_page = str(game), None, None, 0

    def select(self, index: int) -> None:
        """The option of row ``index`` of the game shown: its editor."""
        game, games = self._game()
        if game is None:
            return
        keys = list(flatten(dict(games[game].get("options", {}))))
        if 0 <= index < len(keys):
            s = self.ctx.state
            s.config_game, s.option, s.option_value = game, keys[index], None

    def close(self) -> None:
        """No option being edited (the game's list again)."""
        s = self.ctx.state
        s.option = s.option_value = None

    def _current_option(self) -> tuple[str, str, str] | None:
        """The option being edited: (game, dotted key, value in force)."""
        s = self.ctx.state
        game, games = self._game()
        if game is None or s.option is None:
            return None
        current = flatten(dict(games[game].get("options", {}))).get(s.option)
        return None if current is None else (game, s.option, current)

    def choice(self, value: str) -> None:
        if self._current_option() is not None:
            self.ctx.state.option_value = str(value)

    def step(self, steps: int) -> None:
        found = self._current_option()
        if found is None:
            return
        game, option, current = found
        spec = option_specs(game).get(option)
        if spec is None or spec.kind != "number":
            return
        s = self.ctx.state
        base = s.option_value if s.option_value is not None else current
        s.option_value = spec.stepped(base, int(steps))

    def apply(self, _: object) -> None:
        found = self._current_option()
        s = self.ctx.state
        if found is None or s.option_value is None or s.busy:
            return
        game, option, current = found
        if s.option_value == current:
            return
        change = f"{option}={s.option_value}"

        def applied(answer: Answer) -> None:
            self.close()
            self.ctx.say(msg("service.config.applied", game=str(answer.get("game", game)), change=change), "good")
            self.ctx.state.answers.pop("config", None)
            self.ctx.load()

        self.ctx.ask(["config", "set", game, change], applied)
