"""The terminal: the cabinet state machine wired to critical memory, the round kernel and the devices.

One thread runs the terminal (:meth:`Terminal.run`, or :meth:`Terminal.step` from a test). Devices
report on their own threads into their event queues; commands (the player's buttons, ``egm
simctl``, the service API, autoplay) arrive through :meth:`Terminal.submit` into one queue. The
terminal's thread takes both, in order, and is the only one that changes anything, so every change
is committed to critical memory before the next input is looked at.

The terminal is a loop over parts with one job each (``docs/architecture.md``, "The terminal's
parts"): :class:`~firmware.cabinet.money_in.MoneyIn` (notes and vouchers in),
:class:`~firmware.cabinet.cashout.Cashout` (vouchers out, the test ticket, handpays),
:class:`~firmware.cabinet.rounds.Rounds` (the game, the bet, the round in play),
:class:`~firmware.cabinet.supervision.Supervision` (devices, doors, keys, buttons, tilts, retests)
and :class:`~firmware.cabinet.status.StatusReport` (the status document). A device event goes to
its part through :data:`Terminal.EVENT_HANDLERS`, a table of event type -> handler. ``Terminal``
is the parts' public face: the runner, the control socket, the screens and the service API use it.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from firmware.cabinet.cashout import TEST_VALIDATION, Cashout, Printing
from firmware.cabinet.command_queue import CommandQueue
from firmware.cabinet.devices import DEVICE_NAMES, Devices, not_connected
from firmware.cabinet.errors import CabinetError, TerminalError, TerminalStopped
from firmware.cabinet.lab import LabPrompts
from firmware.cabinet.machine import Cabinet
from firmware.cabinet.money_in import MoneyIn
from firmware.cabinet.ports import HostPort, SasPart
from firmware.cabinet.rounds import Rounds
from firmware.cabinet.status import StatusReport
from firmware.cabinet.supervision import PRINTER_SOFT_FAULTS, SelfTest, Supervision
from firmware.cabinet.table_port import TablePort
from firmware.cabinet.table_rounds import TableRounds
from firmware.kernel.limits import BetLimits
from firmware.kernel.round import RoundKernel
from firmware.ledger.errors import CriticalMemoryError
from firmware.ledger.ledger import Ledger
from hal.events import (
    ButtonPressed,
    DeviceEvent,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    DoorChanged,
    KeyTurned,
    NoteEscrowed,
    NoteStacked,
    PaperLow,
    Rejected,
    Returned,
    TicketEscrowed,
    TicketNotPrinted,
    TicketPrinted,
    TicketStacked,
    Touch,
)

if TYPE_CHECKING:
    from firmware.cabinet.demo import DemoMode
    from firmware.cabinet.service.api import ServiceApi
    from firmware.cashless.vouchers import VoucherBook
    from firmware.config.schema import Config
    from firmware.rng.service import RngService

__all__ = [
    "DEVICE_NAMES", "PRINTER_SOFT_FAULTS", "TEST_VALIDATION", "Devices", "Printing", "Terminal",
    "TerminalError", "TerminalStopped", "not_connected",
]

log = logging.getLogger(__name__)

#: A device event's handler: the part's method, given the device's slot name and the event.
EventHandler = Callable[[str, Any], None]
#: A capture of the player's screen at a size (width, height): the ``screenshot`` op's answer
#: (``png_base64``, ``width``, ``height``, ``screen``, ...). Called on the asking thread.
ScreenCapture = Callable[[tuple[int, int]], dict[str, Any]]


class Terminal:
    """The running terminal. Build it, :meth:`power_up`, then :meth:`run` (or :meth:`step`)."""

    #: Which part handles each device event type (the part's attribute, its method).
    EVENT_HANDLERS: dict[type[DeviceEvent], tuple[str, str]] = {
        DeviceOffline: ("supervision", "on_offline"),
        DeviceOnline: ("supervision", "on_online"),
        DeviceFault: ("supervision", "on_fault"),
        DoorChanged: ("supervision", "on_door"),
        KeyTurned: ("supervision", "on_key"),
        ButtonPressed: ("supervision", "on_button_pressed"),
        Touch: ("supervision", "on_touch"),
        NoteEscrowed: ("money_in", "on_note_escrowed"),
        NoteStacked: ("money_in", "on_note_stacked"),
        TicketEscrowed: ("money_in", "on_ticket_escrowed"),
        TicketStacked: ("money_in", "on_ticket_stacked"),
        Returned: ("money_in", "on_returned"),
        Rejected: ("money_in", "on_rejected"),
        TicketPrinted: ("cashout", "on_ticket_printed"),
        TicketNotPrinted: ("cashout", "on_ticket_not_printed"),
        PaperLow: ("cashout", "on_paper_low"),
    }

    def __init__(self, cfg: Config, ledger: Ledger, rng: RngService, devices: Devices, vouchers: VoucherBook, *,
                 clock: Callable[[], float] = time.monotonic, self_test: SelfTest | None = None,
                 physical_shoe_timeout: float = 30.0, game: str | None = None,
                 service: Callable[[Terminal], ServiceApi] | None = None,
                 hostlink: Callable[[Terminal], HostPort] | None = None,
                 sas: Callable[[Terminal], SasPart] | None = None,
                 capture: Callable[[Terminal], ScreenCapture] | None = None,
                 on_round: Callable[[dict[str, Any]], None] | None = None,
                 on_step: Callable[[Terminal], None] | None = None,
                 entropy_source: Callable[[int], bytes] = os.urandom) -> None:
        """``service`` and ``hostlink`` build the service API and the host link from the terminal
        they serve (each needs the terminal, and the terminal calls each), once: ``service`` at the
        end of construction, when every part exists; ``hostlink`` at the end of :meth:`power_up`,
        once the cabinet has reached attract, so that the attract screen does not wait for the
        link's keys and transport (docs/architecture.md, "The composition root"). ``sas`` builds
        and opens the SAS port, also at the end of :meth:`power_up` (its TITO poll set ends what a
        power cut left waiting, which needs the cabinet powered up); the terminal hands it the
        tickets inserted and the numbering of the tickets printed, where it takes them over.
        ``game``: the game to start with (default: the configuration's ``games.default``).
        ``entropy_source``: the raw entropy source every new instantiation of the RNG reads (the
        technician's retest of an RNG tilt): ``os.urandom``, or a simulated cabinet's
        :class:`~firmware.rng.switchable.SwitchableSource`, which must be ``rng``'s too.
        ``capture`` builds the screenshot of a terminal without screens (``egm run --headless``:
        the screens drawn off screen from the published status, ``firmware.ui.live``); screens
        that connect (:meth:`connect_screens`) bring their own."""
        self.cfg = cfg
        self.entropy_source = entropy_source
        self.ledger = ledger
        self.rng = rng
        self.devices = devices
        self.vouchers = vouchers
        self.clock = clock
        self.message = ""                                #: what the player is told now
        #: Why the terminal halted (critical memory failed), or None.
        self.halted: str | None = None
        self.snapshot: dict[str, Any] = {}
        #: How many snapshots were published: one published after a command returned shows it.
        self.published = 0
        self._stop = threading.Event()
        #: Called after every round with its record, and after every step (``egm run``: the
        #: console's round lines, the autoplay).
        self.on_round = on_round
        self.on_step = on_step
        #: The screens' input (:meth:`connect_screens`), or None while no screens are open.
        self.on_input: Callable[[DeviceEvent], bool] | None = None
        # the parts
        self.supervision = Supervision(self, self_test)
        self.cabinet = Cabinet(handpay_limit=cfg.limits.handpay_limit, on_event=self.supervision.cabinet_event)
        self.rounds = Rounds(self, physical_shoe_timeout)
        if game is not None:
            self.rounds.game_id = game
        self.money_in = MoneyIn(self)
        self.cashout = Cashout(self)
        self.report = StatusReport(self)
        #: A player station's rounds at a live table (``[table] controller`` set), else None; the
        #: composition root hands it to the table link (its ``TableEvents``) and the link to
        #: :meth:`connect_table`.
        self.table: TableRounds | None = TableRounds(self) if cfg.table.controller else None
        #: The table link (``firmware.table``'s client), once connected; None plays alone.
        self.table_port: TablePort | None = None
        self.lab = LabPrompts(ledger, clock)
        self.commands = CommandQueue()
        self._handlers: dict[type[DeviceEvent], EventHandler] = {
            kind: getattr(getattr(self, part), method) for kind, (part, method) in self.EVENT_HANDLERS.items()
        }
        self.register(
            status=self.status, play=self.play, decide=self.decide, cashout=self.request_cashout,
            game=self.choose_game, bet=self.set_bet, retry_ticket=self.retry_ticket,
            attendant_handpay=self.attendant_handpay, wake=lambda: None, **self.lab.commands(),
        )
        if self.table is not None:
            self.register(table=self.table.handle)     # the link's events (not a control-socket op)
        #: The screenshot of the screens connected (:meth:`connect_screens`), else of none (headless).
        self._screens_capture: ScreenCapture | None = None
        self._headless_capture = capture(self) if capture is not None else None
        # the collaborators above the cabinet, last: they are built from the terminal
        #: The host link, polled from every step (None: no host, or not yet powered up).
        self.hostlink: HostPort | None = None
        self._hostlink_factory = hostlink
        #: The SAS port (None: SAS is off, or not yet powered up; firmware/cabinet/sas_port.py).
        self.sas: SasPart | None = None
        self._sas_factory = sas
        #: The service API (None: a terminal without one); it adds the ``service`` and ``demo`` commands.
        self.service: ServiceApi | None = service(self) if service is not None else None
        if self.service is not None:
            self.register(**self.service.commands(self))

    @property
    def demo(self) -> DemoMode | None:
        """The service API's demo mode (None without a service API)."""
        return None if self.service is None else self.service.demo

    def connect_screens(self, on_input: Callable[[DeviceEvent], bool],
                        capture: ScreenCapture | None = None) -> None:
        """The screens (``firmware.ui``) take every touch and button-deck press from now on, on this
        thread; for a button ``on_input`` returns True when they have taken it (the terminal's own
        handling is skipped). The screens sit above the cabinet and are built after the terminal,
        only when there is a display, so they connect themselves rather than being passed in
        (docs/architecture.md, "The composition root"); the last screens connected get the input.
        ``capture``: a copy of what they show (the ``screenshot`` op), thread-safe."""
        self.on_input = on_input
        self._screens_capture = capture

    def screenshot(self, size: tuple[int, int] = (1920, 1080)) -> dict[str, Any]:
        """The player's screen as it is now, at ``size`` (any thread; not through the command
        queue: the terminal's thread is not held while a frame is drawn). The connected screens'
        own frame, else (headless) the published status drawn off screen."""
        capture = self._screens_capture or self._headless_capture
        if capture is None:
            raise TerminalError("this terminal has no screens to capture")
        return capture(size)

    def new_rng(self, rng: RngService) -> None:
        """Draw from ``rng`` from now on (a passed RNG retest makes a new instance): every RNG shoe
        too."""
        self.rng = rng
        self.rounds.new_rng()

    # --- commands ------------------------------------------------------------------------------
    @property
    def handlers(self) -> dict[str, Callable[..., Any]]:
        """The commands :meth:`submit` accepts, by name."""
        return self.commands.handlers

    def register(self, **handlers: Callable[..., Any]) -> None:
        """Commands :meth:`submit` accepts (the service API and the simulator rig add theirs)."""
        self.commands.register(**handlers)

    def submit(self, name: str, **args: Any) -> Future[Any]:
        """Queue a command for the terminal's thread; its result (or error) arrives in the future."""
        return self.commands.submit(name, **args)

    def wake(self) -> None:
        """End the loop's idle wait now (another thread has something for the next step)."""
        self.commands.wake()

    def call(self, name: str, timeout: float = 30.0, **args: Any) -> Any:
        """:meth:`submit` and wait (from another thread than the terminal's)."""
        return self.submit(name, **args).result(timeout)

    # --- power-up ------------------------------------------------------------------------------
    def power_up(self) -> dict[str, str]:
        """POWER_UP -> SELF_TEST -> IDLE (or TILT), then settle what a power loss left open: a
        voucher sent but unconfirmed is voided; a redemption in escrow or asked of the host is
        cancelled; a handpay lockup is entered again; an interrupted round finishes once the
        cabinet can play."""
        self.ledger.event("power_up")
        self.cabinet.begin_self_test()
        self.supervision.open_devices()
        self.supervision.doors_found_open_at_power_up()
        failures = self.supervision.run_self_test()
        with self.supervision.powering_up():
            self._drain_devices()                      # doors found open tilt now
        self.cashout.void_unconfirmed()
        self.money_in.settle_after_power_loss()
        self.cashout.resume_handpay()
        self.rounds.settle_after_power_loss()
        if self.table is not None:
            self.table.attach()                      # a table bet left open: PLAYING until settled
        self._publish()
        if self._hostlink_factory is not None and self.hostlink is None:
            self.hostlink = self._hostlink_factory(self)          # after attract: see __init__
        if self._sas_factory is not None and self.sas is None:
            self.sas = self._sas_factory(self)
            self.money_in.ticket_host = self.sas.ticket_host
            self.cashout.numbering = self.sas.numbering
        return failures

    # --- the loop ------------------------------------------------------------------------------
    def play_held(self) -> str | None:
        """Why no round may start now besides the cabinet's state (the SAS port's AFT lock), or None."""
        return None if self.sas is None else self.sas.play_held()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self, *, until: Callable[[], bool] | None = None, idle_wait: float = 0.02) -> None:
        """Step until :meth:`stop` (or ``until()`` holds after a step). Between steps the terminal
        waits up to ``idle_wait`` seconds for a command (a command ends the wait at once; device
        events wait at most that long)."""
        try:
            while not self._stop.is_set():
                self.step(idle_wait)
                if until is not None and until():
                    break
        except CriticalMemoryError as exc:
            self._halt(exc)
            raise

    def _halt(self, exc: CriticalMemoryError) -> None:
        """Critical memory cannot be written: nothing more may be recorded, so nothing more may
        happen. The bill validator is disabled (a note taken now could not be credited) and the
        last published state becomes HALTED with the reason, which the screens show as a lockup
        until the cabinet is powered down (the terminal's loop has ended)."""
        log.critical("critical memory failed; the terminal halts: %s", exc)
        self.halted = str(exc)
        self.money_in.halt()
        self.snapshot = self.report.halted(self.halted, self.snapshot)
        self.published += 1

    def step(self, timeout: float = 0.0) -> None:
        """One turn: commands, device events, reconnections, timers, outputs; then the round."""
        self.pump(timeout)
        self.rounds.step()
        if self.on_step is not None:
            self.on_step(self)

    def pump(self, timeout: float) -> None:
        """Handle what is waiting (a command, device events), waiting up to ``timeout`` for a command."""
        self.commands.run_waiting(timeout)
        self._drain_devices()
        if self.hostlink is not None:
            self.hostlink.poll()
        self.supervision.reconnect()
        self.cashout.tick()
        self.lab.tick()
        self.money_in.update_validator()
        self._publish()

    def _drain_devices(self) -> None:
        for name, device in self.devices.items():
            for event in device.drain_events():
                try:
                    self._on_device_event(name, event)
                except CabinetError as exc:
                    log.warning("%s: %s ignored: %s", name, type(event).__name__, exc)

    def _on_device_event(self, name: str, event: DeviceEvent) -> None:
        """The event's part handles it (:data:`EVENT_HANDLERS`); events no part wants are dropped."""
        log.debug("%s: %s", name, event)
        for kind in type(event).__mro__:
            handler = self._handlers.get(kind)
            if handler is not None:
                handler(name, event)
                return

    def _publish(self) -> None:
        self.snapshot = self.status()
        self.published += 1

    # --- what the screens and ``egm simctl status`` show ----------------------------------------
    def status(self) -> dict[str, Any]:
        return self.report.document()

    def devices_not_connected(self) -> dict[str, str]:
        return self.supervision.devices_not_connected()

    @property
    def touches(self) -> collections.deque[dict[str, Any]]:
        return self.supervision.touches

    @property
    def doors_opened_while_off(self) -> list[str]:
        return self.supervision.doors_opened_while_off

    def retest(self, tilt: str) -> dict[str, Any]:
        return self.supervision.retest(tilt)

    # --- money -----------------------------------------------------------------------------------
    @property
    def redeeming(self) -> str | None:
        """The voucher in the validator's escrow, or None."""
        return self.money_in.redeeming

    @property
    def notes_stacked(self) -> int:
        return self.money_in.notes_stacked

    @property
    def printing(self) -> Printing | None:
        """The cashout voucher the printer has not answered for yet."""
        return self.cashout.printing

    @property
    def tickets_printed(self) -> int:
        return self.cashout.tickets_printed

    @property
    def last_ticket(self) -> str | None:
        return self.cashout.last_ticket

    def request_cashout(self) -> dict[str, Any]:
        return self.cashout.request()

    def print_test_ticket(self) -> dict[str, Any]:
        return self.cashout.print_test_ticket()

    def retry_ticket(self) -> dict[str, Any]:
        return self.cashout.retry_ticket()

    def attendant_handpay(self, attendant: str = "attendant") -> dict[str, Any]:
        return self.cashout.attendant_handpay(attendant)

    # --- rounds ----------------------------------------------------------------------------------
    @property
    def kernel(self) -> RoundKernel[Any, Any] | None:
        """The kernel of the round in progress."""
        return self.rounds.kernel

    @property
    def starting(self) -> bool:
        """A round was requested and deals on the next step."""
        return self.rounds.starting

    @property
    def last_record(self) -> dict[str, Any] | None:
        return self.rounds.last_record

    @property
    def rounds_played(self) -> int:
        return self.rounds.rounds_played

    @property
    def limits(self) -> BetLimits:
        return self.rounds.limits

    @property
    def seats(self) -> int:
        return self.rounds.seats

    @property
    def game_id(self) -> str:
        return self.rounds.game_id

    @game_id.setter
    def game_id(self, game: str) -> None:
        self.rounds.game_id = game

    @property
    def bet_unit(self) -> int:
        return self.rounds.bet_unit

    @bet_unit.setter
    def bet_unit(self, unit: int) -> None:
        self.rounds.bet_unit = unit

    def choose_game(self, game: str) -> dict[str, Any]:
        return self.rounds.choose_game(game)

    def set_bet(self, unit: int) -> dict[str, Any]:
        return self.rounds.set_bet(unit)

    def use_config(self, cfg: Config, games: list[str]) -> None:
        """Play ``cfg`` from the next round; ``games`` changed options (their kernels and shoes are
        built again; a round in progress keeps the kernel it started with)."""
        self.cfg = cfg
        self.rounds.use_config(games)

    def wagers_for(self, game_id: str | None = None) -> dict[int, dict[str, int]]:
        return self.rounds.wagers_for(game_id)

    def play(self, wagers: Mapping[Any, Mapping[str, int]] | None = None, game: str | None = None) -> dict[str, Any]:
        """Start a round (the DEAL button); see :meth:`Rounds.play <firmware.cabinet.rounds.Rounds.play>`.
        At a live table (:attr:`table`): bet in the open betting window
        (:meth:`TableRounds.play <firmware.cabinet.table_rounds.TableRounds.play>`)."""
        if self.table is not None:
            return self.table.play(wagers, game)
        return self.rounds.play(wagers, game)

    def decide(self, seat: int, action: str) -> dict[str, Any]:
        if self.table is not None:
            return self.table.decide(int(seat), str(action))
        return self.rounds.decide(seat, action)

    def connect_table(self, port: TablePort) -> None:
        """The table link (a station's): bets and decisions go through ``port`` from now on. The
        link gets :attr:`table` (its events) from the composition root."""
        if self.table is None:
            raise TerminalError("this terminal is not a table station ([table] controller is not set)")
        self.table_port = port
