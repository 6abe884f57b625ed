"""TCL ticket printer driver: the host role of :class:`TclCodec` over pyserial.

A TCL printer answers nothing but ENQ, so the driver is a poll loop: one thread sends ENQ every
``poll_interval`` seconds and hands each status record to :class:`StatusTracker` (pure: records in,
events out). ``print_voucher`` runs on the caller's thread; a lock keeps one exchange on the wire.

The rule: **a ticket counts as printed only when the printer confirms it**. After ``^P|...|^`` the
driver keeps polling; the ticket is :class:`TicketPrinted` when a record shows VALIDATION_DONE with
BUSY clear, and :class:`TicketNotPrinted` (with the reason) when one shows paper out, a jam, the
chassis open, a failure, a power-up (RESET: a power cut mid-ticket), a refused job, a job that ended
without its validation number, a job that never started within ``timeout``, or when the printer is
lost with the ticket pending. TCL status records carry no checksum, so the tracker acts on a record
only when two in a row agree (a damaged flag byte that still looks valid cannot fake an outcome).

Before each print the driver makes sure the printer is idle and VALIDATION_DONE is clear (``^C|^``
if not), so the flag that confirms a ticket can only come from that ticket's job: a print command
lost on the wire leaves the flag clear and the ticket is reported not printed.
"""

from __future__ import annotations

import collections
import logging
import time
from dataclasses import dataclass, field
from typing import ClassVar

from drivers.codec import NEED_DATA, Garbage, Role
from drivers.serial_loop import PolledSerialDevice, drop_waiting, read_some
from drivers.tcl.codec import (
    SERIAL,
    ClearErrors,
    DefineRegion,
    DefineTemplate,
    Flag,
    HostMessage,
    Print,
    StatusRecord,
    StatusRequest,
    TclCodec,
)
from drivers.tcl.receipt import RECEIPT_REGIONS, RECEIPT_TEMPLATE, receipt_fields
from drivers.tcl.voucher import REGIONS, TEMPLATE, fields
from hal.devices.printer import PrinterStatus, TicketPrinter
from hal.devices.ticket import Receipt, Ticket
from hal.errors import DeviceError, DeviceInitError, DeviceOperationError, DeviceTimeoutError
from hal.events import (
    DeviceEvent,
    DeviceFault,
    FaultKind,
    PaperLow,
    TicketNotPrinted,
    TicketPrinted,
)

log = logging.getLogger(__name__)

#: Conditions the cabinet is told about (a tilt until they clear), and what they are called.
FAULTS: dict[Flag, tuple[FaultKind, str]] = {
    Flag.PAPER_OUT: (FaultKind.PAPER_OUT, "paper out"),
    Flag.JAM: (FaultKind.JAM, "paper jam"),
    Flag.CHASSIS_OPEN: (FaultKind.CHASSIS_OPEN, "chassis open"),
    Flag.HEAD_ERROR: (FaultKind.FAILURE, "print head error"),
    Flag.SYSTEM_ERROR: (FaultKind.FAILURE, "system error"),
    Flag.VOLTAGE_ERROR: (FaultKind.FAILURE, "voltage error"),
    Flag.TEMPERATURE_ERROR: (FaultKind.FAILURE, "temperature error"),
    Flag.LIBRARY_CORRUPT: (FaultKind.FAILURE, "print library corrupted"),
    Flag.FLASH_ERROR: (FaultKind.FAILURE, "flash error"),
}
FAULT_FLAGS = Flag.NONE
for _flag in FAULTS:
    FAULT_FLAGS |= _flag
#: A job the printer refused or could not read.
REFUSALS: dict[Flag, str] = {
    Flag.LIBRARY_REF_ERROR: "the printer does not know the template",
    Flag.DATA_ERROR: "the fields do not fit the template",
    Flag.COMMAND_ERROR: "the printer could not read or take the job",
    Flag.BUFFER_OVERFLOW: "buffer overflow",
    Flag.JOB_MEMORY_OVERFLOW: "job memory overflow",
}
#: Flags that must be clear before a print is sent (``^C|^`` clears them).
NOT_READY = Flag.VALIDATION_DONE | Flag.RESET | Flag.LIBRARY_LOAD_ERROR
for _flag in REFUSALS:
    NOT_READY |= _flag


def describe(flags: Flag) -> str:
    names = [f.name.lower() for f in Flag if f and flags & f and f.name]
    return ", ".join(names) or "none"


