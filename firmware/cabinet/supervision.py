"""Supervision: the devices opened and watched, the tilts they and the doors raise, the keys and
buttons, reconnections and the technician's retests.

Tilts: a door open, a device fault or disconnection, critical memory that cannot be written, an
RNG failure. Every tilt, clearing and cabinet transition is an event in critical memory (rounds
are in their own journal): :meth:`Supervision.cabinet_event` is the cabinet's event sink.

:class:`Supervision` owns the devices' offline times and the next reconnection attempt, the
power-up's door comparison, the last touches and the self-test. It drives the cabinet's tilt,
self-test and service-key triggers, and after a transition starts what the new state asks for
(:meth:`Supervision.after_transition`: a cashout, the self-test again). Buttons go to the part
they are for (cash-out, rounds).
"""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from firmware.cabinet.devices import not_connected
from firmware.cabinet.errors import TerminalError
from firmware.cabinet.states import CabinetState, TiltSource
from firmware.cards.errors import ShoeExhausted
from firmware.errors import EgmError
from firmware.ledger.errors import LedgerError
from firmware.rng.errors import RngError
from hal.base import Device, Lifecycle
from hal.errors import DeviceError
from hal.events import (
    Button,
    ButtonPressed,
    DeviceFault,
    DeviceOffline,
    DeviceOnline,
    Door,
    DoorChanged,
    FaultKind,
    KeySwitch,
    KeyTurned,
    Touch,
)

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

log = logging.getLogger(__name__)
S = CabinetState

#: Printer faults that stop tickets but not play: a cashout meanwhile becomes a handpay.
PRINTER_SOFT_FAULTS = frozenset({FaultKind.PAPER_OUT, FaultKind.JAM, FaultKind.CHASSIS_OPEN})

#: The cabinet transitions that are not logged as events because the round journal records them.
_JOURNALED_TRIGGERS = frozenset({"start_round", "complete_round"})

SelfTest = Callable[["Terminal"], dict[str, str]]


