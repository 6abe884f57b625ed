"""The app: the screens on a running :class:`~firmware.cabinet.terminal.Terminal`.

:class:`UiApp` drives the terminal only through its public commands (``submit``: ``play`` with the
wagers on the table, ``cashout``, ``retry_ticket``, ``game``, ``decide``) and reads only its
published ``snapshot`` (``status()``) and ``last_record``, so it works the same whether it steps
the terminal itself (``drive_terminal=True``: tests, and a single-threaded development loop) or
the terminal runs on its own thread (the cabinet). One :meth:`UiApp.step` is one frame: the
terminal's step (when driven), finished commands, a new round record (its playback starts), this
frame's input (touches and deck buttons the terminal hands over, ``Terminal.connect_screens``;
pygame events), the playback clock, then the drawing, the lab panel over it while the terminal
shows a lab prompt (``firmware.ui.lab``), and the screenshots asked for meanwhile
(``firmware.ui.capture``: the ``screenshot`` op waits for the next frame); it returns the drawn
:class:`~firmware.ui.painter.Frame`.
:meth:`UiApp.run` is the pygame loop around it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygame

from firmware.errors import EgmError
from firmware.kernel.limits import validate_wagers
from firmware.ui import input as ui_input
from firmware.ui.actions import UiAction
from firmware.ui.betting import BetSlip, SlipRefused
from firmware.ui.builders import BETTING_STATES, attract_view, select_view, table_view
from firmware.ui.capture import FrameGrab, Grab, grab
from firmware.ui.context import GameContext
from firmware.ui.games import NoScreenError, game_ui, has_screens
from firmware.ui.games.base import GameUi, doc_buttons
from firmware.ui.lab import LabPanel
from firmware.ui.layout import Scaler
from firmware.ui.livetable.station import StationScreen, station_view, table_betting
from firmware.ui.messages import text
from firmware.ui.money import Money
from firmware.ui.painter import Frame
from firmware.ui.par import sheet_for_config
from firmware.ui.playback import Playback
from firmware.ui.screens.attract import AttractScreen
from firmware.ui.screens.doc import DocScreen
from firmware.ui.screens.select import SelectScreen
from firmware.ui.service.calibration import install_calibration
from firmware.ui.service.link import TerminalLink
from firmware.ui.service.menu import ServiceMenu
from firmware.ui.window import run_window

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

log = logging.getLogger(__name__)

#: Seconds an idle, empty cabinet waits before attract mode.
ATTRACT_AFTER_S = 60.0
#: Seconds a refusal stays on the message line.
MESSAGE_S = 4.0

MODES = ("table", "help", "paytable", "games", "attract")


class UiApp:
    def __init__(self, terminal: Terminal, *, size: tuple[int, int] = (1920, 1080),
                 surface: pygame.Surface | None = None, drive_terminal: bool = True,
                 par_cache: Path | str | None = None, speed: float = 1.0,
                 attract_after_s: float = ATTRACT_AFTER_S) -> None:
        self.terminal = terminal
        self.surface = surface if surface is not None else pygame.Surface(size)
        self.scaler = Scaler(*self.surface.get_size())
        #: True while the service menu is on screen (read by the inbox on the terminal's thread).
        self.servicing = False
        self.inbox = ui_input.DeviceInbox(buttons=lambda: not self.servicing)
        #: Screenshots asked for by other threads, taken after the next frame (``capture``).
        self.grab = FrameGrab()
        self.lab_panel = LabPanel(terminal.submit)
        terminal.connect_screens(self.inbox.offer, capture=self.capture)
        self._menu: ServiceMenu | None = None
        install_calibration(terminal)
        self.drive = drive_terminal
        self.par_cache = par_cache
        self.speed = speed
        self.attract_after_s = attract_after_s
        self.mode = "table"
        self.page = 0
        self.t = 0.0
        self.idle_s = 0.0
        self.message = ""
        self.message_s = 0.0
        self.record: dict[str, Any] | None = None
        self.playback: Playback | None = None
        self.frame: Frame | None = None
        self.pending: list[tuple[str, Future[Any], Any]] = []
        self._gui: GameUi | None = None
        self._slips: dict[str, BetSlip] = {}
        self._sheets: dict[str, Any] = {}
        self._playable = [g for g in terminal.cfg.games.enabled if has_screens(g)]
        if not self._playable:
            raise NoScreenError(f"no enabled game has screens yet (enabled: {', '.join(terminal.cfg.games.enabled)})")
        status = self.status
        self._last_round = status.get("last_round")
        self._last_ticket = status.get("last_ticket")
        self._cashing_cents = 0
        self._round_id: str | None = None
        self._settled = False

    # --- what the terminal says ----------------------------------------------------------------
    @property
    def status(self) -> Mapping[str, Any]:
        return self.terminal.snapshot or self.terminal.status()

    @property
    def gui(self) -> GameUi:
        status = self.status
        game = (status.get("table") or {}).get("game") or status.get("game") or self.terminal.cfg.games.default
        if not has_screens(game):
            # The terminal plays a game the screens cannot show yet: show the first enabled game
            # that has screens, and ask the terminal to switch to it (between rounds).
            game = self._playable[0]
            if not any(what == "game" for what, _, _ in self.pending) and not status.get("round"):
                self.pending.append(("game", self.terminal.submit("game", game=game), game))
        if self._gui is None or self._gui.game_id != game:
            self._gui = game_ui(GameContext.from_config(self.terminal.cfg, game))
            if self.record is not None and self.record.get("game") != game:
                self.record, self.playback = None, None
        return self._gui

    @property
    def slip(self) -> BetSlip:
        gui = self.gui
        slip = self._slips.get(gui.game_id)
        if slip is None:
            slip = self._slips[gui.game_id] = BetSlip(gui.ctx.limits, gui.ctx.chips, link=gui.link)
        return slip

    @property
    def betting(self) -> bool:
        status = self.status
        table = status.get("table")
        if table is not None:                 # a live table's station: its betting window
            return table_betting(table) and not any(what == "play" for what, _, _ in self.pending)
        return (status.get("state") in BETTING_STATES and not status.get("round") and not status.get("starting")
                and (self.playback is None or self.playback.done)
                and not any(what == "play" for what, _, _ in self.pending))

    # --- one frame -----------------------------------------------------------------------------
    def step(self, dt: float = 1 / 30, events: Iterable[pygame.event.Event] = ()) -> Frame:
        if self.drive:
            self.terminal.step(0)
        lab = self.status.get("lab")
        servicing = self._service_frame()
        devices, mine = self.lab_panel.take(lab, self.inbox.drain(), events, self.frame, self.scaler)
        if servicing:
            self.service_step(mine, devices)
        else:
            self._player_step(dt, devices, mine)
        if lab is not None:
            self.frame = self.lab_panel.draw(self.surface, self.scaler, self.frame, lab)
        self.grab.serve(self._grab)
        assert self.frame is not None
        return self.frame

    def _player_step(self, dt: float, devices: list[Any], events: Iterable[pygame.event.Event]) -> None:
        self._collect()
        self._watch()
        chips = self.gui.ctx.chips
        acted = False
        for action in ui_input.actions(devices, events, self.frame, self.scaler, chips):
            acted = True
            self.dispatch(action)
        self._tick(dt, acted)
        self.frame = self.draw()

    # --- what is shown, for screenshots -------------------------------------------------------
    @property
    def screen(self) -> str:
        """What the screens show now: ``service`` (the menu) or the player's mode (``table``,
        ``help``, ``paytable``, ``games``, ``attract``)."""
        return "service" if self.servicing else self.mode

    def capture(self, size: tuple[int, int]) -> dict[str, Any]:
        """The next frame drawn, at ``size``, as the ``screenshot`` op answers (any thread but the
        one that steps this app: it waits for that thread's next frame)."""
        return self.grab.request(size)

    def _grab(self, size: tuple[int, int]) -> Grab:
        status = self.status
        lab = status.get("lab")
        return grab(self.surface, self.frame, self.scaler, size, screen=self.screen, state=status.get("state"),
                    lab=None if lab is None else str(lab.get("id")))

    def settle(self) -> None:
        """Show the published state as screens that had followed it would (a screenshot drawn on
        demand, ``firmware.ui.live``): the last round's record at its end on the table, not
        played again."""
        self._last_round = None
        self._settled = True

    # --- the service menu --------------------------------------------------------------------
    def _service_frame(self) -> bool:
        """Whether this frame is the service menu's: the cabinet is in SERVICE (the audit key is
        on), or a touch calibration started there is still running. Leaving it logs out."""
        menu = self._menu
        servicing = self.status.get("state") == "SERVICE" or (menu is not None and menu.calibrating)
        if servicing and menu is None:
            cfg = self.terminal.cfg.terminal
            self._menu = ServiceMenu(TerminalLink(self.terminal), money=Money(cfg.denomination, cfg.currency),
                                     size=self.surface.get_size())
        elif not servicing and menu is not None:
            menu.leave()
            self._menu = None
            self.inbox.drain()                      # touches made on the menu are not the player's
        self.servicing = servicing
        return servicing

    def service_step(self, events: Iterable[pygame.event.Event] = (),
                     devices: Iterable[Any] | None = None) -> Frame:
        """The menu's frame; ``devices``: this frame's touches (default: the inbox's)."""
        assert self._menu is not None
        self.frame = self._menu.step(self.inbox.drain() if devices is None else devices, events, self.scaler,
                                     self.surface)
        return self.frame

    @property
    def service_menu(self) -> ServiceMenu | None:
        """The service menu while it is on screen."""
        return self._menu

    def _tick(self, dt: float, acted: bool) -> None:
        self.t += dt
        if self.playback is not None and not self.playback.done:
            self.playback.advance(dt)
        if self.message_s > 0:
            self.message_s -= dt
            if self.message_s <= 0:
                self.message = ""
        status = self.status
        idle = (status.get("state") == "IDLE" and int(status.get("credits_cents", 0)) == 0
                and (self.playback is None or self.playback.done) and not acted)
        self.idle_s = self.idle_s + dt if idle else 0.0
        if self.mode != "attract" and self.idle_s >= self.attract_after_s:
            self.mode = "attract"
        elif self.mode == "attract" and int(status.get("credits_cents", 0)) > 0:
            self.mode = "table"

    def _collect(self) -> None:
        """Answers of the commands sent to the terminal."""
        still = []
        for what, future, data in self.pending:
            if not future.done():
                still.append((what, future, data))
                continue
            error = future.exception()
            if error is not None:
                log.info("%s refused: %s", what, error)
                self.say(text("message.refused", reason=str(error)))
            elif what == "play":
                self.slip.dealt()
            elif what == "game":
                self.mode = "table"
        self.pending = still

    def _watch(self) -> None:
        """A new round forgets the last one's choices; a new round record starts its playback; a
        printed ticket is announced."""
        status = self.status
        round_id = (status.get("round") or {}).get("round_id")
        if round_id is not None and round_id != self._round_id:
            self.gui.round_started()
        self._round_id = round_id
        last = status.get("last_round")
        if last is not None and last != self._last_round:
            self._last_round = last
            record = self.terminal.last_record
            if record is not None and record.get("round_id") == last:
                self.record = record
                gui = self.gui
                if record.get("game") == gui.game_id:
                    self.playback = Playback(gui.beats(record), speed=self.speed)
                    self.mode = "table"
                    if self._settled:
                        self.playback.skip()
        if status.get("printing"):
            self._cashing_cents = max(self._cashing_cents, int(status.get("credits_cents", 0)))
        ticket = status.get("last_ticket")
        if ticket is not None and ticket != self._last_ticket:
            self._last_ticket = ticket
            amount = self.gui.ctx.money.amount(self._cashing_cents) if self._cashing_cents else ""
            self.say(text("message.take_ticket", amount=amount), seconds=3 * MESSAGE_S)
            self._cashing_cents = 0

    def say(self, message: str, seconds: float = MESSAGE_S) -> None:
        self.message = message
        self.message_s = seconds

    # --- actions -------------------------------------------------------------------------------
    def dispatch(self, action: UiAction) -> None:
        """Do what ``action`` means now (a touch, a key, a deck button)."""
        name = action.name
        if self.mode == "attract":
            self.mode = "table"
            if name in ("wake", "skip"):
                return
        handler = getattr(self, f"_do_{name}", None)
        if handler is None:
            log.debug("no handler for %s", action)
            return
        try:
            handler(action.arg)
        except SlipRefused as refused:
            self.say(str(refused))

    def _do_wake(self, _: object) -> None:
        self.mode = "table"

    def _do_skip(self, _: object) -> None:
        if self.playback is not None:
            self.playback.skip()

    def _do_chip(self, value: Any) -> None:
        self.slip.select(int(value))

    def _do_next_chip(self, _: object) -> None:
        if self.betting:
            self.slip.next_chip()

    def _do_bet(self, where: Any) -> None:
        if not self.betting:
            return
        seat, wager = where
        if self.playback is not None and self.playback.done and not self.slip.wagers:
            self.record, self.playback = None, None          # a new bet clears the last round away
        self.slip.place(int(seat), str(wager), int(self.status.get("credits", 0)))
        self.message = ""

    def _do_clear(self, _: object) -> None:
        if self.betting:
            self.slip.clear()

    def _do_repeat(self, _: object) -> None:
        if self.betting:
            self.slip.repeat(int(self.status.get("credits", 0)))

    def _do_repeat_deal(self, _: object) -> None:
        if self.betting:
            self.slip.repeat(int(self.status.get("credits", 0)))
            self._do_deal(None)

    def _do_deal(self, _: object) -> None:
        if self.mode != "table":
            self.mode = "table"
        if not self.betting:
            return
        slip, gui = self.slip, self.gui
        credits = int(self.status.get("credits", 0))
        if not slip.wagers and slip.last:
            slip.repeat(credits)
        problem = gui.check_slip(slip.wagers)
        if problem:
            self.say(problem)
            return
        try:
            validate_wagers(gui.ctx.game, gui.ctx.options, slip.wagers, gui.ctx.limits, credits)
        except EgmError as exc:
            self.say(text("message.refused", reason=str(exc)))
            return
        wagers = {seat: dict(bets) for seat, bets in slip.wagers.items() if bets}
        self.pending.append(("play", self.terminal.submit("play", wagers=wagers), wagers))
        self.message = ""

    def _do_cash_out(self, _: object) -> None:
        status = self.status
        handpay = status.get("handpay") or {}
        if status.get("state") == "HANDPAY" and handpay.get("reason") == "printer":
            self.pending.append(("retry_ticket", self.terminal.submit("retry_ticket"), None))
        else:
            self._cashing_cents = int(status.get("credits_cents", 0))
            self.pending.append(("cashout", self.terminal.submit("cashout"), None))

    def _do_help(self, _: object) -> None:
        self.mode, self.page = "help", 0

    def _do_paytable(self, _: object) -> None:
        self.mode, self.page = "paytable", 0

    def _do_games(self, _: object) -> None:
        if self.betting and len(self.gui.ctx.enabled) > 1:
            self.mode = "games"

    def _do_select_game(self, game: Any) -> None:
        if game == self.gui.game_id:
            self.mode = "table"
            return
        self.pending.append(("game", self.terminal.submit("game", game=str(game)), game))

    def _do_back(self, _: object) -> None:
        self.mode = "table"

    def _do_page(self, delta: Any) -> None:
        self.page = max(0, self.page + int(delta))

    def _do_decide(self, what: Any) -> None:
        seat, choice = what
        if any(w == "decide" for w, _, _ in self.pending):
            return                                         # one answer at a time
        self.pending.append(("decide", self.terminal.submit("decide", seat=int(seat), action=str(choice)), what))

    def _do_game(self, arg: Any) -> None:
        """The game's own action: it may change what its screen holds, or answer a decision."""
        command = self.gui.act(arg, self.status)
        if command is None:
            return
        name, fields = command
        if name != "decide":
            raise ValueError(f"a game's screen sends only decisions, not {name!r}")
        self._do_decide((fields["seat"], fields["action"]))

    # --- drawing -------------------------------------------------------------------------------
    def sheet(self) -> Any:
        gui = self.gui
        if gui.game_id not in self._sheets:
            self._sheets[gui.game_id] = sheet_for_config(self.terminal.cfg, gui.game_id, gui.ctx.options,
                                                         self.par_cache)
        return self._sheets[gui.game_id]

    def draw(self) -> Frame:
        gui = self.gui
        status = self.status
        if self.mode in ("help", "paytable"):
            doc = gui.help(self.sheet()) if self.mode == "help" else gui.paytable(self.sheet())
            self.page = min(self.page, len(doc.pages) - 1)
            doc = replace(doc, page=self.page, buttons=doc_buttons(self.page, len(doc.pages)))
            return DocScreen().render(self.surface, doc)
        if self.mode == "games":
            return SelectScreen().render(self.surface, select_view(list(gui.ctx.enabled), gui.game_id))
        if self.mode == "attract":
            view = attract_view(gui, list(gui.ctx.enabled), self.t, int(status.get("credits", 0)))
            return AttractScreen().render(self.surface, view)
        if status.get("table") is not None:  # a live table: the table's snapshot, not a round of our own
            table = station_view(gui, status, self.slip, betting=self.betting, message=self.message)
            return StationScreen().render(self.surface, table)
        view = table_view(gui, status, self.slip, record=self.record, playback=self.playback,
                          message=self.message)
        return gui.screen().render(self.surface, view)

    # --- the pygame loop -----------------------------------------------------------------------
    def run(self, *, fps: int = 30, fullscreen: bool = False, until: Callable[[], bool] | None = None) -> None:
        """Open the window and run until the terminal stops (or the window is closed)."""
        run_window(self, caption=text("window.caption"), stopping=lambda: self.terminal.stopping, fps=fps,
                   fullscreen=fullscreen, on_close=self.terminal.stop, until=until)