# --- records -> events (sans-I/O) --------------------------------------------------------------
#: Extra agreed-status reads after CLEAR ERRORS before a printer counts as not ready.
MAKE_READY_RETRIES = 2


@dataclass(slots=True)
class Pending:
    """The ticket sent and not yet confirmed either way."""

    validation: str
    sent_at: float
    started: bool = False          #: a record showed the job running (BUSY) or done
    interrupted: bool = False      #: a status request went unanswered meanwhile
    receipt: bool = False          #: a text receipt: no barcode, done at its top of form


@dataclass(slots=True)
class Reaction:
    events: list[DeviceEvent] = field(default_factory=list)
    redefine: bool = False         #: the printer powered up: send the regions and template again


class StatusTracker:
    """Turns status records into events; settles the pending ticket exactly once."""

    def __init__(self, device: str, *, start_timeout: float) -> None:
        self.device = device
        self.start_timeout = start_timeout
        self.pending: Pending | None = None
        self.previous: StatusRecord | None = None
        self.agreed: StatusRecord | None = None     #: the last record seen twice in a row
        self.faults = Flag.NONE
        self.paper_low = False

    def sent(self, validation: str, now: float, *, receipt: bool = False) -> None:
        if self.pending is not None:
            raise DeviceOperationError(f"{self.device}: ticket {self.pending.validation} is "
                                       "still printing")
        self.pending = Pending(validation, now, receipt=receipt)

    def on_status(self, record: StatusRecord, now: float) -> Reaction:
        out = Reaction()
        pending = self.pending
        if pending is not None and record.flags & (Flag.BUSY | Flag.VALIDATION_DONE):
            pending.started = True
        agreed = record == self.previous
        self.previous = record
        if not agreed:
            if pending is not None:
                self._check_start(pending, now, out)
            return out
        self.agreed = record
        flags = record.flags
        self._track_faults(flags, out)
        low = bool(flags & Flag.PAPER_LOW)
        if low != self.paper_low:
            self.paper_low = low
            out.events.append(PaperLow(self.device, low))
        if flags & Flag.RESET:
            out.redefine = True
        if pending is not None:
            self._settle(pending, flags, now, out)
        return out

    def on_missed(self, now: float) -> Reaction:
        """A status request got no (readable) answer."""
        self.previous = None
        if self.pending is not None:     # unknown until it answers again (or is lost)
            self.pending.interrupted = True
        return Reaction()

    def on_lost(self, reason: str) -> list[DeviceEvent]:
        """The printer is gone: a pending ticket was not confirmed, so it was not printed."""
        self.previous = None
        return self.not_printed(f"printer lost mid-ticket ({reason})")

    def _track_faults(self, flags: Flag, out: Reaction) -> None:
        now = flags & FAULT_FLAGS
        for flag, (kind, detail) in FAULTS.items():
            if self.faults & flag and not now & flag:
                out.events.append(DeviceFault(self.device, kind, detail, cleared=True))
            elif now & flag and not self.faults & flag:
                out.events.append(DeviceFault(self.device, kind, detail))
        self.faults = now

    def _settle(self, pending: Pending, flags: Flag, now: float, out: Reaction) -> None:
        mid = " mid-ticket" if pending.started or pending.interrupted else ""
        done = Flag.TOP_OF_FORM if pending.receipt else Flag.VALIDATION_DONE
        if flags & done and not flags & Flag.BUSY and (pending.started or not pending.receipt):
            self.pending = None
            out.events.append(TicketPrinted(self.device, pending.validation))
        elif flags & Flag.RESET:
            out.events += self.not_printed("power cut mid-ticket" if pending.started
                                            or pending.interrupted else "printer powered up")
        elif flags & FAULT_FLAGS and not flags & Flag.BUSY:
            detail = FAULTS[next(f for f in FAULTS if flags & f)][1]
            out.events += self.not_printed(detail + mid)
        elif flags & Flag.BUSY:
            return
        elif refusal := next((text for f, text in REFUSALS.items() if flags & f), None):
            out.events += self.not_printed(f"job refused: {refusal}")
        elif pending.started:
            out.events += self.not_printed("the job ended without its validation number")
        else:
            self._check_start(pending, now, out)

    def _check_start(self, pending: Pending, now: float, out: Reaction) -> None:
        if not pending.started and now - pending.sent_at > self.start_timeout:
            out.events += self.not_printed(
                f"the printer did not start the job within {self.start_timeout:g} s")

    def not_printed(self, reason: str) -> list[DeviceEvent]:
        """Settle the pending ticket (if any) as not printed."""
        pending, self.pending = self.pending, None
        if pending is None:
            return []
        log.warning("%s: ticket %s NOT printed: %s", self.device, pending.validation, reason)
        return [TicketNotPrinted(self.device, pending.validation, reason)]


