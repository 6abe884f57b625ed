"""JCM ID-003 bill validator driver: the host role of :class:`Id003Codec` over pyserial.

The validator speaks only when spoken to, so the driver is a poll loop: one thread asks for the
status every ``poll_interval`` seconds and turns status *changes* into device events through
:class:`StatusTracker` (pure: statuses in, events and actions out). The cabinet's requests
(``enable``, ``disable``, ``stack``, ``return_escrow``, ``hold``, ``poll``) run on the caller's thread;
a lock keeps one exchange on the wire at a time.

One exchange (:meth:`Id003Validator._transact`): drop whatever is already waiting on the line (a
late or repeated reply to an earlier request), send the request, read until a frame *that answers
that request* arrives (a status for a status request, ACK/INVALID_COMMAND for an operation, the echo
for a setting) or ``timeout`` passes. Other frames are stale and skipped; garbage is logged and
skipped; a reply with a bad CRC ends the exchange at once as unanswered. ``MAX_MISSED_POLLS``
status requests in a row without an answer, or a port error, and the device is :meth:`lost`.

Exactly once: a note or ticket is credited (``NoteStacked``/``TicketStacked``) when VEND_VALID is
first seen for the escrowed item, before the driver ACKs it; a repeated VEND_VALID (the ACK was
lost) is ACKed again and credits nothing, and STACKED credits only if VEND_VALID was never seen.

ACK after the record: with ``ack_on_record`` (the cabinet sets it) the VEND_VALID is not ACKed until
the cabinet says the credit is in critical memory (:meth:`Id003Validator.credit_recorded`); the
validator repeats VEND_VALID meanwhile and the note stays in the stacking path. A power loss between
the two then leaves a credited note the validator reports at power-up, never a stacked note that
was not credited.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from drivers.codec import NEED_DATA, Garbage, Role
from drivers.escrow import Escrow, EscrowFront, EscrowItem, Fault, FaultTable
from drivers.id003.codec import (
    REJECT_REASONS,
    SERIAL,
    Command,
    Frame,
    Id003Codec,
    Status,
    parse_escrow,
)
from drivers.id003.settings import (
    ALL_ENABLED,
    BARCODE_FUNCTION,
    FAILURE_CODES,
    INHIBIT_OFF,
    INHIBIT_ON,
    USD_TABLE,
    barcode_inhibit,
    codes_for_cents,
    enable_mask,
    notes_in_cents,
    parse_assignment,
)
from drivers.serial_loop import PolledSerialDevice, drop_waiting, read_some
from hal.devices.bill_validator import BillValidator
from hal.errors import DeviceOperationError, DeviceTimeoutError
from hal.events import DeviceEvent, FaultKind, Rejected

log = logging.getLogger(__name__)

#: Fault statuses: what the cabinet is told.
FAULTS: FaultTable = {
    Status.STACKER_FULL: (FaultKind.STACKER_FULL, "stacker full"),
    Status.STACKER_OPEN: (FaultKind.STACKER_OPEN, "stacker open (removed)"),
    Status.JAM_IN_ACCEPTOR: (FaultKind.JAM, "jam in acceptor"),
    Status.JAM_IN_STACKER: (FaultKind.JAM, "jam in stacker"),
    Status.CHEATED: (FaultKind.CHEAT, "cheat detected"),
    Status.FAILURE: (FaultKind.FAILURE, "failure"),
}
POWER_UP_STATUSES = frozenset({Status.POWER_UP, Status.POWER_UP_BILL_IN_ACCEPTOR,
                               Status.POWER_UP_BILL_IN_STACKER})
#: Statuses after which no item is in the validator any more.
_IDLE_STATUSES = frozenset({Status.IDLING, Status.DISABLED, Status.INITIALIZE, Status.ACCEPTING})
#: Frames that answer a status request: statuses, minus ACK.
_STATUS_CODES = frozenset(Status) - {Status.ACK}
_OPERATION_REPLIES = frozenset({Status.ACK, Status.INVALID_COMMAND, Status.COMMUNICATION_ERROR})


def _is_status(frame: Frame) -> bool:
    return frame.code in _STATUS_CODES


def _is_operation_reply(frame: Frame) -> bool:
    return frame.code in _OPERATION_REPLIES


def _answers(command: Command) -> Callable[[Frame], bool]:
    """Frames that answer a setting or read-back ``command``."""
    codes = {command, Status.INVALID_COMMAND, Status.COMMUNICATION_ERROR}
    return lambda frame: frame.code in codes


# --- statuses -> events (sans-I/O) -------------------------------------------------------------
@dataclass(slots=True)
class Reaction:
    """What one status means: events for the cabinet and what the driver must send."""

    events: list[DeviceEvent] = field(default_factory=list)
    ack: bool = False             #: ACK the VEND_VALID
    return_escrow: bool = False   #: an escrowed note the currency table does not know
    reinitialise: bool = False    #: the validator powered up again: reset, resend the settings


class StatusTracker(Escrow):
    """Turns a stream of ID-003 statuses into device events, each item credited exactly once."""

    def __init__(self, device: str, notes: dict[int, int], *, hold_ack: bool = False) -> None:
        super().__init__(device, notes, hold_ack=hold_ack)
        self.fault: Fault | None = None
        self.last: Frame | None = None

    def on_status(self, frame: Frame) -> Reaction:
        out = Reaction()
        previous, self.last = self.last, frame
        code = frame.code
        self._track_fault(frame, out)
        if code == Status.ESCROW:
            self._on_escrow(frame, out)
        elif code == Status.VEND_VALID:
            self._credit(out, late=False)
            out.ack = self.ack_due
        elif code == Status.STACKED:
            self._credit(out, late=True)
            self.item = None
        elif code == Status.RETURNING:
            self.returned(out.events)
        elif code == Status.REJECTING:
            if previous is None or previous.code != Status.REJECTING:
                reason = frame.data[0] if frame.data else 0
                text = REJECT_REASONS.get(reason, f"reject reason 0x{reason:02X}")
                out.events.append(Rejected(self.device, text))
            self.drop("rejected")
        elif code in _IDLE_STATUSES:
            if self.escrowed:
                log.warning("%s: %s left escrow without RETURNING; reported returned",
                            self.device, self.describe())
                self.returned(out.events)
            self.item = None
        elif code in POWER_UP_STATUSES:
            out.reinitialise = True
            if code == Status.POWER_UP_BILL_IN_ACCEPTOR:
                self.returned(out.events)        # the reset that follows hands it back
            else:
                self.drop(f"power up ({Status(code).name})")
        elif code in (Status.INVALID_COMMAND, Status.COMMUNICATION_ERROR, Status.PAUSE):
            log.info("%s: status %s", self.device, Status(code).name)
        return out

    def _track_fault(self, frame: Frame, out: Reaction) -> None:
        fault = FAULTS.get(frame.code)
        if fault is not None and frame.code == Status.FAILURE and frame.data:
            what = FAILURE_CODES.get(frame.data[0], "unknown")
            fault = (fault[0], f"failure 0x{frame.data[0]:02X}: {what}")
        if fault == self.fault:
            return
        self.report_faults([self.fault] if self.fault else [], [fault] if fault else [], out.events)
        self.fault = fault

    def _on_escrow(self, frame: Frame, out: Reaction) -> None:
        escrow = parse_escrow(frame)
        if escrow is None:
            log.warning("%s: malformed ESCROW data %s ignored", self.device, frame.data.hex())
            return
        origin = f"code 0x{escrow.note_code:02X}" if escrow.barcode is None else ""
        if escrow.barcode is not None:
            item = EscrowItem(("ticket", escrow.barcode), ticket=True, barcode=escrow.barcode)
        elif escrow.note_code in self.notes:
            cents = self.notes[escrow.note_code]
            item = EscrowItem(("note", cents), value_cents=cents, origin=origin)
        else:
            item = EscrowItem(("unknown", escrow.note_code), origin=origin)
        if not self.place(item, out.events) or item.known:
            return
        log.error("%s: escrow code 0x%02X is not in the currency table: returning it",
                  self.device, escrow.note_code)
        out.return_escrow = True
        out.events.append(Rejected(self.device, f"unknown note code 0x{escrow.note_code:02X}"))
        item.refused = True

    def _credit(self, out: Reaction, *, late: bool) -> None:
        item = self.item
        if item is None or item.refused:
            if not late:
                log.error("%s: VEND_VALID with nothing known in escrow: nothing credited",
                          self.device)
            return
        if late and not item.credited:
            log.warning("%s: STACKED without VEND_VALID for %s: credited now", self.device,
                        item.describe())
        self.credit(out.events)


# --- the driver --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Wanted:
    """What the cabinet asked for, restored after the validator powers up again."""

    mask: bytes = ALL_ENABLED
    barcode_inhibit: bytes = barcode_inhibit(notes=True, tickets=True)
    inhibit: bytes = INHIBIT_ON


class Id003Validator(PolledSerialDevice, EscrowFront, BillValidator):
    """An ID-003 bill validator on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "bill_validator"
    SERIAL_SETTINGS = SERIAL
    THREAD_PREFIX = "id003-poll"

    def __init__(self, name: str, *, port: str, timeout: float = 1.0,
                 poll_interval: float = 0.2) -> None:
        super().__init__(name, port=port, timeout=timeout, poll_interval=poll_interval)
        self._codec = Id003Codec(Role.HOST)
        self._initialising = False
        self._wanted = _Wanted()
        self._tracker: StatusTracker = StatusTracker(name, notes_in_cents(USD_TABLE))
        self._recorded = threading.Event()
        #: Link health for diagnostics: garbage, bad_crc, timeouts, stale, comm_errors, reinit.
        self.counters: collections.Counter[str] = collections.Counter()

    # --- lifecycle hooks ----------------------------------------------------------------------
    def _open(self) -> None:
        self._tracker = StatusTracker(self.name, self._tracker.notes, hold_ack=self._tracker.hold_ack)  # a fresh start
        self._recorded.clear()
        self._wanted = _Wanted()          # inhibited until the cabinet enables it again
        self._open_port()
        with self._link:
            self._initialise(probe=True)
        self._start_polling()

    # --- the cabinet's requests ---------------------------------------------------------------
    @property
    def ack_on_record(self) -> bool:
        """Whether a credited VEND_VALID waits for :meth:`credit_recorded` before its ACK."""
        return self._tracker.hold_ack

    @ack_on_record.setter
    def ack_on_record(self, value: bool) -> None:
        self._tracker.hold_ack = bool(value)

    def credit_recorded(self) -> None:
        """The cabinet has the last ``NoteStacked``/``TicketStacked`` in critical memory: ACK its
        VEND_VALID at the next poll (any thread)."""
        self._recorded.set()

    def enable(self, denominations_cents: Iterable[int], *, tickets: bool = True) -> None:
        """Accept exactly the notes worth ``denominations_cents`` (and tickets if ``tickets``)."""
        self.require_open()
        codes = codes_for_cents(self._tracker.notes, denominations_cents)
        wanted = _Wanted(enable_mask(codes), barcode_inhibit(notes=bool(codes), tickets=tickets),
                         INHIBIT_OFF)
        with self._exchange("enable"):
            self._apply(wanted)
            self._wanted = wanted

    def disable(self) -> None:
        """Accept nothing (the validator reports DISABLED)."""
        self.require_open()
        with self._exchange("disable"):
            self._setting(Command.SET_INHIBIT, INHIBIT_ON)
            self._wanted = _Wanted(self._wanted.mask, self._wanted.barcode_inhibit, INHIBIT_ON)

    def stack(self) -> None:
        """Stack the escrowed note or ticket; its ``*Stacked`` event follows (exactly once)."""
        self._escrow_operation(Command.STACK_1, {Status.STACKING, Status.VEND_VALID,
                                                Status.STACKED})

    def return_escrow(self) -> None:
        """Hand the escrowed note or ticket back; ``Returned`` follows."""
        self._escrow_operation(Command.RETURN, {Status.RETURNING})

    def hold(self) -> None:
        """Keep the item in escrow longer (while the host validates a ticket)."""
        self._escrow_operation(Command.HOLD, {Status.HOLDING})

    def poll(self) -> Status | int:
        """Ask for the status now (its events are queued as usual); the status code."""
        self.require_open()
        with self._exchange("poll"):
            frame = self._poll_once()
        if frame is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to a status request")
        try:
            return Status(frame.code)
        except ValueError:
            return frame.code

    def status(self) -> str:
        """Ask for the status now: its name (``0x..`` for a code the protocol does not name)."""
        status = self.poll()
        return status.name if isinstance(status, Status) else f"0x{status:02X}"

    def _escrow_operation(self, command: Command, took_effect: set[int]) -> None:
        self.require_open()
        with self._exchange(command.name):
            if not self._tracker.escrowed:
                raise DeviceOperationError(f"{self.name}: nothing in escrow to {command.name}")
            self._operation(command, took_effect)

    # --- protocol steps (called with the link lock held) --------------------------------------
    def _initialise(self, *, probe: bool) -> None:
        """Reset and configure: at open (``probe``: first check it answers) and after a power-up."""
        self._initialising = True
        try:
            if probe:
                for _ in range(self.MAX_MISSED_POLLS):
                    if self._transact(Frame(Command.STATUS_REQUEST), _is_status) is not None:
                        break
                else:
                    raise DeviceTimeoutError(f"{self.name}: no answer to status requests on "
                                             f"{self.port}")
            self._operation(Command.RESET, {Status.INITIALIZE})
            self._tracker.notes = self._read_notes()
            self._setting(Command.SET_SECURITY, b"\x00\x00")
            self._setting(Command.SET_OPTIONAL_FUNCTION, b"\x00\x00")
            self._setting(Command.SET_BARCODE_FUNCTION, BARCODE_FUNCTION)
            self._apply(self._wanted)
        finally:
            self._initialising = False

    def _apply(self, wanted: _Wanted) -> None:
        self._setting(Command.SET_ENABLE, wanted.mask)
        self._setting(Command.SET_BARCODE_INHIBIT, wanted.barcode_inhibit)
        self._setting(Command.SET_INHIBIT, wanted.inhibit)

    def _read_notes(self) -> dict[int, int]:
        data = self._request(Command.GET_CURRENCY_ASSIGNMENT)
        try:
            return notes_in_cents(parse_assignment(data))
        except ValueError as exc:
            log.warning("%s: currency assignment unreadable (%s): using the USD table", self.name,
                        exc)
            return notes_in_cents(USD_TABLE)

    def _operation(self, command: Command, took_effect: set[int]) -> None:
        """Send an operation command until it is ACKed (or seen to have taken effect)."""
        for _ in range(self.MAX_MISSED_POLLS):
            reply = self._transact(Frame(command), _is_operation_reply)
            if reply is not None and reply.code == Status.ACK:
                return
            if reply is not None and reply.code == Status.INVALID_COMMAND:
                raise DeviceOperationError(f"{self.name}: the validator refused {command.name} "
                                           f"(status {self._last_status_name()})")
            if reply is not None:            # COMMUNICATION_ERROR: our frame arrived damaged
                self.counters["comm_errors"] += 1
                continue
            # No readable answer: the command may have arrived and only the ACK been lost.
            status = self._poll_once()
            if status is not None and status.code in took_effect:
                log.info("%s: %s took effect though its ACK was lost", self.name, command.name)
                return
        raise DeviceTimeoutError(f"{self.name}: no ACK to {command.name}")

    def _setting(self, command: Command, data: bytes) -> None:
        """Send a setting until it is echoed."""
        reply = self._ask(Frame(command, data))
        if reply.data != data:
            raise DeviceOperationError(f"{self.name}: {command.name} {data.hex()} echoed as "
                                       f"{reply.data.hex()}")

    def _request(self, command: Command) -> bytes:
        """A read-back command's value."""
        return self._ask(Frame(command)).data

    def _ask(self, frame: Frame) -> Frame:
        command = Command(frame.code)
        for _ in range(self.MAX_MISSED_POLLS):
            reply = self._transact(frame, _answers(command))
            if reply is None or reply.code == Status.COMMUNICATION_ERROR:
                continue
            if reply.code == Status.INVALID_COMMAND:
                raise DeviceOperationError(f"{self.name}: the validator refused {command.name}")
            return reply
        raise DeviceTimeoutError(f"{self.name}: no answer to {command.name}")

    def _poll_once(self) -> Frame | None:
        """One status request; its status goes through the tracker. None: no (readable) answer."""
        frame = self._transact(Frame(Command.STATUS_REQUEST), _is_status)
        if frame is None:
            self._missed += 1
            return None
        self._missed = 0
        if self._recorded.is_set():
            self._recorded.clear()
            self._tracker.recorded()
        self._react(self._tracker.on_status(frame))
        return frame

    def _react(self, reaction: Reaction) -> None:
        for event in reaction.events:
            self._emit(event)
        if reaction.ack:
            self._send(Frame(Command.ACK))
        if reaction.return_escrow:
            try:
                self._operation(Command.RETURN, {Status.RETURNING})
            except DeviceOperationError as exc:
                log.error("%s: could not return an unknown note: %s", self.name, exc)
        if reaction.reinitialise and not self._initialising:
            log.warning("%s: the validator powered up again: resetting and resending settings",
                        self.name)
            self.counters["reinit"] += 1
            self._initialise(probe=False)

    def _last_status_name(self) -> str:
        last = self._tracker.last
        return "unknown" if last is None else last.name(Role.DEVICE)

    # --- the wire -----------------------------------------------------------------------------
    def _send(self, frame: Frame) -> None:
        self._port().write(self._codec.send(frame))

    def _transact(self, frame: Frame, accept: Callable[[Frame], bool]) -> Frame | None:
        """Send ``frame``; the first frame ``accept`` takes, or None (time-out, damaged reply)."""
        port = self._port()
        waiting = drop_waiting(port)
        if waiting or self._codec.buffered:       # after the last reply: late, repeated
            self.counters["stale"] += 1
            log.debug("%s: %d stale bytes dropped", self.name, waiting + self._codec.buffered)
        self._codec = codec = Id003Codec(Role.HOST)
        port.write(codec.send(frame))
        deadline = time.monotonic() + self.timeout
        while True:
            damaged = False
            while (event := codec.next_event()) is not NEED_DATA:   # leftovers stay buffered
                if isinstance(event, Garbage):
                    damaged |= event.reason == "bad CRC"
                    self.counters["bad_crc" if event.reason == "bad CRC" else "garbage"] += 1
                    log.warning("%s: garbage from the validator (%s): %s", self.name,
                                event.reason, event.data.hex(" "))
                elif isinstance(event, Frame) and accept(event):
                    return event
                else:
                    self.counters["stale"] += 1
                    log.debug("%s: %s does not answer %s: skipped", self.name,
                              event.name(Role.DEVICE), frame.name(Role.HOST))
            if damaged:
                return None
            if time.monotonic() >= deadline or self._stop.is_set():
                self.counters["timeouts"] += 1
                log.debug("%s: no answer to %s within %s s", self.name, frame.name(Role.HOST),
                          self.timeout)
                return None
            codec.receive_data(read_some(port))

    # --- the poll thread ----------------------------------------------------------------------
    def _poll_step(self) -> None:
        self._poll_once()
