"""The RAM clear page: :class:`RamClear`.

The technician chooses why (the reason is logged with the clear), confirms, and the request goes
as ``ram-clear CLEAR REASON...``; the runner does the clear once the API accepts it.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.builders import RAM_CLEAR_REASONS
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg


class RamClear(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"reason": self.reason, "confirm": self.confirm}

    def reason(self, reason: str) -> None:
        """A reason chosen (a catalogue key of :data:`RAM_CLEAR_REASONS`): the confirmation."""
        if reason in RAM_CLEAR_REASONS:
            self.ctx.state.reason = str(reason)

    def confirm(self, _: object) -> None:
        s = self.ctx.state
        if s.page != "ram_clear" or s.reason is None or s.busy:
            return

        def cleared(_: Answer) -> None:
            self.ctx.state.reason = None
            self.ctx.say(msg("service.ram_clear.requested"), "good")

        self.ctx.ask(["ram-clear", "CLEAR", *msg(s.reason).split()], cleared)