# --- the driver --------------------------------------------------------------------------------
class TclPrinter(PolledSerialDevice, TicketPrinter):
    """A TCL ticket printer on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "printer"
    SERIAL_SETTINGS = SERIAL
    THREAD_PREFIX = "tcl-poll"

    def __init__(self, name: str, *, port: str, timeout: float = 1.0,
                 poll_interval: float = 0.2) -> None:
        super().__init__(name, port=port, timeout=timeout, poll_interval=poll_interval)
        self._codec = TclCodec(Role.HOST)
        self._defining = False
        self._tracker = StatusTracker(name, start_timeout=self._start_timeout())
        #: Link health: garbage, damaged, timeouts, stale, redefined.
        self.counters: collections.Counter[str] = collections.Counter()

    def _start_timeout(self) -> float:
        return max(self.timeout, 2 * self.poll_interval)

    # --- lifecycle hooks ----------------------------------------------------------------------
    def _open(self) -> None:
        self._tracker = StatusTracker(self.name, start_timeout=self._start_timeout())
        self._open_port()
        with self._link:
            for _ in range(self.MAX_MISSED_POLLS):
                if self._transact() is not None:
                    break
            else:
                raise DeviceTimeoutError(f"{self.name}: no answer to ENQ on {self.port}")
            self._define()
        self._start_polling()

    def _close(self) -> None:
        self._stop.set()
        for event in self._tracker.not_printed("closed before the printer confirmed it"):
            self._emit(event)
        super()._close()

    def lost(self, reason: str) -> None:
        for event in self._tracker.on_lost(reason):
            self._emit(event)
        super().lost(reason)

    # --- the cabinet's requests ---------------------------------------------------------------
    @property
    def fault(self) -> str | None:
        """The fault flags of the last agreed status as text (``paper_out, jam``), or None."""
        faults = self._tracker.faults
        return describe(faults) if faults else None

    @property
    def printing(self) -> str | None:
        """The validation number of the ticket awaiting confirmation, if any."""
        pending = self._tracker.pending
        return None if pending is None else pending.validation

    def print_voucher(self, ticket: Ticket) -> None:
        """Send ``ticket``; its outcome follows as ``TicketPrinted`` or ``TicketNotPrinted``.

        Nothing is sent (and ``TicketNotPrinted`` follows at once) if the printer reports paper
        out, a jam, the chassis open or a failure, or cannot be made ready. A second ticket while
        one is pending is a :class:`DeviceOperationError`.
        """
        if not isinstance(ticket, Ticket):
            raise TypeError(f"print_voucher takes a Ticket, not {type(ticket).__name__}")
        self._print_job(ticket.validation, Print(TEMPLATE.id, 1, fields(ticket)), receipt=False)

    def print_receipt(self, receipt: Receipt) -> None:
        """Send a text ``receipt`` (template 1), as :meth:`print_voucher`; it counts printed at the
        top of form that ends it (a receipt has no barcode to validate)."""
        if not isinstance(receipt, Receipt):
            raise TypeError(f"print_receipt takes a Receipt, not {type(receipt).__name__}")
        self._print_job(receipt.key, Print(RECEIPT_TEMPLATE.id, 1, receipt_fields(receipt)), receipt=True)

    def _print_job(self, key: str, command: Print, *, receipt: bool) -> None:
        self.require_open()
        with self._exchange("print"):
            if self._tracker.pending is not None:
                raise DeviceOperationError(f"{self.name}: ticket {self._tracker.pending.validation}"
                                           " is still printing")
            problem = self._make_ready()
            self._tracker.sent(key, time.monotonic(), receipt=receipt)
            if problem:
                for event in self._tracker.not_printed(problem):
                    self._emit(event)
                return
            self._send(command)
            log.info("%s: %s %s sent", self.name, "receipt" if receipt else "ticket", key)

    def poll(self) -> StatusRecord:
        """Ask for the status now (it goes through the tracker as usual); the record."""
        self.require_open()
        with self._exchange("poll"):
            record = self._poll_once()
        if record is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to ENQ")
        return record

    def status(self) -> PrinterStatus:
        """Ask for the status now: its flags as text and the printer's firmware version."""
        record = self.poll()
        return PrinterStatus(describe(record.flags), record.version)

    # --- protocol steps (link lock held) ------------------------------------------------------
    def _define(self) -> None:
        """Send the regions and the voucher template, clear, and check the printer took them."""
        self._defining = True
        try:
            for region in (*REGIONS, *RECEIPT_REGIONS):
                self._send(DefineRegion(region))
            self._send(DefineTemplate(TEMPLATE))
            self._send(DefineTemplate(RECEIPT_TEMPLATE))
            self._send(ClearErrors())
            record = self._agreed_status()
        finally:
            self._defining = False
        if record is None:
            raise DeviceTimeoutError(f"{self.name}: no answer after the template was sent")
        if record.flags & (Flag.LIBRARY_LOAD_ERROR | Flag.RESET | Flag.COMMAND_ERROR):
            raise DeviceInitError(f"{self.name}: the printer refused the voucher template "
                                  f"({describe(record.flags)})")

    def _make_ready(self) -> str:
        """Bring the printer to idle with VALIDATION_DONE clear; the reason it cannot be, or ""."""
        record = self._agreed_status()
        if record is None:
            return "the printer does not answer"
        if record.flags & Flag.RESET:
            self.counters["redefined"] += 1
            try:
                self._define()
            except DeviceError as exc:
                return str(exc)
            record = self._tracker.agreed
        elif record.flags & NOT_READY:
            self._send(ClearErrors())
            record = self._agreed_status()
            # A line that repeats replies can hand back the status from before the clear, twice
            # (late copies of earlier answers): ask again before calling the printer not ready.
            for _ in range(MAKE_READY_RETRIES):
                if record is None or not record.flags & NOT_READY:
                    break
                record = self._agreed_status()
        if record is None:
            return "the printer does not answer"
        flags = record.flags
        if flags & FAULT_FLAGS:
            return FAULTS[next(f for f in FAULTS if flags & f)][1]
        if flags & Flag.BUSY:
            return "the printer is busy"
        if flags & NOT_READY:
            return f"the printer could not be made ready ({describe(flags & NOT_READY)})"
        return ""

    def _agreed_status(self) -> StatusRecord | None:
        """Poll until two records in a row agree (a few tries); that record, or None."""
        for _ in range(2 * self.MAX_MISSED_POLLS):
            record = self._poll_once()
            if record is not None and self._tracker.agreed is record:
                return record
        return None

    def _poll_once(self) -> StatusRecord | None:
        record = self._transact()
        now = time.monotonic()
        if record is None:
            self._missed += 1
            reaction = self._tracker.on_missed(now)
        else:
            self._missed = 0
            reaction = self._tracker.on_status(record, now)
        for event in reaction.events:
            self._emit(event)
        if reaction.redefine and self._tracker.pending is None and not self._defining:
            log.warning("%s: the printer powered up: sending the template again", self.name)
            self.counters["redefined"] += 1
            self._define()
        return record

    # --- the wire -----------------------------------------------------------------------------
    def _send(self, message: HostMessage) -> None:
        self._port().write(self._codec.send(message))

    def _transact(self) -> StatusRecord | None:
        """ENQ; the status record that answers it, or None (time-out, damaged record)."""
        port = self._port()
        waiting = drop_waiting(port)
        if waiting or self._codec.buffered:
            self.counters["stale"] += 1
            log.debug("%s: %d stale bytes dropped", self.name, waiting + self._codec.buffered)
        self._codec = codec = TclCodec(Role.HOST)
        port.write(codec.send(StatusRequest()))
        deadline = time.monotonic() + self.timeout
        while True:
            while (event := codec.next_event()) is not NEED_DATA:
                if isinstance(event, Garbage):
                    damaged = event.reason != "bytes before '*'"
                    self.counters["damaged" if damaged else "garbage"] += 1
                    log.warning("%s: garbage from the printer (%s): %r", self.name, event.reason,
                                event.data)
                    if damaged:
                        return None
                elif isinstance(event, StatusRecord):     # the host's codec decodes nothing else
                    return event
            if time.monotonic() >= deadline or self._stop.is_set():
                self.counters["timeouts"] += 1
                return None
            codec.receive_data(read_some(port))

    # --- the poll thread ----------------------------------------------------------------------
    def _poll_step(self) -> None:
        self._poll_once()
