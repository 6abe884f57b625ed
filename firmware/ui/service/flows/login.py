"""Logging in and out: :class:`Login`.

A role is chosen (the PIN pad follows), its PIN sent as ``service login ROLE PIN``; the answer
says what the role may do (``allowed``, which the menu lists) and may carry a warning (a
development PIN). A refused PIN is cleared and the refusal shown; logging out, or finding the
session already ended, goes back to the login.
"""

from __future__ import annotations

from firmware.ui.service.actions import Handler
from firmware.ui.service.builders import MAX_PIN, role_label
from firmware.ui.service.context import MenuPart
from firmware.ui.service.link import Answer
from firmware.ui.service.text import msg


class Login(MenuPart):
    def handlers(self) -> dict[str, Handler]:
        return {"role": self.choose, "logout": self.logout}

    def choose(self, role: str) -> None:
        """The role who logs in: its PIN pad."""
        s = self.ctx.state
        s.pin_role, s.pin, s.page = str(role), "", "pin"
        self.ctx.say("")

    def send_pin(self) -> None:
        """The PIN typed on the pad, if it is long enough."""
        s = self.ctx.state
        if not 4 <= len(s.pin) <= MAX_PIN:
            self.ctx.say(msg("service.login.pin_short"), "alert")
            return
        role, pin = s.pin_role, s.pin
        s.pin = ""
        self.ctx.ask(["login", role, pin], self._logged_in, self._refused)

    def _logged_in(self, answer: Answer) -> None:
        s = self.ctx.state
        s.role = str(answer.get("role"))
        s.allowed = tuple(answer.get("allowed", ()))
        s.page, s.pin_role = "menu", None
        if answer.get("warning"):
            self.ctx.say(msg("service.login.warning", warning=answer["warning"]), "warn")
        else:
            self.ctx.say(msg("service.login.logged_in", role=role_label(s.role)), "good")

    def _refused(self, reason: str) -> None:
        self.ctx.state.pin = ""
        self.ctx.say(msg("service.refused", reason=reason), "alert")

    def logout(self, _: object) -> None:
        def out(_: Answer) -> None:
            self.ctx.to_login()
            self.ctx.say(msg("service.login.logged_out"), "normal")

        def gone(reason: str) -> None:            # already ended (a time-out): the login again
            self.ctx.to_login()
            self.ctx.say(msg("service.refused", reason=reason), "alert")

        self.ctx.ask(["logout"], out, gone)
