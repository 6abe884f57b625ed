"""What every part of the service menu shares: :class:`MenuContext`.

It owns the :class:`~firmware.ui.service.builders.MenuState` the screens show (replaced whole when
the session ends), the link to the terminal and the requests on their way. A part asks with
:meth:`MenuContext.ask` and is called back with the answer, or with the refusal's first line, when
:meth:`MenuContext.collect` (once a frame) finds it answered. What the API refuses is shown as it
says it (a wrong PIN, a lockout, a refused option); after a refusal no part handles itself, the
context asks ``service session`` (not logged), so a timed-out session goes back to the login.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from firmware.ui.money import Money
from firmware.ui.service.actions import Handler
from firmware.ui.service.builders import PAGE_BY_ID, MenuState, Refused
from firmware.ui.service.link import Answer, ServiceLink
from firmware.ui.service.text import msg

log = logging.getLogger(__name__)

OnAnswer = Callable[[Answer], None]
OnRefusal = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Request:
    """A request on its way: what it is (for the log), its future, and who takes the outcome
    (``on_error`` None: the context shows the refusal)."""

    what: str
    future: Future[Answer]
    on_ok: OnAnswer
    on_error: OnRefusal | None


class MenuContext:
    """The menu's state, its link, and its requests on their way."""

    def __init__(self, link: ServiceLink, money: Money) -> None:
        self.link = link
        self.state = MenuState(money=money)
        self.pending: list[Request] = []

    def ask(self, words: Sequence[object], on_ok: OnAnswer, on_error: OnRefusal | None = None) -> None:
        """One service request; ``on_ok(answer)`` or ``on_error(reason)`` when it is answered."""
        sent = [str(w) for w in words]
        self.send(" ".join(sent[:2]), self.link.service(sent), on_ok, on_error)
        self.state.busy = True

    def send(self, what: str, future: Future[Answer], on_ok: OnAnswer, on_error: OnRefusal | None) -> None:
        """Wait for a request made on the link (the calibration's steps: they do not make the
        menu busy)."""
        self.pending.append(Request(what, future, on_ok, on_error))

    def collect(self) -> None:
        """Take the terminal's status and the answers that arrived."""
        self.state.status = self.link.status()
        current, self.pending = self.pending, []
        still = []
        for request in current:
            if not request.future.done():
                still.append(request)
                continue
            error = request.future.exception()
            if error is None:
                request.on_ok(request.future.result())
            else:
                log.info("service %s refused: %s", request.what, error)
                text = str(error).splitlines()[0] if str(error) else type(error).__name__
                (request.on_error or self.refused)(text)
        self.pending = still + self.pending          # callbacks may have asked again
        self.state.busy = any(r.what != "session" for r in self.pending)

    def say(self, message: str, tone: str = "normal") -> None:
        self.state.message, self.state.message_tone = message, tone

    def refused(self, reason: str) -> None:
        """A refusal shown as the API said it; then is the session still on?"""
        self.say(msg("service.refused", reason=reason), "alert")
        if self.state.role is not None:
            self.ask(["session"], self._session_checked, lambda _: None)

    def _session_checked(self, answer: Answer) -> None:
        if isinstance(answer, Mapping) and answer.get("role") != self.state.role:
            message = self.state.message
            self.to_login()
            self.say(message, "alert")

    def to_login(self) -> None:
        """The session is over: a fresh state on the login page (money and status kept)."""
        self.state = MenuState(money=self.state.money, status=self.state.status)

    def load(self) -> None:
        """Ask for the data of the page on screen (if it shows any); a refusal is kept as its
        answer, so the page says why instead of waiting."""
        spec = PAGE_BY_ID.get(self.state.page)
        if spec is None or not spec.request:
            return
        page = spec.page

        def keep(answer: Answer) -> None:
            self.state.answers[page] = answer

        def refused(reason: str) -> None:
            self.state.answers[page] = Refused(reason)
            self.refused(reason)

        self.ask(spec.request, keep, refused)


class MenuPart(ABC):
    """A part of the menu (``firmware.ui.service.flows``): it works on the shared context and
    names the actions it handles."""

    def __init__(self, ctx: MenuContext) -> None:
        self.ctx = ctx

    @abstractmethod
    def handlers(self) -> dict[str, Handler]:
        """Action name -> the method that handles it."""
