"""The service menu's controller: touches in, service requests out, the view drawn.

:class:`ServiceMenu` turns each :class:`~firmware.ui.service.actions.ServiceAction` (a touch
hit-tested on the frame on screen, a development key: ``keys``) into a change of page or hands it
to the part of the menu that handles it (``firmware.ui.service.flows``: the login, the pads, the
configuration editor, the lab hash, the page buttons, the RAM clear, the packages, the touch
calibration). The parts share a :class:`~firmware.ui.service.context.MenuContext`: the state the
builders draw, the link to the terminal (``link.TerminalLink``: every request goes through the
terminal's command queue and its service API) and the requests on their way. The menu itself owns
the navigation: opening a page (and asking for its data), paging a list, choosing a row, leaving
a pad or an editor, going back to the menu.

While the touch calibration runs, touches are raw: they go to the calibration, not to the buttons.

An app calls :meth:`ServiceMenu.step` once a frame (the answers that arrived, the frame's touches
and pygame events, the drawing).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

import pygame

from firmware.ui.input import tap as hit_test
from firmware.ui.layout import Scaler
from firmware.ui.money import Money
from firmware.ui.painter import Frame
from firmware.ui.service.actions import Handler, ServiceAction
from firmware.ui.service.builders import PAGE_BY_ID, MenuState, build
from firmware.ui.service.calibration import CalibrationRun
from firmware.ui.service.context import MenuContext, MenuPart
from firmware.ui.service.flows.calibration import CALIBRATION_IDLE_S, CalibrationFlow
from firmware.ui.service.flows.commands import PageCommands
from firmware.ui.service.flows.config import ConfigEditor
from firmware.ui.service.flows.keypad import Keypad
from firmware.ui.service.flows.login import Login
from firmware.ui.service.flows.packages import Packages
from firmware.ui.service.flows.ram_clear import RamClear
from firmware.ui.service.flows.software import SoftwareHash
from firmware.ui.service.keys import key_action
from firmware.ui.service.link import ServiceLink
from firmware.ui.service.screen import ServiceScreen
from firmware.ui.service.text import msg
from firmware.ui.service.view import ServiceView
from hal.events import DeviceEvent, Touch, TouchPhase

#: ``CALIBRATION_IDLE_S`` is the calibration's (``flows.calibration``), named here with the menu.
__all__ = ["CALIBRATION_IDLE_S", "ServiceMenu"]

log = logging.getLogger(__name__)


class ServiceMenu:
    """The service screens over one :class:`~firmware.ui.service.link.ServiceLink`."""

    def __init__(self, link: ServiceLink, *, money: Money | None = None, size: tuple[int, int] = (1920, 1080),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link = link
        self.ctx = MenuContext(link, money or Money())
        self.size = size
        self.screen = ServiceScreen()
        self.frame: Frame | None = None
        self.login = Login(self.ctx)
        self.software = SoftwareHash(self.ctx)
        self.config = ConfigEditor(self.ctx)
        self.calibration = CalibrationFlow(self.ctx, size=lambda: self.size, clock=clock)
        keypad = Keypad(self.ctx, send_pin=self.login.send_pin, send_seed=self.software.send_seed)
        parts: tuple[MenuPart, ...] = (self.login, self.software, self.config, self.calibration, keypad,
                                       PageCommands(self.ctx), RamClear(self.ctx), Packages(self.ctx))
        #: Action name -> what handles it: the navigation here, every other action in its part.
        self.handlers: dict[str, Handler] = {
            "open": self._open, "refresh": self._refresh, "menu": self._menu, "page": self._page,
            "select": self._select, "cancel": self._cancel,
        }
        for part in parts:
            for name, handler in part.handlers().items():
                if name in self.handlers:           # one would silently shadow the other
                    raise ValueError(f"two handlers for the service action {name!r}")
                self.handlers[name] = handler

    @property
    def state(self) -> MenuState:
        """What the screens show (a new one after the session ends)."""
        return self.ctx.state

    @property
    def calibrating(self) -> bool:
        """True while touches are raw (they go to the calibration run, not to the buttons)."""
        return self.calibration.active

    @property
    def run(self) -> CalibrationRun | None:
        """The calibration run collecting touches (None: none)."""
        return self.calibration.run

    # --- the frame ---------------------------------------------------------------------------------
    def poll(self) -> None:
        """Take the answers that arrived and the terminal's status; time a calibration out."""
        self.ctx.collect()
        self.calibration.poll()

    def view(self) -> ServiceView:
        self.state.calibration = self.calibration.view()
        return build(self.state)

    def draw(self, surface: pygame.Surface) -> Frame:
        self.size = surface.get_size()
        self.frame = self.screen.render(surface, self.view())
        return self.frame

    def step(self, device_events: Iterable[DeviceEvent], pygame_events: Iterable[pygame.event.Event],
             scaler: Scaler, surface: pygame.Surface) -> Frame:
        """One frame of the menu: the answers that arrived, this frame's touches and pygame events,
        the drawing (what an app calls once a frame)."""
        self.poll()
        for device_event in device_events:
            self.on_device_event(device_event, scaler)
        for event in pygame_events:
            self.on_pygame_event(event, scaler)
        self.end_frame()
        return self.draw(surface)

    def end_frame(self) -> None:
        """The frame's input has been handled (a pending flush is over)."""
        self.calibration.flush = False

    def leave(self) -> None:
        """The menu is closed (the key turned off): the session logged out, a calibration cancelled."""
        self.calibration.leave()
        if self.state.role:
            self.link.service(["logout"])

    # --- input ---------------------------------------------------------------------------------------
    def on_device_event(self, event: DeviceEvent, scaler: Scaler) -> None:
        if not isinstance(event, Touch) or event.phase is not TouchPhase.DOWN or self.calibration.flush:
            return
        if self.calibration.active:
            self.calibration.touch(event.x, event.y)
            return
        self._act(hit_test(self.frame, scaler, event.x, event.y))

    def on_pygame_event(self, event: pygame.event.Event, scaler: Scaler) -> None:
        if self.calibration.active:
            if event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE:
                self.calibration.cancel(msg("service.calibration.cancelled"))
            return
        if event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self._act(hit_test(self.frame, scaler, *event.pos))
        elif event.type == pygame.FINGERDOWN:
            self._act(hit_test(self.frame, scaler, event.x * scaler.width, event.y * scaler.height))
        elif event.type == pygame.KEYDOWN:
            self._act(key_action(self.state, event.key))

    def _act(self, action: object) -> None:
        if isinstance(action, ServiceAction):
            self.dispatch(action)

    def dispatch(self, action: ServiceAction) -> None:
        handler = self.handlers.get(action.name)
        if handler is None:
            log.debug("no handler for %s", action)
            return
        handler(action.arg)

    # --- navigation ----------------------------------------------------------------------------------
    def _open(self, page: str) -> None:
        s = self.state
        spec = PAGE_BY_ID.get(str(page))
        if spec is None or not s.can(spec.needs):
            self.ctx.say(msg("service.not_allowed"), "alert")
            return
        s.page = spec.page
        s.list_page, s.selected, s.test = 0, 0, None
        s.option = s.option_value = s.reason = None
        s.answers.pop(spec.page, None)
        self.ctx.say("")
        self.ctx.load()

    def _refresh(self, _: object) -> None:
        if not self.state.busy:
            self.ctx.load()

    def _menu(self, _: object) -> None:
        if self.state.role is None:
            return
        s = self.state
        s.page, s.test, s.option, s.option_value, s.reason = "menu", None, None, None, None
        s.answers.pop("software_hash", None)
        self.ctx.say("")

    def _page(self, delta: int) -> None:
        """The next / previous page of a long list, if the screen offers one (its pager)."""
        wanted = "button.next" if int(delta) > 0 else "button.prev"
        if self.frame is not None and not any(h.name == wanted for h in self.frame.hits):
            return
        self.state.list_page = max(0, self.state.list_page + int(delta))

    def _select(self, index: int) -> None:
        """A row of a list: an option to edit (configuration), else the round or row shown."""
        if self.state.page == "config":
            self.config.select(int(index))
        else:
            self.state.selected = int(index)

    def _cancel(self, _: object) -> None:
        """Leave the pad, the editor or the confirmation on screen."""
        s = self.state
        if s.page == "pin":
            s.page, s.pin, s.pin_role = "login", "", None
        elif s.page == "seed":
            self.software.close_pad()
        elif s.page == "config":
            self.config.close()
        elif s.page == "ram_clear":
            s.reason = None
        self.ctx.say("")
