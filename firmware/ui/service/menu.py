"""The service menu's controller: touches in, service requests out, the view drawn.

:class:`ServiceMenu` keeps a :class:`~firmware.ui.service.builders.MenuState`, turns each
:class:`~firmware.ui.service.actions.ServiceAction` (a touch hit-tested on the frame on screen, a
key) into a change of page or a request to the terminal's service API, and takes the answers as
they arrive. Every request goes through the terminal's command queue (:class:`TerminalLink`: the
``service`` command, on the terminal's thread, exactly as ``egm simctl service ...``), so the API
checks the role and the cabinet state and logs it; the screens never read critical memory
themselves. What the API refuses is shown as it says it (a wrong PIN, a lockout, a refused
option), and after a refusal the screens ask ``service session`` (not logged) so a timed-out
session goes back to the login.

The touch calibration runs here too: ``touch_calibration begin`` (raw touches), the targets of a
:class:`~firmware.ui.service.calibration.CalibrationRun` fed with the raw touch-downs, then
``commit`` (stored in critical memory, applied to the driver) or ``cancel``.

An app calls :meth:`ServiceMenu.poll` once a frame, hands it the touches and pygame events of the
frame (:meth:`on_device_event`, :meth:`on_pygame_event`), and draws with :meth:`draw`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import pygame

from firmware.ui.input import tap as hit_test
from firmware.ui.layout import Scaler
from firmware.ui.money import Money
from firmware.ui.painter import Frame
from firmware.ui.service.actions import ServiceAction
from firmware.ui.service.builders import (
    HASH_ALGORITHMS,
    MAX_PIN,
    MAX_SEED,
    PAGE_BY_ID,
    RAM_CLEAR_REASONS,
    MenuState,
    Refused,
    build,
    role_label,
)
from firmware.ui.service.calibration import CalibrationRun
from firmware.ui.service.options import flatten, option_specs
from firmware.ui.service.screen import ServiceScreen
from firmware.ui.service.text import msg
from firmware.ui.service.view import ServiceView
from hal.events import DeviceEvent, Touch, TouchPhase

log = logging.getLogger(__name__)

#: Seconds without a touch after which a calibration run gives up (the old calibration stays).
CALIBRATION_IDLE_S = 60.0

KEY_DIGITS = {getattr(pygame, f"K_{d}"): d for d in "0123456789"}
KEY_HEX = {getattr(pygame, f"K_{c.lower()}"): c for c in "ABCDEF"}


class TerminalLink:
    """The service screens' way to a :class:`~firmware.cabinet.terminal.Terminal`: its command
    queue (answers arrive in futures) and its published status."""

    def __init__(self, terminal: Any) -> None:
        self.terminal = terminal

    def service(self, words: Sequence[str]) -> Future:
        return self.terminal.submit("service", words=list(words))

    def calibration(self, step: str, **args: Any) -> Future:
        return self.terminal.submit("touch_calibration", step=step, **args)

    def status(self) -> Mapping[str, Any]:
        return self.terminal.snapshot or {}


class ServiceMenu:
    """The service screens over one :class:`TerminalLink` (or anything with its three methods)."""

    def __init__(self, link: Any, *, money: Money | None = None, size: tuple[int, int] = (1920, 1080),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link = link
        self.state = MenuState(money=money or Money())
        self.size = size
        self.clock = clock
        self.screen = ServiceScreen()
        self.frame: Frame | None = None
        self.pending: list[tuple[str, Future, Callable[[Any], None], Callable[[str], None] | None]] = []
        self.run: CalibrationRun | None = None
        self._calibrating = ""          #: "", starting, collecting, saving, cancelling
        self._last_touch = 0.0
        self._flush = False             #: drop the touches of this frame (made before a mode change)

    # --- the frame ---------------------------------------------------------------------------------
    @property
    def calibrating(self) -> bool:
        """True while touches are raw (they go to the calibration run, not to the buttons)."""
        return bool(self._calibrating)

    def poll(self) -> None:
        """Take the answers that arrived and the terminal's status; time a calibration out."""
        self.state.status = self.link.status()
        current, self.pending = self.pending, []
        still = []
        for item in current:
            what, future, on_ok, on_error = item
            if not future.done():
                still.append(item)
                continue
            error = future.exception()
            if error is None:
                on_ok(future.result())
            else:
                log.info("service %s refused: %s", what, error)
                text = str(error).splitlines()[0] if str(error) else type(error).__name__
                if on_error is not None:
                    on_error(text)
                else:
                    self._refused(text)
        self.pending = still + self.pending          # callbacks may have asked again
        self.state.busy = any(what != "session" for what, *_ in self.pending)
        if (self._calibrating == "collecting" and self.clock() - self._last_touch > CALIBRATION_IDLE_S):
            self._cancel_calibration(msg("service.calibration.idle"))

    def view(self) -> ServiceView:
        if self.run is not None and self._calibrating in ("collecting", "saving"):
            self.state.calibration = self.run.view(saving=self._calibrating == "saving")
        else:
            self.state.calibration = None
        return build(self.state)

    def draw(self, surface: pygame.Surface) -> Frame:
        self.size = surface.get_size()
        self.frame = self.screen.render(surface, self.view())
        return self.frame

    # --- input ---------------------------------------------------------------------------------------
    def on_device_event(self, event: DeviceEvent, scaler: Scaler) -> None:
        if not isinstance(event, Touch) or event.phase is not TouchPhase.DOWN:
            return
        if self._flush:
            return
        if self._calibrating:
            if self._calibrating == "collecting" and self.run is not None:
                self._calibration_touch(event.x, event.y)
            return
        action = hit_test(self.frame, scaler, event.x, event.y)
        if isinstance(action, ServiceAction):
            self.dispatch(action)

    def on_pygame_event(self, event: pygame.event.Event, scaler: Scaler) -> None:
        if self._calibrating:
            if event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE:
                self._cancel_calibration(msg("service.calibration.cancelled"))
            return
        action: Any = None
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            action = hit_test(self.frame, scaler, *event.pos)
        elif event.type == pygame.FINGERDOWN:
            action = hit_test(self.frame, scaler, event.x * scaler.width, event.y * scaler.height)
        elif event.type == pygame.KEYDOWN:
            action = self._key(event.key)
        if isinstance(action, ServiceAction):
            self.dispatch(action)

    def _key(self, key: int) -> ServiceAction | None:
        page = self.state.page
        if page in ("pin", "seed"):
            if key in KEY_DIGITS:
                return ServiceAction("digit", KEY_DIGITS[key])
            if page == "seed" and key in KEY_HEX:
                return ServiceAction("digit", KEY_HEX[key])
            if key == pygame.K_BACKSPACE:
                return ServiceAction("erase")
            if key in (pygame.K_RETURN, pygame.K_KP_ENTER):
                return ServiceAction("enter")
        if key == pygame.K_ESCAPE:
            if page in ("pin", "seed") or self.state.option or self.state.reason:
                return ServiceAction("cancel")
            return ServiceAction("menu") if self.state.role else None
        if key in (pygame.K_LEFT, pygame.K_PAGEUP):
            return ServiceAction("page", -1)
        if key in (pygame.K_RIGHT, pygame.K_PAGEDOWN):
            return ServiceAction("page", 1)
        return None

    def end_frame(self) -> None:
        """The frame's input has been handled (a pending flush is over)."""
        self._flush = False

    def step(self, device_events: Iterable[DeviceEvent], pygame_events: Iterable[pygame.event.Event],
             scaler: Scaler, surface: pygame.Surface) -> Frame:
        """One frame of the menu: the answers that arrived, this frame's touches and pygame events,
        the drawing (what an app calls once a frame)."""
        self.poll()
        for event in device_events:
            self.on_device_event(event, scaler)
        for event in pygame_events:
            self.on_pygame_event(event, scaler)
        self.end_frame()
        return self.draw(surface)

    def leave(self) -> None:
        """The menu is closed (the key turned off): the session logged out, a calibration cancelled."""
        if self._calibrating:
            self.link.calibration("cancel")
        if self.state.role:
            self.link.service(["logout"])

    # --- requests ------------------------------------------------------------------------------------
    def ask(self, words: Sequence[str], on_ok: Callable[[Any], None],
            on_error: Callable[[str], None] | None = None) -> None:
        """One service request; ``on_ok(answer)`` or ``on_error(reason)`` when it is answered."""
        words = [str(w) for w in words]
        self.pending.append((" ".join(words[:2]), self.link.service(words), on_ok, on_error))
        self.state.busy = True

    def say(self, message: str, tone: str = "normal") -> None:
        self.state.message, self.state.message_tone = message, tone

    def _refused(self, reason: str) -> None:
        self.say(msg("service.refused", reason=reason), "alert")
        if self.state.role is not None:
            self.ask(["session"], self._session_checked, lambda _: None)

    def _session_checked(self, answer: Any) -> None:
        if isinstance(answer, Mapping) and answer.get("role") != self.state.role:
            message = self.state.message
            self._to_login()
            self.say(message, "alert")

    def _to_login(self) -> None:
        money = self.state.money
        status = self.state.status
        self.state = MenuState(money=money, status=status)

    # --- actions -------------------------------------------------------------------------------------
    def dispatch(self, action: ServiceAction) -> None:
        handler = getattr(self, f"_do_{action.name}", None)
        if handler is None:
            log.debug("no handler for %s", action)
            return
        handler(action.arg)

    def _do_role(self, role: Any) -> None:
        s = self.state
        s.pin_role, s.pin, s.page = str(role), "", "pin"
        self.say("")

    def _do_digit(self, digit: Any) -> None:
        s = self.state
        d = str(digit)
        if s.page == "pin" and d.isdigit() and len(s.pin) < MAX_PIN:
            s.pin += d
        elif s.page == "seed" and len(d) == 1 and d in "0123456789ABCDEF" and len(s.seed) < MAX_SEED:
            s.seed += d

    def _do_erase(self, _: Any) -> None:
        s = self.state
        if s.page == "pin":
            s.pin = s.pin[:-1]
        elif s.page == "seed":
            s.seed = s.seed[:-1]

    def _do_clear_entry(self, _: Any) -> None:
        if self.state.page == "pin":
            self.state.pin = ""
        elif self.state.page == "seed":
            self.state.seed = ""

    def _do_enter(self, _: Any) -> None:
        s = self.state
        if s.busy:
            return
        if s.page == "pin" and s.pin_role:
            if not 4 <= len(s.pin) <= MAX_PIN:
                self.say(msg("service.login.pin_short"), "alert")
                return
            role, pin = s.pin_role, s.pin
            s.pin = ""
            self.ask(["login", role, pin], self._logged_in, self._login_refused)
        elif s.page == "seed" and s.algorithm:
            if len(s.seed) % 2:
                self.say(msg("service.software.seed_odd"), "alert")
                return
            words = ["software", "hash", s.algorithm] + ([s.seed] if s.seed else [])
            self.ask(words, self._hashed)

    def _logged_in(self, answer: Any) -> None:
        s = self.state
        s.role = str(answer.get("role"))
        s.allowed = tuple(answer.get("allowed", ()))
        s.page, s.pin_role = "menu", None
        if answer.get("warning"):
            self.say(msg("service.login.warning", warning=answer["warning"]), "warn")
        else:
            self.say(msg("service.login.logged_in", role=role_label(s.role)), "good")

    def _login_refused(self, reason: str) -> None:
        self.state.pin = ""
        self.say(msg("service.refused", reason=reason), "alert")

    def _do_cancel(self, _: Any) -> None:
        s = self.state
        if s.page == "pin":
            s.page, s.pin, s.pin_role = "login", "", None
        elif s.page == "seed":
            s.page, s.seed, s.algorithm = "software", "", None
        elif s.page == "config":
            s.option = s.option_value = None
        elif s.page == "ram_clear":
            s.reason = None
        self.say("")

    def _do_open(self, page: Any) -> None:
        s = self.state
        spec = PAGE_BY_ID.get(str(page))
        if spec is None or not s.can(spec.needs):
            self.say(msg("service.not_allowed"), "alert")
            return
        s.page = spec.page
        s.list_page, s.selected, s.test = 0, 0, None
        s.option = s.option_value = s.reason = None
        s.answers.pop(spec.page, None)
        self.say("")
        self._load()

    def _load(self) -> None:
        s = self.state
        spec = PAGE_BY_ID.get(s.page)
        if spec is None or not spec.request:
            return
        page = spec.page

        def keep(answer: Any, page: str = page) -> None:
            self.state.answers[page] = answer

        def refused(reason: str, page: str = page) -> None:
            self.state.answers[page] = Refused(reason)
            self._refused(reason)

        self.ask(spec.request, keep, refused)

    def _do_refresh(self, _: Any) -> None:
        if not self.state.busy:
            self._load()

    def _do_menu(self, _: Any) -> None:
        if self.state.role is None:
            return
        s = self.state
        s.page, s.test, s.option, s.option_value, s.reason = "menu", None, None, None, None
        s.answers.pop("software_hash", None)
        self.say("")

    def _do_logout(self, _: Any) -> None:
        def out(_: Any) -> None:
            self._to_login()
            self.say(msg("service.login.logged_out"), "normal")

        def gone(reason: str) -> None:            # already ended (a time-out): the login again
            self._to_login()
            self.say(msg("service.refused", reason=reason), "alert")

        self.ask(["logout"], out, gone)

    def _do_page(self, delta: Any) -> None:
        """The next / previous page of a long list, if the screen offers one (its pager)."""
        wanted = "button.next" if int(delta) > 0 else "button.prev"
        if self.frame is not None and not any(h.name == wanted for h in self.frame.hits):
            return
        self.state.list_page = max(0, self.state.list_page + int(delta))

    def _do_select(self, index: Any) -> None:
        s = self.state
        i = int(index)
        if s.page == "config":
            doc = s.answers.get("config") or {}
            games = doc.get("games", {})
            game = s.config_game if s.config_game in games else next(iter(games), None)
            if game is None:
                return
            keys = list(flatten(dict(games[game].get("options", {}))))
            if 0 <= i < len(keys):
                s.config_game, s.option, s.option_value = game, keys[i], None
        else:
            s.selected = i

    def _do_run(self, words: Any) -> None:
        if self.state.busy:
            return
        words = tuple(str(w) for w in words)
        name = "test." + "_".join(words[1:3]) if words[0] == "test" else words[0]

        def shown(answer: Any) -> None:
            self.state.test = (name, answer)
            self.say(msg("service.done", action=" ".join(words)), "good")

        self.ask(words, shown)

    def _do_game(self, game: Any) -> None:
        s = self.state
        s.config_game, s.option, s.option_value, s.list_page = str(game), None, None, 0

    def _current_option(self) -> tuple[str, str, str] | None:
        s = self.state
        doc = s.answers.get("config") or {}
        games = doc.get("games", {})
        game = s.config_game if s.config_game in games else next(iter(games), None)
        if game is None or s.option is None:
            return None
        current = flatten(dict(games[game].get("options", {}))).get(s.option)
        return None if current is None else (game, s.option, current)

    def _do_choice(self, value: Any) -> None:
        if self._current_option() is not None:
            self.state.option_value = str(value)

    def _do_step(self, steps: Any) -> None:
        found = self._current_option()
        if found is None:
            return
        game, option, current = found
        spec = option_specs(game).get(option)
        if spec is None or spec.kind != "number":
            return
        base = self.state.option_value if self.state.option_value is not None else current
        self.state.option_value = spec.stepped(base, int(steps))

    def _do_apply(self, _: Any) -> None:
        found = self._current_option()
        s = self.state
        if found is None or s.option_value is None or s.busy:
            return
        game, option, current = found
        if s.option_value == current:
            return
        change = f"{option}={s.option_value}"

        def applied(answer: Any) -> None:
            self.state.option = self.state.option_value = None
            self.say(msg("service.config.applied", game=str(answer.get("game", game)), change=change), "good")
            self.state.answers.pop("config", None)
            self._load()

        self.ask(["config", "set", game, change], applied)

    def _do_reason(self, reason: Any) -> None:
        if reason in RAM_CLEAR_REASONS:
            self.state.reason = str(reason)

    def _do_confirm(self, _: Any) -> None:
        s = self.state
        if s.page != "ram_clear" or s.reason is None or s.busy:
            return
        words = ["ram-clear", "CLEAR", *msg(s.reason).split()]

        def cleared(answer: Any) -> None:
            self.state.reason = None
            self.say(msg("service.ram_clear.requested"), "good")

        self.ask(words, cleared)

    def _do_algorithm(self, algorithm: Any) -> None:
        s = self.state
        if algorithm not in HASH_ALGORITHMS or s.busy:
            return
        if str(algorithm).startswith("hmac"):
            s.page, s.algorithm, s.seed = "seed", str(algorithm), ""
            return
        self.ask(["software", "hash", str(algorithm)], self._hashed)

    def _hashed(self, answer: Any) -> None:
        s = self.state
        s.answers["software_hash"] = answer
        s.page, s.algorithm, s.seed = "software", None, ""
        self.say(msg("service.software.hashed", algorithm=str(answer.get("algorithm", "-"))), "good")

    def _do_package(self, what: Any) -> None:
        verb, name = what
        if verb not in ("approve", "reject") or self.state.busy:
            return

        def done(answer: Any) -> None:
            self.say(msg("service.packages.approved" if verb == "approve" else "service.packages.rejected",
                         name=name), "good")
            self.state.selected = 0
            self._load()

        self.ask(["package", verb, str(name)], done)

    # --- touch calibration -------------------------------------------------------------------------
    def _do_calibrate(self, _: Any) -> None:
        if self._calibrating or self.state.busy:
            return
        width, height = self.size
        self._calibrating = "starting"
        self.say("")

        def started(_: Any) -> None:
            self.run = CalibrationRun(width, height)
            self._calibrating = "collecting"
            self._last_touch = self.clock()
            self._flush = True                  # touches of this frame were made before raw mode

        def refused(reason: str) -> None:
            self._calibrating = ""
            self._refused(reason)

        self.pending.append(("touch_calibration begin", self.link.calibration("begin"), started, refused))

    def _calibration_touch(self, x: float, y: float) -> None:
        run = self.run
        assert run is not None
        self._last_touch = self.clock()
        phase = run.touch(x, y)
        if phase == "done":
            self._save_calibration()
        elif phase == "failed":
            self._cancel_calibration(msg("service.calibration.failed", attempts=run.attempts), "alert")

    def _save_calibration(self) -> None:
        run = self.run
        assert run is not None and run.calibration is not None
        self._calibrating = "saving"

        def saved(answer: Any) -> None:
            self._calibrating = ""
            self._flush = True                  # touches of this frame were raw
            cal = answer.get("calibration", {})
            self.state.test = ("calibration", {"residual_px": cal.get("residual_px"),
                                               "check_px": answer.get("check_px"),
                                               "screen": f"{cal.get('width')} x {cal.get('height')}"})
            self.say(msg("service.calibration.saved", error=f"{run.check_error or 0:.1f}"), "good")
            self.run = None

        def refused(reason: str) -> None:
            self._cancel_calibration(msg("service.refused", reason=reason), "alert")

        self.pending.append(("touch_calibration commit",
                             self.link.calibration("commit", calibration=run.calibration.to_json(),
                                                   check_px=run.check_error),
                             saved, refused))

    def _cancel_calibration(self, message: str, tone: str = "alert") -> None:
        self._calibrating = "cancelling"
        self.run = None

        def restored(_: Any) -> None:
            self._calibrating = ""
            self._flush = True
            self.say(message, tone)

        def failed(reason: str) -> None:
            self._calibrating = ""
            self._flush = True
            self.say(msg("service.refused", reason=reason), "alert")

        self.pending.append(("touch_calibration cancel", self.link.calibration("cancel"), restored, failed))

