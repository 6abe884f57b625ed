"""The PIN pad and the seed pad: :class:`Keypad`.

The PIN pad (page ``pin``) takes decimal digits, at most :data:`~firmware.ui.service.builders.MAX_PIN`;
the seed pad (page ``seed``) hex digits, at most :data:`~firmware.ui.service.builders.MAX_SEED`.
ENTER hands the entry to whoever asked for it: the login (the PIN) or the lab hash (the seed).
"""

from __future__ import annotations

from collections.abc import Callable

from firmware.ui.service.actions import Handler
from firmware.ui.service.builders import HEX_DIGITS, MAX_PIN, MAX_SEED
from firmware.ui.service.context import MenuContext, MenuPart


class Keypad(MenuPart):
    def __init__(self, ctx: MenuContext, *, send_pin: Callable[[], None], send_seed: Callable[[], None]) -> None:
        super().__init__(ctx)
        self.send_pin = send_pin
        self.send_seed = send_seed

    def handlers(self) -> dict[str, Handler]:
        return {"digit": self.digit, "erase": self.erase, "clear_entry": self.clear, "enter": self.enter}

    def digit(self, digit: str) -> None:
        s = self.ctx.state
        d = str(digit)
        if s.page == "pin" and d.isdigit() and len(s.pin) < MAX_PIN:
            s.pin += d
        elif s.page == "seed" and len(d) == 1 and d in HEX_DIGITS and len(s.seed) < MAX_SEED:
            s.seed += d

    def erase(self, _: object) -> None:
        s = self.ctx.state
        if s.page == "pin":
            s.pin = s.pin[:-1]
        elif s.page == "seed":
            s.seed = s.seed[:-1]

    def clear(self, _: object) -> None:
        s = self.ctx.state
        if s.page == "pin":
            s.pin = ""
        elif s.page == "seed":
            s.seed = ""

    def enter(self, _: object) -> None:
        s = self.ctx.state
        if s.busy:
            return
        if s.page == "pin" and s.pin_role:
            self.send_pin()
        elif s.page == "seed" and s.algorithm:
            self.send_seed()
