"""The terminal: the cabinet state machine wired to critical memory, the round kernel and the devices.

One thread runs the terminal (:meth:`Terminal.run`, or :meth:`Terminal.step` from a test). Devices
report on their own threads into their event queues; commands (the player's buttons, ``egm
simctl``, the service API, autoplay) arrive through :meth:`Terminal.submit` into one queue. The
terminal's thread takes both, in order, and is the only one that changes anything, so every change
is committed to critical memory before the next input is looked at.

Money, in one place:

* **notes**: the validator is enabled only while the cabinet can take money and the credit meter
  is below its limit; a note escrowed when it cannot (a tilt raised meanwhile) is returned; a
  stacked note is credited (``Ledger.bill_in``) exactly once.
* **cashout**: the voucher's number and amount are recorded (``VoucherBook.issue``) before it is
  sent to the printer; only the printer's confirmation takes the credits off the meter. A voucher
  the printer did not confirm is voided (its number can never be redeemed), the credits stay, the
  player is told, and the cabinet locks up for a handpay, from which a fixed printer can retry.
  At or above the handpay limit it is a handpay at once.
* **vouchers in**: checked by the voucher book (the host once the host link lands; offline, only
  this terminal's own vouchers and only where configured), marked pending, stacked, and credited
  on the validator's confirmation; refused or returned ones change nothing.
* **handpay**: cleared by the attendant's jackpot-reset key; the amount is recorded
  (``Ledger.handpay``) as the lockup ends.

Tilts: a door open, a device fault or disconnection, critical memory that cannot be written, an
RNG failure. The round stops at its next card (:class:`~firmware.cabinet.gated.GatedSource`) and
continues where it stopped when the last tilt clears. Every tilt, clearing and cabinet transition
is an event in critical memory (rounds are in their own journal).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as dt
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from firmware.cabinet.errors import CabinetError
from firmware.cabinet.gated import GatedSource
from firmware.cabinet.machine import Cabinet, Tilt
from firmware.cabinet.states import CabinetState, HandpayReason, TiltSource
from firmware.cards.errors import ShoeExhausted
from firmware.cards.source import PhysicalShoeSource, RngShoe
from firmware.cashless.vouchers import POWER_LOST_ASKING, IssuedVoucher
from firmware.errors import EgmError
from firmware.games.registry import configured_options, get_game
from firmware.kernel.limits import BetLimits, validate_wagers
from firmware.kernel.round import RoundKernel
from firmware.kernel.states import RoundState
from firmware.ledger.errors import CriticalMemoryError, LedgerError
from firmware.ledger.ledger import Ledger
from firmware.ledger.resume import resume_round
from firmware.rng.errors import RngError
from hal.base import Device, Lifecycle
from hal.devices.bill_validator import BillValidator
from hal.devices.io_board import IoBoard
from hal.devices.printer import TicketPrinter
from hal.devices.shoe import CardShoe
from hal.devices.ticket import Ticket, TicketKind
from hal.devices.touch import Touchscreen
from hal.errors import DeviceError
from hal.events import (
    Button,
    ButtonPressed,
    DeviceEvent,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    Door,
    DoorChanged,
    FaultKind,
    KeySwitch,
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

log = logging.getLogger(__name__)
S = CabinetState

#: Device names (events, tilts, ``egm simctl``) of the cabinet's device slots.
DEVICE_NAMES = ("bill_validator", "printer", "io_board", "touch", "shoe")

#: Printer faults that stop tickets but not play: a cashout meanwhile becomes a handpay.
PRINTER_SOFT_FAULTS = frozenset({FaultKind.PAPER_OUT, FaultKind.JAM, FaultKind.CHASSIS_OPEN})

#: The validation number of the service menu's test ticket: never issued, never redeemable.
TEST_VALIDATION = "0" * 18

#: The cabinet transitions that are not logged as events because the round journal records them.
_JOURNALED_TRIGGERS = frozenset({"start_round", "complete_round"})


class TerminalError(EgmError):
    """A request the terminal refuses now (no credits, wrong state, unknown game...)."""


class TerminalStopped(Exception):
    """The terminal is shutting down while waiting inside a round (the round stays journaled)."""


@dataclass
class Devices:
    """The cabinet's devices by slot (None: not fitted). Created and closed by the caller."""

    bill_validator: BillValidator | None = None
    printer: TicketPrinter | None = None
    io_board: IoBoard | None = None
    touch: Touchscreen | None = None
    shoe: CardShoe | None = None

    def slots(self) -> dict[str, Device | None]:
        """Every slot (None: not fitted), in :data:`DEVICE_NAMES` order."""
        return {"bill_validator": self.bill_validator, "printer": self.printer,
                "io_board": self.io_board, "touch": self.touch, "shoe": self.shoe}

    def items(self) -> list[tuple[str, Device]]:
        return [(n, d) for n, d in self.slots().items() if d is not None]

    def port(self, name: str) -> str | None:
        """Where the device in slot ``name`` is looked for (its serial port or input node), or None."""
        device = self.slots().get(name)
        return None if device is None else device.port


def not_connected(name: str, port: str | None, cause: str) -> str:
    """A disconnection tilt's reason: the device, where it is looked for, and why it is not there."""
    return f"{name} not connected ({port or 'no port'}): {cause}"


@dataclass
class _Command:
    name: str
    args: dict[str, Any]
    future: Future = field(default_factory=Future)


@dataclass
class Printing:
    """The cashout voucher the printer has not answered for yet."""

    validation: str
    cents: int
    sent_at: float


