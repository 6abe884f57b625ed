"""The packages page: :class:`Packages`.

A waiting game package is approved (``package approve NAME``: verified again and installed) or
rejected; the list is asked again afterwards.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg


class Packages(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"package": self.decide}

    def decide(self, what: tuple[str, str]) -> None:
        """``what``: (``approve`` or ``reject``, the package's name)."""
        verb, name = what
        if verb not in ("approve", "reject") or self.ctx.state.busy:
            return

        def done(_: Answer) -> None:
            self.ctx.say(msg("service.packages.approved" if verb == "approve" else "service.packages.rejected",
                             name=name), "good")
            self.ctx.state.selected = 0
            self.ctx.load()

        self.ctx.ask(["package", verb, str(name)], done)
