"""The pages' one-request buttons: :class:`PageCommands`.

A device test, a handpay or call cleared, clearing a tilt, the demo's start, play and stop: each
button carries the words of one service request. Its answer is kept as the page's last test
result (shown in its panel) and the request named in the message line.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg


class PageCommands(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"run": self.run}

    def run(self, words: tuple[str, ...]) -> None:
        if self.ctx.state.busy:
            return
        words = tuple(str(w) for w in words)
        name = "test." + "_".join(words[1:3]) if words[0] == "test" else words[0]

        def shown(answer: Answer) -> None:
            self.ctx.state.test = (name, answer)
            self.ctx.say(msg("service.done", action=" ".join(words)), "good")

        self.ctx.ask(words, shown)