class Terminal:
    """The running terminal. Build it, :meth:`power_up`, then :meth:`run` (or :meth:`step`)."""

    def __init__(self, cfg: Any, ledger: Ledger, rng: Any, devices: Devices, vouchers: Any, *,
                 clock: Callable[[], float] = time.monotonic, self_test: Callable[[Terminal], dict[str, str]] | None = None,
                 physical_shoe_timeout: float = 30.0) -> None:
        self.cfg = cfg
        self.ledger = ledger
        self.rng = rng
        self.devices = devices
        self.vouchers = vouchers
        self._clock = clock
        self._self_test = self_test
        self.cabinet = Cabinet(handpay_limit=cfg.limits.handpay_limit, on_event=self._cabinet_event)
        self.limits = BetLimits.from_config(cfg.limits)
        self.game_id: str = cfg.games.default
        self.seats: int = cfg.games.seats
        self.bet_unit = max(self.limits.min_bet, min(10, self.limits.max_bet))
        self._kernels: dict[str, RoundKernel] = {}
        self._sources: dict[str, Any] = {}
        self.kernel: RoundKernel | None = None          #: the kernel of the round in progress
        self.last_record: dict[str, Any] | None = None
        self.message = ""                                #: what the player is told now
        self.printing: Printing | None = None
        self.redeeming: str | None = None                #: the voucher in the validator's escrow
        self._validator_enabled: bool | None = None
        #: Why the terminal halted (critical memory failed), or None.
        self.halted: str | None = None
        self._offline_since: dict[str, float] = {}
        self._next_reconnect = 0.0
        self._commands: queue.Queue[_Command] = queue.Queue()
        self._stop = threading.Event()
        self._in_round = False
        self._starting: dict[int, dict[str, int]] | None = None
        self._physical_timeout = physical_shoe_timeout
        self.rounds_played = 0
        self.tickets_printed = 0
        self.notes_stacked = 0
        self.last_ticket: str | None = None
        self._powering_up = False
        self._test_ticket: str | None = None
        self._paused_at: float | None = None          #: when play stopped while decisions were open
        #: The last touches (the service menu's touch test; the screens take them in their issue).
        self.touches: collections.deque[dict[str, Any]] = collections.deque(maxlen=20)
        #: Doors the I/O board reported open at power-up that critical memory last saw closed.
        self.doors_opened_while_off: list[str] = []
        #: Called after every round with its record, and after every step (``on_step``).
        self.on_round: Callable[[dict[str, Any]], None] | None = None
        self.on_step: Callable[[Terminal], None] | None = None
        #: The screens (``firmware.ui``): every touch and button-deck press, on this thread; for a
        #: button it returns True when it has taken it (the terminal's own handling is skipped).
        self.on_input: Callable[[DeviceEvent], bool] | None = None
        self.handlers: dict[str, Callable[..., Any]] = {}
        self.register(
            status=self.status, play=self.play, decide=self.decide, cashout=self.request_cashout,
            game=self.choose_game, bet=self.set_bet, retry_ticket=self.retry_ticket,
            attendant_handpay=self.attendant_handpay, wake=lambda: None,
        )
        self.snapshot: dict[str, Any] = {}
        #: Set by ``firmware.cabinet.service.install``: the service API and the demo mode.
        self.service: Any = None
        self.demo: Any = None
        #: Set by ``firmware.hostlink.link.HostLink.attach``: polled from every step.
        self.hostlink: Any = None

    # --- commands ------------------------------------------------------------------------------
    def register(self, **handlers: Callable[..., Any]) -> None:
        """Commands :meth:`submit` accepts (the service API and the simulator rig add theirs)."""
        self.handlers.update(handlers)

    def submit(self, name: str, **args: Any) -> Future:
        """Queue a command for the terminal's thread; its result (or error) arrives in the future."""
        command = _Command(name, args)
        if name not in self.handlers:
            command.future.set_exception(TerminalError(
                f"unknown command {name!r}; commands are {', '.join(sorted(self.handlers))}"))
        else:
            self._commands.put(command)
        return command.future

    def wake(self) -> None:
        """End the loop's idle wait now (another thread has something for the next step)."""
        self._commands.put(_Command("wake", {}))

    def call(self, name: str, timeout: float = 30.0, **args: Any) -> Any:
        """:meth:`submit` and wait (from another thread than the terminal's)."""
        return self.submit(name, **args).result(timeout)

    def _execute(self, command: _Command) -> None:
        if not command.future.set_running_or_notify_cancel():
            return
        try:
            result = self.handlers[command.name](**command.args)
        except CriticalMemoryError as exc:     # nothing can be recorded: the terminal stops
            command.future.set_exception(exc)
            raise
        except (EgmError, DeviceError, ValueError, TypeError) as exc:
            command.future.set_exception(exc if isinstance(exc, EgmError) else TerminalError(str(exc)))
        except BaseException as exc:           # a bug: the caller sees it, the terminal goes on
            log.exception("command %s failed", command.name)
            command.future.set_exception(exc)
            if isinstance(exc, TerminalStopped):
                raise
        else:
            command.future.set_result(result)

    # --- power-up ------------------------------------------------------------------------------
    def power_up(self) -> dict[str, str]:
        """POWER_UP -> SELF_TEST -> IDLE (or TILT), then settle what a power loss left open."""
        self.ledger.event("power_up")
        self.cabinet.begin_self_test()
        if self.devices.bill_validator is not None:
            # its ACK of a credit waits for the ledger (_credit_recorded)
            self.devices.bill_validator.ack_on_record = True
        for name, device in self.devices.items():
            self._open_device(name, device)
        self._doors_found_open_at_power_up()
        failures = self._run_self_test()
        self._powering_up = True
        try:
            self._drain_devices()                      # doors found open tilt now
        finally:
            self._powering_up = False
        self._settle_after_power_loss()
        self._publish()
        return failures

    def _run_self_test(self) -> dict[str, str]:
        """The self-test's checks, and their outcome to the cabinet (which may be in TILT already: a
        device that did not open). Its failed checks, each with its reason."""
        failures = self._self_test(self) if self._self_test is not None else {}
        if failures:
            self.cabinet.self_test_failed(failures)
        else:
            self.cabinet.self_test_passed()
        return failures

    def _doors_found_open_at_power_up(self, timeout: float = 1.0) -> None:
        """The I/O board reports every input in a SNAPSHOT right after it is opened: wait for it,
        and compare its doors with the doors critical memory last recorded (open while off)."""
        io = self.devices.io_board
        if io is None or not io.is_open:
            return
        io.wait_inputs(timeout)
        last = self.ledger.door_states()
        inputs = io.inputs
        self.doors_opened_while_off = [door.value for door in Door
                                       if inputs.get(door) and not last.get(door.value, False)]

    def _open_device(self, name: str, device: Device) -> None:
        try:
            device.open()
        except DeviceError as exc:
            # A device tilt, not a failed start: the cabinet stays up, tries the device again every
            # reconnect_interval_s (_reconnect) and clears the tilt when it answers (DeviceOnline).
            log.warning("%s did not open: %s", name, exc)
            self._tilt(TiltSource.DEVICE_DISCONNECTED, name,
                       not_connected(name, self.devices.port(name), str(exc).removeprefix(f"{name}: ")))
            self._offline_since[name] = self._clock()

    def devices_not_connected(self) -> dict[str, str]:
        """The fitted devices that are not connected now, each with where it is looked for (the
        self-test's ``devices`` line): ``{"bill_validator": "not connected (/dev/ttyUSB0)"}``."""
        return {t.name: f"not connected ({self.devices.port(t.name) or 'no port'})"
                for t in self.cabinet.active_tilts if t.source is TiltSource.DEVICE_DISCONNECTED}

    def _settle_after_power_loss(self) -> None:
        """A voucher sent but unconfirmed is voided; a redemption in escrow is cancelled (the
        validator returns what it held at power-up); a redemption asked of the host that had not
        gone ahead is abandoned (the host releases the voucher, docs/cashless.md); a handpay
        lockup is entered again; an interrupted round finishes once the cabinet can play."""
        book = self.vouchers
        issued = book.unconfirmed()
        if issued is not None:
            book.void(issued.validation, "power lost before the printer confirmed")
            self.ledger.event("voucher_unconfirmed", validation=issued.validation, cents=issued.amount_cents)
        pending = book.pending_redemption()
        if pending is not None:
            book.cancel_redeem(pending.validation, "power lost with the voucher in escrow")
        for validation in book.unsettled_requests():  # asked of the host, never went ahead
            book.abandon_request(validation, POWER_LOST_ASKING)
        handpay = self.ledger.setting("cabinet.handpay")
        if handpay and handpay.get("credits") and self.cabinet.state is S.IDLE:
            self.cabinet.cashout()
            self.cabinet.handpay(handpay["credits"], handpay["reason"])
        if self.ledger.open_round is not None and self.cabinet.state is S.IDLE:
            self._resume_round()

    # --- the loop ------------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()

    @property
    def starting(self) -> bool:
        """A round was requested and deals on the next step."""
        return self._starting is not None

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
        validator = self.devices.bill_validator
        if validator is not None and validator.is_open:
            try:
                validator.disable()
                self._validator_enabled = False
            except DeviceError as err:
                log.critical("bill validator could not be disabled: %s", err)
        snapshot = dict(self.snapshot or {})
        snapshot.update(state="HALTED", halted=self.halted, accepting_notes=False, starting=False)
        self.snapshot = snapshot

    def step(self, timeout: float = 0.0) -> None:
        """One turn: commands, device events, reconnections, timers, outputs."""
        self._pump(timeout)
        if not self._in_round:
            if self._starting is not None:
                self._begin_round()
            self._continue_round()
        if self.on_step is not None:
            self.on_step(self)

    def _pump(self, timeout: float) -> None:
        """Handle what is waiting (a command, device events), waiting up to ``timeout`` for a command."""
        try:
            command = self._commands.get(timeout=timeout) if timeout > 0 else self._commands.get_nowait()
        except queue.Empty:
            command = None
        while command is not None:
            self._execute(command)
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                command = None
        self._drain_devices()
        if self.hostlink is not None:
            self.hostlink.poll()
        self._reconnect()
        self._update_outputs()
        self._publish()

    def _drain_devices(self) -> None:
        for name, device in self.devices.items():
            for event in device.drain_events():
                try:
                    self._on_device_event(name, event)
                except CabinetError as exc:
                    log.warning("%s: %s ignored: %s", name, type(event).__name__, exc)

    # --- device events -------------------------------------------------------------------------
    def _on_device_event(self, name: str, event: DeviceEvent) -> None:
        log.debug("%s: %s", name, event)
        if isinstance(event, DeviceOffline):
            self._offline_since.setdefault(name, self._clock())
            self._tilt(TiltSource.DEVICE_DISCONNECTED, name, not_connected(name, self.devices.port(name), event.reason))
            if name == "printer" and self.printing is not None:
                self._ticket_not_printed(self.printing.validation, f"printer disconnected: {event.reason}")
            if name == "bill_validator":
                self._validator_enabled = None
        elif isinstance(event, DeviceOnline):
            self._offline_since.pop(name, None)
            self._clear(TiltSource.DEVICE_DISCONNECTED, name)
            if name == "bill_validator":
                self._validator_enabled = None       # set it again on the new connection
        elif isinstance(event, DeviceFault):
            self._on_fault(name, event)
        elif isinstance(event, DoorChanged):
            self._on_door(event.door.value, event.open)
        elif isinstance(event, KeyTurned):
            self._on_key(event.key, event.on)
        elif isinstance(event, ButtonPressed):
            if self.on_input is None or not self.on_input(event):
                self._on_button(event.button)
        elif isinstance(event, NoteEscrowed):
            self._on_note_escrowed(event.value_cents)
        elif isinstance(event, NoteStacked):
            self._on_note_stacked(event.value_cents)
        elif isinstance(event, TicketEscrowed):
            self._on_ticket_escrowed(event.barcode)
        elif isinstance(event, TicketStacked):
            self._on_ticket_stacked(event.barcode)
        elif isinstance(event, Returned | Rejected):
            if self.redeeming is not None:
                self.vouchers.cancel_redeem(self.redeeming, "returned by the validator")
                self.redeeming = None
            if isinstance(event, Rejected):
                self.ledger.event("bill_rejected", reason=event.reason)
        elif isinstance(event, TicketPrinted):
            self._on_ticket_printed(event.validation)
        elif isinstance(event, TicketNotPrinted):
            self._ticket_not_printed(event.validation, event.reason)
        elif isinstance(event, Touch):
            self.touches.append({"x": event.x, "y": event.y, "phase": event.phase.value, "slot": event.slot})
            if self.on_input is not None:
                self.on_input(event)
        elif isinstance(event, PaperLow):
            self.ledger.event("printer_paper_low", low=event.low)

    def _on_fault(self, name: str, event: DeviceFault) -> None:
        if name == "printer" and event.kind in PRINTER_SOFT_FAULTS:
            self.ledger.event("printer_fault_cleared" if event.cleared else "printer_fault",
                              kind=event.kind.value, detail=event.detail)
            return
        tilt = f"{name}.{event.kind.value}"
        if event.cleared:
            self._clear(TiltSource.DEVICE_FAULT, tilt)
        else:
            self._tilt(TiltSource.DEVICE_FAULT, tilt, f"{name}: {event.kind.value} {event.detail}".strip())

    def _on_door(self, door: str, is_open: bool) -> None:
        if is_open:
            if self._powering_up and door in self.doors_opened_while_off:
                # closed when the power went, open now: it was opened while the power was off
                self.ledger.event("door_open", door=door, while_power_off=True)
            else:
                self.ledger.event("door_open", door=door)
            self._tilt(TiltSource.DOOR, door, f"{door.replace('_', ' ')} door open")
        else:
            self.ledger.event("door_close", door=door)
            self._clear(TiltSource.DOOR, door)

    def _on_key(self, key: KeySwitch, on: bool) -> None:
        if key is KeySwitch.AUDIT:
            self.ledger.event("service_key", on=on)
            if on and self.cabinet.state in (S.IDLE, S.DISABLED, S.TILT):
                self.cabinet.service_key_on()
            elif not on and self.cabinet.state is S.SERVICE:
                self.cabinet.service_key_off()
        elif key is KeySwitch.JACKPOT_RESET and on and self.cabinet.state is S.HANDPAY:
            self.attendant_handpay(attendant="jackpot reset key")

    def _on_button(self, button: Button) -> None:
        try:
            if button is Button.CASH_OUT:
                if self.cabinet.state is S.HANDPAY and self._printer_handpay():
                    self.retry_ticket()
                else:
                    self.request_cashout()
            elif button in (Button.DEAL, Button.REPEAT):
                if self.kernel is None and self.cabinet.can_start_round:
                    self.play()
            elif button is Button.BET:
                self.set_bet(self.bet_unit + self.limits.min_bet if self.bet_unit < self.limits.max_bet
                             else self.limits.min_bet)
            elif button is Button.SERVICE:
                self.ledger.event("attendant_called")
        except TerminalError as exc:
            self.message = str(exc)

    # --- notes and vouchers in ------------------------------------------------------------------
    def _can_take(self, cents: int) -> str | None:
        """Why ``cents`` more cannot be credited now, or None."""
        if not self.cabinet.can_accept_money:
            return f"the cabinet cannot take money ({self.cabinet.state.name.lower()})"
        if self.demo is not None and self.demo.active:
            return "the cabinet is in demo mode"
        limit = self.cfg.limits.max_credits * self.ledger.denom_cents
        if self.ledger.credits_cents + cents > limit:
            return f"the credit limit ({self.cfg.limits.max_credits} credits) would be passed"
        if cents % self.ledger.denom_cents:
            return f"{cents} cents is not a whole number of credits"
        return None

    def _on_note_escrowed(self, cents: int) -> None:
        validator = self.devices.bill_validator
        assert validator is not None
        why = self._can_take(cents)
        if why is None and cents not in self.cfg.money.notes_cents:
            why = f"{cents / 100:.2f} notes are not accepted"
        if why is None:
            validator.stack()
        else:
            validator.return_escrow()
            self.ledger.event("bill_returned", cents=cents, reason=why)
            self.message = f"note returned: {why}"

    def _on_note_stacked(self, cents: int) -> None:
        self.ledger.bill_in(cents, denom_cents=cents)
        self._credit_recorded()
        self.notes_stacked += 1
        self.message = ""

    def _credit_recorded(self) -> None:
        """The stacked item's credit (or its refusal) is in critical memory: the validator may be told."""
        validator = self.devices.bill_validator
        if validator is not None:
            validator.credit_recorded()

    def _on_ticket_escrowed(self, barcode: str) -> None:
        validator = self.devices.bill_validator
        assert validator is not None
        why = self._can_take(0)                      # the state first: no host asked for nothing
        if why is None:
            try:
                link = self.hostlink
                host = link if link is not None and link.connected else None
                redemption = self.vouchers.begin_redeem(barcode, host=host)   # checks (asks the host) once
            except EgmError as exc:
                why = str(exc)
            else:
                why = self._can_take(redemption.amount_cents)
                if why is not None:
                    self.vouchers.cancel_redeem(barcode, why)
        if why is not None:
            validator.return_escrow()
            self.ledger.event("voucher_refused", validation=barcode, reason=why)
            self.message = f"voucher returned: {why}"
            return
        self.redeeming = barcode
        validator.stack()

    def _on_ticket_stacked(self, barcode: str) -> None:
        if self.redeeming != barcode:
            self.ledger.event("voucher_stacked_unexpected", validation=barcode)
            self._credit_recorded()
            return
        self.vouchers.commit_redeem(barcode)
        self._credit_recorded()
        self.redeeming = None
        self.message = ""

    # --- cashout --------------------------------------------------------------------------------
    def request_cashout(self) -> dict[str, Any]:
        """The player's cash-out: a voucher, or a handpay; pending until a round in play completes."""
        if self.ledger.credits_cents <= 0 and not self.cabinet.round_in_progress:
            raise TerminalError("there are no credits to cash out")
        self.cabinet.cashout()
        self._after_transition()
        return self.status()

    def _start_cashout(self) -> None:
        cents = self.ledger.credits_cents
        credits = cents // self.ledger.denom_cents
        if credits <= 0:
            # Nothing to pay (the round that was in play when the player asked lost it all).
            self.cabinet.cashout_empty()
            return
        if self.cabinet.requires_handpay(credits):
            self._enter_handpay(credits, HandpayReason.LIMIT)
            return
        problem = self._printer_problem()
        if problem is not None:
            self.message = f"ticket cannot be printed ({problem}): call an attendant"
            self._enter_handpay(credits, HandpayReason.PRINTER)
            return
        voucher = self.vouchers.issue(cents)
        printer = self.devices.printer
        assert printer is not None
        self.printing = Printing(voucher.validation, cents, self._clock())
        try:
            printer.print_voucher(self._ticket(voucher))
        except DeviceError as exc:
            self._ticket_not_printed(voucher.validation, str(exc))

    def _printer_problem(self) -> str | None:
        printer = self.devices.printer
        if printer is None:
            return "no printer"
        if not printer.is_open:
            return "printer offline"
        return printer.fault

    def _ticket(self, issued: IssuedVoucher, kind: TicketKind = TicketKind.CASHABLE) -> Ticket:
        return issued.ticket(venue=self.cfg.terminal.venue, address=tuple(self.cfg.money.venue_address),
                             machine=self.cfg.terminal.id[:20], kind=kind)

    def print_test_ticket(self) -> dict[str, Any]:
        """The service menu's printer test: a voucher printed TEST TICKET - VOID, worth one cent,
        numbered all zeros (a number the voucher book never issues, so it can never redeem)."""
        if self.cabinet.state is not S.SERVICE:
            raise TerminalError("a test ticket is printed with the technician's key on (SERVICE)")
        problem = self._printer_problem()
        if problem is not None:
            raise TerminalError(f"the printer is not ready: {problem}")
        if self.printing is not None or self._test_ticket is not None:
            raise TerminalError("a ticket is printing")
        test = IssuedVoucher(TEST_VALIDATION, sequence=0, amount_cents=1,
                             issued=dt.datetime.now(dt.UTC).replace(microsecond=0), expiry_days=0)
        ticket = self._ticket(test, TicketKind.TEST)
        self.ledger.event("test_ticket_sent")
        self._test_ticket = TEST_VALIDATION
        printer = self.devices.printer
        assert printer is not None
        try:
            printer.print_voucher(ticket)
        except DeviceError as exc:
            self._test_ticket = None
            raise TerminalError(f"the printer refused the test ticket: {exc}") from exc
        return {"printing": TEST_VALIDATION}

    def _on_ticket_printed(self, validation: str) -> None:
        if validation == self._test_ticket:
            self._test_ticket = None
            self.ledger.event("test_ticket_printed")
            return
        printing = self.printing
        if printing is None or printing.validation != validation:
            self.ledger.event("ticket_confirmed_unexpected", validation=validation)
            return
        self.vouchers.printed(validation)           # ticket_out: the credits leave the meter
        self.printing = None
        self.tickets_printed += 1
        self.last_ticket = validation
        self.message = f"take your ticket: {printing.cents / 100:.2f}"
        self.cabinet.ticket_printed(printing.cents // self.ledger.denom_cents)

    def _ticket_not_printed(self, validation: str, reason: str) -> None:
        if validation == self._test_ticket:
            self._test_ticket = None
            self.ledger.event("test_ticket_not_printed", reason=reason)
            return
        printing = self.printing
        if printing is None or printing.validation != validation:
            return
        self.printing = None
        self.vouchers.void(validation, reason)
        self.ledger.event("ticket_not_printed", validation=validation, cents=printing.cents, reason=reason)
        self.message = f"ticket not printed ({reason}): your credits are safe; call an attendant"
        if self.cabinet.state is S.CASHOUT:
            self._enter_handpay(printing.cents // self.ledger.denom_cents, HandpayReason.PRINTER)

    def _enter_handpay(self, credits: int, reason: HandpayReason) -> None:
        self.ledger.store_setting("cabinet.handpay", {"credits": credits, "reason": reason.value})
        self.cabinet.handpay(credits, reason)

    def _printer_handpay(self) -> bool:
        pending = self.cabinet.handpay_pending
        return pending is not None and pending[1] is HandpayReason.PRINTER

    def retry_ticket(self) -> dict[str, Any]:
        """From a printer handpay lockup: try the voucher again (the printer must be ready)."""
        if not (self.cabinet.state is S.HANDPAY and self._printer_handpay()):
            raise TerminalError("no ticket is waiting to be printed again")
        problem = self._printer_problem()
        if problem is not None:
            raise TerminalError(f"the printer is not ready: {problem}")
        self.ledger.store_setting("cabinet.handpay", {"credits": 0, "reason": ""})
        self.cabinet.retry_ticket()
        self._after_transition()
        return self.status()

    def attendant_handpay(self, attendant: str = "attendant") -> dict[str, Any]:
        """The attendant pays the lockup by hand: the amount is recorded, the lockup ends."""
        pending = self.cabinet.handpay_pending
        if self.cabinet.state is not S.HANDPAY or pending is None:
            raise TerminalError("no handpay is waiting")
        credits, reason = pending
        self.ledger.handpay(credits * self.ledger.denom_cents, attendant=attendant)
        self.ledger.store_setting("cabinet.handpay", {"credits": 0, "reason": ""})
        self.cabinet.handpay_key_off()
        self.message = ""
        return {"paid": credits, "reason": reason.value}

    # --- rounds ---------------------------------------------------------------------------------
    def choose_game(self, game: str) -> dict[str, Any]:
        if game not in self.cfg.games.enabled:
            raise TerminalError(f"game {game!r} is not enabled; enabled: {', '.join(self.cfg.games.enabled)}")
        if self.kernel is not None:
            raise TerminalError("a round is in progress")
        self.game_id = game
        return self.status()

    def use_config(self, cfg: Any, games: list[str]) -> None:
        """Play ``cfg`` from the next round; ``games`` changed options (their kernels and shoes are
        built again; a round in progress keeps the kernel it started with)."""
        self.cfg = cfg
        for game in games:
            self._kernels.pop(game, None)
            self._sources.pop(game, None)              # the shoe's composition may have changed

    def set_bet(self, unit: int) -> dict[str, Any]:
        if not isinstance(unit, int) or not self.limits.min_bet <= unit <= self.limits.max_bet:
            raise TerminalError(f"a bet is {self.limits.min_bet}..{self.limits.max_bet} credits, not {unit!r}")
        self.bet_unit = unit
        return self.status()

    def _kernel(self, game_id: str) -> RoundKernel:
        kernel = self._kernels.get(game_id)
        if kernel is None:
            game = get_game(game_id)
            options = configured_options(self.cfg, game_id)
            kernel = RoundKernel(game, options, limits=self.limits, journal=self.ledger,
                                 decision_timeout_s=self.cfg.games.decision_timeout_s, clock=self._clock)
            self._kernels[game_id] = kernel
        return kernel

    def _source(self, kernel: RoundKernel) -> Any:
        key = kernel.game.id
        source = self._sources.get(key)
        if source is None:
            shoe = self.devices.shoe
            if shoe is not None:
                source = PhysicalShoeSource(shoe, timeout=self._physical_timeout)
            else:
                source = RngShoe(self.rng, kernel.game.shoe(kernel.options))
            self._sources[key] = source
        return GatedSource(source, self._safe_point)

    def wagers_for(self, game_id: str | None = None) -> dict[int, dict[str, int]]:
        kernel = self._kernel(game_id or self.game_id)
        return kernel.game.automatic_wagers(kernel.options, self.seats, self.bet_unit)

    def play(self, wagers: Mapping[Any, Mapping[str, int]] | None = None, game: str | None = None) -> dict[str, Any]:
        """Start a round (the DEAL button): ``wagers`` by seat, else the automatic wagers at the
        current bet. The request is checked now and the deal starts on the terminal's next step,
        so the caller gets its answer at once; the round runs on (it may wait for cards or
        decisions) and ``status()["round"]`` follows it."""
        if game is not None:
            self.choose_game(game)
        if not self.cabinet.can_start_round or self._starting is not None:
            raise TerminalError(f"a round cannot start now ({self.cabinet.state.name.lower()})")
        kernel = self._kernel(self.game_id)
        try:
            chosen = {int(s): {str(n): a for n, a in b.items()} for s, b in (wagers or self.wagers_for()).items()}
        except (AttributeError, ValueError) as exc:
            raise TerminalError(f"wagers are {{seat: {{name: credits}}}}: {exc}") from None
        validate_wagers(kernel.game, kernel.options, chosen, self.limits, self.ledger.credits)
        stake = sum(sum(b.values()) for b in chosen.values()) + kernel.game.reserved_stake(kernel.options, chosen)
        if stake > self.ledger.credits:
            raise TerminalError(f"not enough credits: the round needs {stake}, the meter holds {self.ledger.credits}")
        self._starting = chosen
        self.message = ""
        return {**self.status(), "starting": True}

    def _begin_round(self) -> None:
        chosen, self._starting = self._starting, None
        if chosen is None or not self.cabinet.can_start_round:
            return
        kernel = self._kernel(self.game_id)
        dice = kernel.game.roll_dice(self.rng) if kernel.game.dice else None
        self.cabinet.start_round()
        self.kernel = kernel
        self._in_round = True
        try:
            kernel.begin(chosen, self._source(kernel), credits=self.ledger.credits, dice=dice)
        except CriticalMemoryError:
            raise
        except EgmError as exc:
            self.kernel = None
            self._kernels.pop(kernel.game.id, None)      # its machine stopped mid-round: a new one
            if kernel.phase is RoundState.BETTING:       # refused before anything was journaled
                self.cabinet.complete_round()
                self._after_transition()
            # Otherwise the journal holds the round (its stake is taken): it is resumed from the
            # journal, with the cards it has, as soon as play can continue (the tilt cleared).
            self._round_fault(exc)
            self.message = f"the round stopped: {exc}"
            return
        finally:
            self._in_round = False
        self._continue_round()

    def decide(self, seat: int, action: str) -> dict[str, Any]:
        kernel = self.kernel
        if kernel is None or kernel.phase is not RoundState.DECISIONS:
            raise TerminalError("no decision is awaited")
        if not self.cabinet.can_continue_round:
            raise TerminalError(f"play is stopped ({self.cabinet.state.name.lower()})")
        self._in_round = True
        try:
            kernel.decide(int(seat), action)
            self._continue_round()
        finally:
            self._in_round = False
        return self.status()

    def _continue_round(self) -> None:
        """After a step of the round: time out decisions; complete a finished round."""
        kernel = self.kernel
        if kernel is None:
            if self.ledger.open_round is not None and self.cabinet.state in (S.IDLE, S.PLAYING):
                self._resume_round()
            return
        if kernel.phase is RoundState.DECISIONS:
            self._hold_decision_clock(kernel)
            if self.cabinet.can_continue_round:
                self._in_round = True
                try:
                    kernel.expire()
                finally:
                    self._in_round = False
            if kernel.phase is RoundState.DECISIONS:
                return
        if kernel.phase is RoundState.COMPLETE and self.cabinet.can_continue_round:
            record = kernel.record()
            self.kernel = None
            self._paused_at = None
            self.last_record = record
            self.rounds_played += 1
            self.cabinet.complete_round()
            if self.on_round is not None:
                self.on_round(record)
            self._after_transition()

    def _decision_time_left(self, kernel: RoundKernel) -> float | None:
        """Seconds before the open decisions take their defaults (None: no decision awaited, or
        no time limit); frozen while play is stopped (the clock is held then)."""
        deadline = kernel.decisions_deadline
        if deadline is None or kernel.phase is not RoundState.DECISIONS:
            return None
        now = self._paused_at if self._paused_at is not None else self._clock()
        return round(max(0.0, deadline - now), 1)

    def _hold_decision_clock(self, kernel: RoundKernel) -> None:
        """The player's decision time does not run while play is stopped (a tilt, the key): the
        deadline moves on by the time the round was interrupted."""
        now = self._clock()
        if not self.cabinet.can_continue_round:
            if self._paused_at is None:
                self._paused_at = now
        elif self._paused_at is not None:
            if kernel.decisions_deadline is not None:
                kernel.decisions_deadline += now - self._paused_at
            self._paused_at = None

    def _resume_round(self) -> None:
        """Finish the round a power loss (or a fault mid-deal) interrupted, from its journal: the
        journaled cards again, then live cards (the RNG's from the rest of the shoe, or the
        physical shoe's next ones)."""
        if self.cabinet.state is S.IDLE:
            self.cabinet.start_round()
        shoe = self.devices.shoe
        physical = self.ledger.open_round.resume_data()["source"] == "physical"
        continuation = PhysicalShoeSource(shoe, timeout=self._physical_timeout) if physical and shoe else None
        self._in_round = True
        try:
            kernel = resume_round(self.ledger, self.rng, decider=None, continuation=continuation)
        except CriticalMemoryError:
            raise
        except EgmError as exc:
            self._round_fault(exc)
            self.message = f"the round stopped: {exc}"
            return
        finally:
            self._in_round = False
        assert kernel is not None
        self.ledger.event("round_resumed", round_id=kernel.round_id)
        self.kernel = kernel
        self._continue_round()

    def _safe_point(self) -> None:
        """Before every card: pace, handle inputs, and wait while the cabinet cannot play."""
        delay = self.cfg.cabinet.card_delay_ms / 1000
        deadline = self._clock() + delay
        self._pump(0)
        while True:
            if self._stop.is_set():
                raise TerminalStopped("the terminal is stopping")
            if self.cabinet.can_continue_round and self._clock() >= deadline and self._card_ready():
                return
            self._pump(0.02)

    def _card_ready(self) -> bool:
        shoe = self.devices.shoe
        if shoe is None:
            return True
        return bool(shoe.queued) or not shoe.is_open

    def _round_fault(self, exc: Exception) -> None:
        if isinstance(exc, RngError):
            self._tilt(TiltSource.RNG, "drbg", f"RNG failure: {exc}")
        elif isinstance(exc, LedgerError):
            self._tilt(TiltSource.CRITICAL_MEMORY, "ledger", f"critical memory: {exc}")
        elif isinstance(exc, ShoeExhausted):
            # The shoe could not give the deal its card (misread, empty): play stops until the
            # technician has the shoe right and clears the tilt (retest "device_fault:shoe.deal").
            self.ledger.event("shoe_error", reason=str(exc))
            self._tilt(TiltSource.DEVICE_FAULT, "shoe.deal", f"the shoe could not deal: {exc}")

    def retest(self, tilt: str) -> dict[str, Any]:
        """The technician's "clear tilt" for a condition nothing else clears: run its check again
        and clear it only if the check passes now. ``rng:drbg`` (the RNG's known-answer and health
        tests, then a new instantiation from fresh entropy) and ``self_test:<check>``."""
        from firmware.cabinet.selftest import check_critical_memory, check_rng, check_software
        from firmware.rng.power_up import power_up_self_test
        from firmware.rng.service import RngService

        active = {t.key: t for t in self.cabinet.active_tilts}
        if tilt not in active:
            raise TerminalError(f"no tilt {tilt!r} is active (active: {', '.join(active) or 'none'})")
        source, name = active[tilt].source, active[tilt].name
        personalization = self.cfg.rng.personalization + ":" + self.cfg.terminal.id

        def rng_check() -> str | None:
            try:
                return check_rng(power_up_self_test(personalization=personalization))
            except EgmError as exc:
                return str(exc)

        checks: dict[tuple[TiltSource, str], Callable[[], str | None]] = {
            (TiltSource.RNG, "drbg"): rng_check,
            (TiltSource.SELF_TEST, "rng_health"): rng_check,
            (TiltSource.SELF_TEST, "software_signature"): lambda: check_software(self.cfg),
            (TiltSource.SELF_TEST, "critical_memory"): lambda: check_critical_memory(self.ledger),
            (TiltSource.DEVICE_FAULT, "shoe.deal"):
                lambda: None if self.devices.shoe is not None and self.devices.shoe.is_open else "the shoe is not connected",
        }
        check = checks.get((source, name))
        if check is None:
            raise TerminalError(f"{tilt} clears by itself when its cause goes (a door closed, a device back)")
        problem = check()
        self.ledger.event("tilt_retest", tilt=tilt, result="failed" if problem else "passed", detail=problem or "")
        if problem:
            raise TerminalError(f"{tilt} stays: {problem}")
        if source is TiltSource.RNG or name == "rng_health":
            self.rng = RngService.production(personalization.encode("utf-8"),
                                             reseed_interval=self.cfg.rng.reseed_interval)
            self._sources.clear()                     # every RNG shoe draws from the new instance
        self._clear(source, name)
        return self.status()

    # --- the cabinet's own bookkeeping ----------------------------------------------------------
    def _tilt(self, source: TiltSource, name: str, reason: str) -> None:
        self.cabinet.tilt(source, name, reason)

    def _clear(self, source: TiltSource, name: str) -> None:
        if self.cabinet.has_tilt(source, name):
            self.cabinet.clear_tilt(source, name)
            self._after_transition()

    def _after_transition(self) -> None:
        """Act on the state the cabinet is now in (a cashout to start; the self-test to run again
        once the tilts of a failed one are cleared)."""
        if self.cabinet.state is S.CASHOUT and self.printing is None:
            self._start_cashout()
        elif self.cabinet.state is S.SELF_TEST:
            self._run_self_test()

    def _cabinet_event(self, kind: str, detail: dict[str, Any]) -> None:
        """Every cabinet event goes to critical memory before it takes effect."""
        if kind == "transition" and detail.get("trigger") in _JOURNALED_TRIGGERS:
            return
        self.ledger.event(f"cabinet.{kind}", **detail)

    def _reconnect(self) -> None:
        now = self._clock()
        if now < self._next_reconnect:
            return
        self._next_reconnect = now + self.cfg.cabinet.reconnect_interval_s
        for name, device in self.devices.items():
            if device.lifecycle is not Lifecycle.OPEN and name in self._offline_since \
                    and device.auto_reconnect:
                with contextlib.suppress(DeviceError):
                    device.reopen()

    def _update_outputs(self) -> None:
        validator = self.devices.bill_validator
        if validator is None or not validator.is_open:
            return
        want = self._can_take(0) is None and self.redeeming is None
        if want != self._validator_enabled:
            try:
                if want:
                    validator.enable(self.cfg.money.notes_cents, tickets=self.cfg.money.tickets_in)
                else:
                    validator.disable()
                self._validator_enabled = want
            except DeviceError as exc:
                log.warning("bill validator: %s", exc)

    # --- what the screens and ``egm simctl status`` show ----------------------------------------
    def status(self) -> dict[str, Any]:
        kernel = self.kernel
        pending = self.cabinet.handpay_pending
        return {
            "state": self.cabinet.state.name,
            "interrupted": self.cabinet.interrupted_state.name if self.cabinet.interrupted_state else None,
            "tilts": [self._tilt_status(t) for t in self.cabinet.active_tilts],
            "credits": self.ledger.credits,
            "credits_cents": self.ledger.credits_cents,
            "game": self.game_id,
            "bet": self.bet_unit,
            "round": None if kernel is None else self._round_status(kernel),
            "handpay": None if pending is None else {"credits": pending[0], "reason": pending[1].value},
            "printing": None if self.printing is None else self.printing.validation,
            "message": self.message,
            "accepting_notes": bool(self._validator_enabled),
            "demo": None if self.demo is None else self.demo.status(),
            "devices": {n: d.lifecycle.value for n, d in self.devices.items()},
            "rounds_played": self.rounds_played,
            "starting": self._starting is not None,
            "last_ticket": self.last_ticket,
            "last_round": None if self.last_record is None else self.last_record.get("round_id"),
            "host": None if self.hostlink is None else self.hostlink.status(),
        }

    def _tilt_status(self, tilt: Tilt) -> dict[str, Any]:
        """One active tilt for ``status()``; a device's also says where it is looked for (``port``)."""
        entry: dict[str, Any] = {"tilt": tilt.key, "reason": tilt.reason}
        if tilt.source in (TiltSource.DEVICE_DISCONNECTED, TiltSource.DEVICE_FAULT):
            port = self.devices.port(tilt.name.partition(".")[0])
            if port:
                entry["port"] = port
        return entry

    def _round_status(self, kernel: Any) -> dict[str, Any]:
        """The round in play: its decisions awaited (``pending``, each with the cards its player may
        see) and, while some are, the seats that have answered (``decided``)."""
        pending = kernel.pending()
        return {
            "round_id": kernel.round_id, "game": kernel.game.id, "phase": kernel.phase.value,
            "cards_dealt": kernel.cards_dealt,
            "dice": None if kernel.dice is None else list(kernel.dice),
            "decide_within_s": self._decision_time_left(kernel),
            "pending": [{"seat": r.seat, "kind": r.kind, "actions": list(r.actions), "hint": r.hint,
                         "view": kernel.decision_view(r.seat)} for r in pending],
            "decided": [{"seat": seat, "action": action, "view": kernel.decision_view(seat)}
                        for seat, action in kernel.decisions] if pending else [],
        }

    def _publish(self) -> None:
        self.snapshot = self.status()