class Supervision:
    """Devices, doors, keys, buttons, tilts and retests of ``terminal``."""

    def __init__(self, terminal: Terminal, self_test: SelfTest | None) -> None:
        self.t = terminal
        self._self_test = self_test
        self._offline_since: dict[str, float] = {}
        self._next_reconnect = 0.0
        self._powering_up = False
        #: The last touches, for the service menu's touch test (the screens take touches themselves).
        self.touches: collections.deque[dict[str, Any]] = collections.deque(maxlen=20)
        #: Doors the I/O board reported open at power-up that critical memory last saw closed.
        self.doors_opened_while_off: list[str] = []

    # --- power-up -------------------------------------------------------------------------------
    def open_devices(self) -> None:
        devices = self.t.devices
        if devices.bill_validator is not None:
            # its ACK of a credit waits for the ledger (MoneyIn._credit_recorded)
            devices.bill_validator.ack_on_record = True
        for name, device in devices.items():
            self._open_device(name, device)

    def _open_device(self, name: str, device: Device) -> None:
        try:
            device.open()
        except DeviceError as exc:
            # A device tilt, not a failed start: the cabinet stays up, tries the device again every
            # reconnect_interval_s (reconnect) and clears the tilt when it answers (DeviceOnline).
            log.warning("%s did not open: %s", name, exc)
            self.tilt(TiltSource.DEVICE_DISCONNECTED, name,
                      not_connected(name, self.t.devices.port(name), str(exc).removeprefix(f"{name}: ")))
            self._offline_since[name] = self.t.clock()

    def doors_found_open_at_power_up(self, timeout: float = 1.0) -> None:
        """The I/O board reports every input in a SNAPSHOT right after it is opened: wait for it,
        and compare its doors with the doors critical memory last recorded (open while off)."""
        io = self.t.devices.io_board
        if io is None or not io.is_open:
            return
        io.wait_inputs(timeout)
        last = self.t.ledger.door_states()
        inputs = io.inputs
        self.doors_opened_while_off = [door.value for door in Door
                                       if inputs.get(door) and not last.get(door.value, False)]

    def run_self_test(self) -> dict[str, str]:
        """The self-test's checks, and their outcome to the cabinet (which may be in TILT already: a
        device that did not open). Its failed checks, each with its reason."""
        failures = self._self_test(self.t) if self._self_test is not None else {}
        if failures:
            self.t.cabinet.self_test_failed(failures)
        else:
            self.t.cabinet.self_test_passed()
        return failures

    @contextlib.contextmanager
    def powering_up(self) -> Any:
        """Events handled meanwhile are the power-up's (a door open now may have opened while off)."""
        self._powering_up = True
        try:
            yield
        finally:
            self._powering_up = False

    def devices_not_connected(self) -> dict[str, str]:
        """The fitted devices that are not connected now, each with where it is looked for (the
        self-test's ``devices`` line): ``{"bill_validator": "not connected (/dev/ttyUSB0)"}``."""
        return {t.name: f"not connected ({self.t.devices.port(t.name) or 'no port'})"
                for t in self.t.cabinet.active_tilts if t.source is TiltSource.DEVICE_DISCONNECTED}

    # --- tilts and the cabinet's transitions ----------------------------------------------------
    def tilt(self, source: TiltSource, name: str, reason: str) -> None:
        self.t.cabinet.tilt(source, name, reason)

    def clear(self, source: TiltSource, name: str) -> None:
        if self.t.cabinet.has_tilt(source, name):
            self.t.cabinet.clear_tilt(source, name)
            self.after_transition()

    def after_transition(self) -> None:
        """Act on the state the cabinet is now in (a cashout to start; the self-test to run again
        once the tilts of a failed one are cleared)."""
        t = self.t
        if t.cabinet.state is S.CASHOUT and t.cashout.printing is None:
            t.cashout.start()
        elif t.cabinet.state is S.SELF_TEST:
            self.run_self_test()

    def cabinet_event(self, kind: str, detail: dict[str, Any]) -> None:
        """Every cabinet event goes to critical memory before it takes effect."""
        if kind == "transition" and detail.get("trigger") in _JOURNALED_TRIGGERS:
            return
        self.t.ledger.event(f"cabinet.{kind}", **detail)

    def round_fault(self, exc: Exception) -> None:
        """A round stopped on an error: the tilt that stops play until its cause is dealt with."""
        if isinstance(exc, RngError):
            self.rng_failed(exc, "round")
        elif isinstance(exc, LedgerError):
            self.tilt(TiltSource.CRITICAL_MEMORY, "ledger", f"critical memory: {exc}")
        elif isinstance(exc, ShoeExhausted):
            # The shoe could not give the deal its card (misread, empty): play stops until the
            # technician has the shoe right and clears the tilt (retest "device_fault:shoe.deal").
            self.t.ledger.event("shoe_error", reason=str(exc))
            self.tilt(TiltSource.DEVICE_FAULT, "shoe.deal", f"the shoe could not deal: {exc}")

    def rng_failed(self, exc: RngError, during: str) -> None:
        """The RNG failed (an entropy health test at a reseed, the DRBG): recorded, then the RNG
        tilt, which only the technician's retest clears (:meth:`retest`, ``rng:drbg``)."""
        self.t.ledger.event("rng_failure", during=during, detail=str(exc))
        self.tilt(TiltSource.RNG, "drbg", f"RNG failure: {exc}")

    def reseed_rng(self) -> dict[str, Any]:
        """Reseed the RNG now from fresh health-tested entropy (a reseed also happens by itself
        every ``[rng] reseed_interval`` generate requests). A failing source is the RNG tilt."""
        try:
            self.t.rng.reseed()
        except RngError as exc:
            self.rng_failed(exc, "reseed")
            return {"reseeded": False, "failure": str(exc)}
        self.t.ledger.event("rng_reseeded")
        return {"reseeded": True}

    def reconnect(self) -> None:
        """Every ``reconnect_interval_s``: try again the devices that went away."""
        now = self.t.clock()
        if now < self._next_reconnect:
            return
        self._next_reconnect = now + self.t.cfg.cabinet.reconnect_interval_s
        for name, device in self.t.devices.items():
            if device.lifecycle is not Lifecycle.OPEN and name in self._offline_since \
                    and device.auto_reconnect:
                with contextlib.suppress(DeviceError):
                    device.reopen()

    # --- device events --------------------------------------------------------------------------
    def on_offline(self, name: str, event: DeviceOffline) -> None:
        t = self.t
        self._offline_since.setdefault(name, t.clock())
        self.tilt(TiltSource.DEVICE_DISCONNECTED, name, not_connected(name, t.devices.port(name), event.reason))
        if name == "printer":
            t.cashout.printer_offline(event.reason)
        if name == "bill_validator":
            t.money_in.connection_changed()

    def on_online(self, name: str, event: DeviceOnline) -> None:
        self._offline_since.pop(name, None)
        self.clear(TiltSource.DEVICE_DISCONNECTED, name)
        if name == "bill_validator":
            self.t.money_in.connection_changed()      # set it again on the new connection

    def on_fault(self, name: str, event: DeviceFault) -> None:
        if name == "printer" and event.kind in PRINTER_SOFT_FAULTS:
            self.t.ledger.event("printer_fault_cleared" if event.cleared else "printer_fault",
                                kind=event.kind.value, detail=event.detail)
            return
        tilt = f"{name}.{event.kind.value}"
        if event.cleared:
            self.clear(TiltSource.DEVICE_FAULT, tilt)
        else:
            self.tilt(TiltSource.DEVICE_FAULT, tilt, f"{name}: {event.kind.value} {event.detail}".strip())

    def on_door(self, name: str, event: DoorChanged) -> None:
        door, ledger = event.door.value, self.t.ledger
        if event.open:
            if self._powering_up and door in self.doors_opened_while_off:
                # closed when the power went, open now: it was opened while the power was off
                ledger.event("door_open", door=door, while_power_off=True)
            else:
                ledger.event("door_open", door=door)
            self.tilt(TiltSource.DOOR, door, f"{door.replace('_', ' ')} door open")
        else:
            ledger.event("door_close", door=door)
            self.clear(TiltSource.DOOR, door)

    def on_key(self, name: str, event: KeyTurned) -> None:
        t, key, on = self.t, event.key, event.on
        if key is KeySwitch.AUDIT:
            t.ledger.event("service_key", on=on)
            if on and t.cabinet.state in (S.IDLE, S.DISABLED, S.TILT):
                t.cabinet.service_key_on()
            elif not on and t.cabinet.state is S.SERVICE:
                t.cabinet.service_key_off()
        elif key is KeySwitch.JACKPOT_RESET and on and t.cabinet.state is S.HANDPAY:
            t.cashout.attendant_handpay(attendant="jackpot reset key")

    def on_button_pressed(self, name: str, event: ButtonPressed) -> None:
        """The button deck: the screens first (they may take it), else the terminal's own handling."""
        if self.t.on_input is None or not self.t.on_input(event):
            self.on_button(event.button)

    def on_button(self, button: Button) -> None:
        t = self.t
        try:
            if button is Button.CASH_OUT:
                if t.cabinet.state is S.HANDPAY and t.cashout.printer_handpay():
                    t.cashout.retry_ticket()
                else:
                    t.cashout.request()
            elif button in (Button.DEAL, Button.REPEAT):
                t.rounds.deal_button()
            elif button is Button.BET:
                t.rounds.next_bet()
            elif button is Button.SERVICE:
                t.ledger.event("attendant_called")
        except TerminalError as exc:
            t.message = str(exc)

    def on_touch(self, name: str, event: Touch) -> None:
        self.touches.append({"x": event.x, "y": event.y, "phase": event.phase.value, "slot": event.slot})
        if self.t.on_input is not None:
            self.t.on_input(event)

    # --- the technician's retests ---------------------------------------------------------------
    def retest(self, tilt: str) -> dict[str, Any]:
        """The technician's "clear tilt" for a condition nothing else clears: run its check again
        and clear it only if the check passes now. ``rng:drbg`` (the RNG's known-answer and health
        tests, then a new instantiation from fresh entropy) and ``self_test:<check>``."""
        from firmware.cabinet.selftest import (
            check_critical_memory,
            check_rng,
            check_software,
            rng_power_up_test,
            terminal_rng,
        )
        from firmware.rng.service import RngService

        t = self.t
        active = {a.key: a for a in t.cabinet.active_tilts}
        if tilt not in active:
            raise TerminalError(f"no tilt {tilt!r} is active (active: {', '.join(active) or 'none'})")
        source, name = active[tilt].source, active[tilt].name

        fresh: list[RngService] = []

        def rng_check() -> str | None:
            """The power-up RNG test, then the new instance the cabinet will draw from, both from
            the cabinet's own entropy source (health-tested afresh)."""
            try:
                problem = check_rng(rng_power_up_test(t.cfg, t.entropy_source))
                if problem is None:
                    fresh.append(terminal_rng(t.cfg, t.entropy_source))
                return problem
            except EgmError as exc:
                return str(exc)

        checks: dict[tuple[TiltSource, str], Callable[[], str | None]] = {
            (TiltSource.RNG, "drbg"): rng_check,
            (TiltSource.SELF_TEST, "rng_health"): rng_check,
            (TiltSource.SELF_TEST, "software_signature"): lambda: check_software(t.cfg),
            (TiltSource.SELF_TEST, "critical_memory"): lambda: check_critical_memory(t.ledger),
            (TiltSource.DEVICE_FAULT, "shoe.deal"):
                lambda: None if t.devices.shoe is not None and t.devices.shoe.is_open else "the shoe is not connected",
        }
        check = checks.get((source, name))
        if check is None:
            raise TerminalError(f"{tilt} clears by itself when its cause goes (a door closed, a device back)")
        problem = check()
        t.ledger.event("tilt_retest", tilt=tilt, result="failed" if problem else "passed", detail=problem or "")
        if problem:
            raise TerminalError(f"{tilt} stays: {problem}")
        if source is TiltSource.RNG or name == "rng_health":
            t.new_rng(fresh[0])
        self.clear(source, name)
        return t.status()
