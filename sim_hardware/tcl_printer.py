"""A TCL ticket printer, simulated: the device role of :class:`TclCodec`, a paper path and a renderer.

The printer answers only ENQ (one status record each); commands have no reply. It keeps the
regions and templates the host defines (in RAM: a power cut loses them) and renders every print
job from *those definitions*, not from the voucher module's, into a :class:`PrintedTicket`: the text
of each text region and the bar/space pattern of each barcode region, which
:meth:`PrintedTicket.voucher` reads back (the barcode decoded from its pattern, like a scanner).

A print job takes ``print_polls`` status requests (at least 2)::

    accepted:  BUSY set; VALIDATION_DONE, TOP_OF_FORM cleared       (the first ENQ reports BUSY)
    1st ENQ:   the first half of the template's regions on paper    (a mid-ticket fault hits here)
    last ENQ:  the rest (the barcode region last in the voucher template); BUSY cleared,
               VALIDATION_DONE (if the template has a barcode) and TOP_OF_FORM set

A print is refused (nothing printed, no BUSY) while paper is out, the paper jammed, the chassis is
open, another job runs, or the printer powered up and was not cleared; an undefined template or
region sets LIBRARY_REF_ERROR, fields that do not fit set DATA_ERROR, an unreadable command
COMMAND_ERROR, a refused definition LIBRARY_LOAD_ERROR. ``^C|^`` clears the latched flags
(``codec.CLEARABLE``); paper, jam and chassis are physical and clear through the control API.

Control API (thread-safe): paper low / out / load, jam, chassis open/close, faults armed for the
middle of the next ticket (paper out, jam, chassis open, power cut), power off/on, and wire faults
(corrupt, drop, repeat a reply; lose a command; unplug).
"""

from __future__ import annotations

import collections
import enum
import logging
from dataclasses import dataclass, field

from drivers.codec import Garbage, Role
from drivers.tcl.codec import (
    CLEARABLE,
    ClearErrors,
    DefineRegion,
    DefineTemplate,
    Flag,
    FormFeed,
    Print,
    Region,
    RegionKind,
    StatusRecord,
    StatusRequest,
    TclCodec,
    Template,
)
from drivers.tcl.receipt import lines_from_regions
from drivers.tcl.voucher import itf_decode, itf_encode, ticket_from_regions
from hal.devices.ticket import Ticket
from sim_hardware.answering import PoweredDevice

log = logging.getLogger(__name__)


class MidTicket(enum.Enum):
    """What can go wrong in the middle of the next ticket."""

    PAPER_OUT = "paper_out"
    JAM = "jam"
    CHASSIS_OPEN = "chassis_open"
    POWER_CUT = "power_cut"


#: The physical condition each mid-ticket fault leaves behind.
_CONDITION = {MidTicket.PAPER_OUT: Flag.PAPER_OUT, MidTicket.JAM: Flag.JAM,
              MidTicket.CHASSIS_OPEN: Flag.CHASSIS_OPEN}
#: Conditions that stop printing.
STOPPERS = Flag.PAPER_OUT | Flag.JAM | Flag.CHASSIS_OPEN


@dataclass(frozen=True, slots=True)
class PrintedTicket:
    """What came out of the printer: each text region's text and each barcode's bar pattern."""

    template: str
    texts: dict[str, str]
    barcodes: dict[str, str]           #: region id -> modules, "1" bar "0" space
    regions: dict[str, Region] = field(default_factory=dict)
    complete: bool = True

    def barcode_digits(self, region: str) -> str:
        return itf_decode(self.barcodes[region])

    def receipt(self) -> tuple[str, ...]:
        """The lines of this paper if it is a whole text receipt (``ValueError`` if not)."""
        if not self.complete or self.barcodes:
            raise ValueError("a receipt is a whole ticket without a barcode")
        return lines_from_regions(self.texts)

    def voucher(self) -> Ticket:
        """The voucher this paper shows (``ValueError`` if it is not a whole, readable one)."""
        if not self.complete:
            raise ValueError("a ticket stopped mid-print is not a voucher")
        if len(self.barcodes) != 1:
            raise ValueError(f"a voucher has one barcode, this ticket {len(self.barcodes)}")
        (region, _), = self.barcodes.items()
        return ticket_from_regions(self.texts, self.barcode_digits(region))


@dataclass(slots=True)
class _Job:
    template: Template
    fields: dict[str, str]             #: region id -> field
    copies: int
    steps: int = 0
    texts: dict[str, str] = field(default_factory=dict)
    barcodes: dict[str, str] = field(default_factory=dict)


class TclPrinterSimulator(PoweredDevice):
    """One simulated TCL printer. ``feed(bytes) -> [bytes]`` is the whole device; ``serve`` runs it
    on a byte port."""

    WHO = "tcl sim"

    def __init__(self, *, version: str = "EGMTCL01", print_polls: int = 2, paper: int = 500,
                 low_at: int = 20) -> None:
        if print_polls < 2:
            raise ValueError(f"a print takes at least 2 status requests, not {print_polls}")
        StatusRecord(version=version)            # validates the version
        super().__init__()                       # the lock, repeat and unplug
        self.version = version
        self.print_polls = print_polls
        self.low_at = low_at
        self.printed: list[PrintedTicket] = []
        self.partial: list[PrintedTicket] = []
        #: Host messages by kind ("ENQ", "P", "R", "T", "C", "f") and garbage reports.
        self.received: collections.Counter[str] = collections.Counter()
        self.garbage: list[Garbage] = []
        self.feeds = 0
        self._paper = paper
        self._conditions = Flag.NONE             # physical: paper out, jam, chassis, paper low
        self._armed: MidTicket | None = None
        self._dark_polls = 1
        self._off_polls = 0                      # ENQs left unanswered before power comes back
        self._powered = True
        self._next: set[str] = set()             # one-shot wire faults: corrupt, drop
        self._lose: set[str] = set()             # host message kinds to lose once
        self._power_up()
        self._update_paper()

    # --- state --------------------------------------------------------------------------------
    def _power_up(self) -> None:
        self._codec = TclCodec(Role.DEVICE)
        self._latched = Flag.RESET | Flag.TOP_OF_FORM
        self.regions: dict[str, Region] = {}
        self.templates: dict[str, Template] = {}
        self._job: _Job | None = None

    @property
    def flags(self) -> Flag:
        with self._lock:
            return self._flags()

    def _flags(self) -> Flag:
        busy = Flag.BUSY if self._job is not None else Flag.NONE
        return self._latched | self._conditions | busy

    @property
    def powered(self) -> bool:
        return self._powered

    @property
    def busy(self) -> bool:
        return self._job is not None

    @property
    def paper(self) -> int:
        return self._paper

    def status(self) -> StatusRecord:
        with self._lock:
            return StatusRecord(self._flags(), self.version)

    def _update_paper(self) -> None:
        if self._paper <= 0:
            self._conditions |= Flag.PAPER_OUT
        if self._paper <= self.low_at:
            self._conditions |= Flag.PAPER_LOW

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; the writes to make (a status record per ENQ)."""
        with self._lock:
            if self._unplug:
                return []
            if not self._powered:
                self._count_dark(data)
                return []
            out: list[bytes] = []
            for event in self._received(data):
                out += self._on_event(event)
                if not self._powered:           # a power cut mid-print ends this feed
                    break
            return out

    def _count_dark(self, data: bytes) -> None:
        """While powered off, an armed automatic power-on counts the ENQs it ignores."""
        if self._off_polls <= 0:
            return
        self._off_polls -= data.count(b"\x05")
        if self._off_polls <= 0:
            self._off_polls = 0
            self._power_on()

    def _on_event(self, event: object) -> list[bytes]:
        if isinstance(event, Garbage):
            log.debug("tcl sim: garbage from the host (%s): %r", event.reason, event.data)
            self.garbage.append(event)
            self._latched |= Flag.COMMAND_ERROR
            return []
        kind = "ENQ" if isinstance(event, StatusRequest) else _kind(event)
        if kind in self._lose:
            self._lose.discard(kind)
            log.debug("tcl sim: %s lost on the wire", kind)
            return []
        self.received[kind] += 1
        if isinstance(event, StatusRequest):
            record = StatusRecord(self._flags(), self.version)
            self._tick()
            return self._wire(self._codec.send(record))
        self._command(event)
        return []

    def _command(self, command: object) -> None:
        match command:
            case DefineRegion(region=region):
                self.regions[region.id] = region
            case DefineTemplate(template=template):
                missing = [r for r in template.regions if r not in self.regions]
                if missing:
                    log.info("tcl sim: template %s names undefined regions %s", template.id,
                             missing)
                    self._latched |= Flag.LIBRARY_LOAD_ERROR
                else:
                    self.templates[template.id] = template
            case ClearErrors():
                self._latched &= ~CLEARABLE
            case FormFeed():
                if self._job is None and not self._conditions & STOPPERS:
                    self.feeds += 1
                    self._latched |= Flag.TOP_OF_FORM
            case Print():
                self._print(command)

    def _print(self, command: Print) -> None:
        if self._job is not None or self._conditions & STOPPERS or self._latched & Flag.RESET:
            log.info("tcl sim: print refused (%r)", self._flags())
            self._latched |= Flag.COMMAND_ERROR
            return
        template = self.templates.get(command.template)
        if template is None:
            self._latched |= Flag.LIBRARY_REF_ERROR
            return
        problem = self._check_fields(template, command.fields)
        if problem:
            log.info("tcl sim: print refused: %s", problem)
            self._latched |= Flag.DATA_ERROR
            return
        self._latched &= ~(Flag.VALIDATION_DONE | Flag.TOP_OF_FORM)
        self._job = _Job(template, dict(zip(template.regions, command.fields, strict=True)),
                         command.copies)

    def _check_fields(self, template: Template, fields: tuple[str, ...]) -> str:
        if len(fields) != len(template.regions):
            return f"{len(fields)} fields for {len(template.regions)} regions"
        for rid, value in zip(template.regions, fields, strict=True):
            region = self.regions[rid]
            if len(value) > region.length:
                return f"region {rid}: {len(value)} characters, room for {region.length}"
            if region.kind is RegionKind.BARCODE_I2OF5:
                if not (value.isdigit() and value.isascii()) or not value or len(value) % 2:
                    return f"region {rid}: an even count of digits, not {value!r}"
                if len(itf_encode(value)) > region.width:
                    return f"region {rid}: the barcode is wider than {region.width} dots"
        return ""

    def _tick(self) -> None:
        """A status request was answered: the job moves on one step."""
        job = self._job
        if job is None:
            return
        job.steps += 1
        regions = job.template.regions
        half = len(regions) // 2
        if job.steps == 1:
            self._render(job, regions[:half])
            if self._armed is not None:
                self._stop_mid_ticket(job, self._armed)
            return
        if job.steps < self.print_polls:
            return
        self._render(job, regions[half:])
        self._job = None
        for _ in range(job.copies):
            self.printed.append(PrintedTicket(job.template.id, dict(job.texts),
                                              dict(job.barcodes), self._regions_of(job)))
        self._paper -= job.copies
        has_barcode = any(self.regions[r].kind is RegionKind.BARCODE_I2OF5 for r in regions)
        self._latched |= Flag.TOP_OF_FORM | (Flag.VALIDATION_DONE if has_barcode else Flag.NONE)
        self._update_paper()

    def _render(self, job: _Job, regions: tuple[str, ...]) -> None:
        for rid in regions:
            region = self.regions[rid]
            value = job.fields[rid]
            if region.kind is RegionKind.BARCODE_I2OF5:
                job.barcodes[rid] = itf_encode(value)
            else:
                job.texts[rid] = value

    def _regions_of(self, job: _Job) -> dict[str, Region]:
        return {rid: self.regions[rid] for rid in job.template.regions}

    def _stop_mid_ticket(self, job: _Job, fault: MidTicket) -> None:
        self._armed = None
        self._job = None
        self.partial.append(PrintedTicket(job.template.id, dict(job.texts), dict(job.barcodes),
                                          self._regions_of(job), complete=False))
        log.info("tcl sim: %s mid-ticket", fault.value)
        if fault is MidTicket.POWER_CUT:
            self._power_off(self._dark_polls)
            return
        if fault is MidTicket.PAPER_OUT:
            self._paper = 0
        self._conditions |= _CONDITION[fault]

    def _wire(self, data: bytes) -> list[bytes]:
        if "corrupt" in self._next:
            self._next.discard("corrupt")
            damaged = bytearray(data)
            damaged[14] ^= 0x60               # F1 leaves 0x40..0x5F: detectably malformed
            data = bytes(damaged)
        elif "drop" in self._next:            # armed together, they hit two replies in a row
            self._next.discard("drop")
            return []
        return self._copies(data)

    # --- control API: paper, mechanism, power ----------------------------------------------
    def paper_low(self, on: bool = True) -> None:
        with self._lock:
            if on:
                self._conditions |= Flag.PAPER_LOW
            else:
                self._conditions &= ~Flag.PAPER_LOW

    def paper_out(self) -> None:
        """The paper runs out now (between tickets)."""
        with self._lock:
            self._paper = 0
            self._conditions |= Flag.PAPER_OUT | Flag.PAPER_LOW

    def load_paper(self, tickets: int = 500) -> None:
        with self._lock:
            self._paper = tickets
            self._conditions &= ~(Flag.PAPER_OUT | Flag.PAPER_LOW)
            self._latched |= Flag.TOP_OF_FORM
            self._update_paper()

    def jam(self) -> None:
        with self._lock:
            self._conditions |= Flag.JAM
            if self._job is not None:
                self._stop_mid_ticket(self._job, MidTicket.JAM)

    def clear_jam(self) -> None:
        with self._lock:
            self._conditions &= ~Flag.JAM

    def open_chassis(self) -> None:
        with self._lock:
            self._conditions |= Flag.CHASSIS_OPEN
            if self._job is not None:
                self._stop_mid_ticket(self._job, MidTicket.CHASSIS_OPEN)

    def close_chassis(self) -> None:
        with self._lock:
            self._conditions &= ~Flag.CHASSIS_OPEN

    def fail_mid_ticket(self, fault: MidTicket, *, dark_polls: int = 1) -> None:
        """The next ticket stops halfway (before its validation number) with ``fault``; a power
        cut stays dark for ``dark_polls`` status requests, then the printer powers up again."""
        if dark_polls < 1:
            raise ValueError(f"a power cut stays dark for 1 or more status requests, not {dark_polls}")
        with self._lock:
            self._armed = MidTicket(fault)
            self._dark_polls = dark_polls

    def _power_off(self, dark_polls: int = 0) -> None:
        """Power off: the job and the definitions are lost; with ``dark_polls`` it comes back by
        itself after that many ENQs."""
        if not self._powered:
            return
        if self._job is not None:
            self.partial.append(PrintedTicket(self._job.template.id, dict(self._job.texts),
                                              dict(self._job.barcodes), complete=False))
            self._job = None
        self._powered = False
        self._off_polls = dark_polls
        log.info("tcl sim: power off")

    def _power_on(self) -> None:
        if self._powered:
            return
        self._powered = True
        self._power_up()
        log.info("tcl sim: power on")

    # --- control API: the wire ----------------------------------------------------------------
    def corrupt_next_reply(self) -> None:
        """The next status record goes out malformed (one flag byte out of range)."""
        with self._lock:
            self._next.add("corrupt")

    def drop_next_reply(self) -> None:
        """The next status record is lost on the wire."""
        with self._lock:
            self._next.add("drop")

    def lose_next(self, kind: str) -> None:
        """The next host message of ``kind`` ("ENQ", "P", "R", "T", "C", "f") never arrives."""
        if kind not in ("ENQ", "P", "R", "T", "C", "f"):
            raise ValueError(f"unknown TCL message kind {kind!r}")
        with self._lock:
            self._lose.add(kind)

    def __repr__(self) -> str:
        return f"<TclPrinterSimulator {self._flags()!r}>"


def _kind(command: object) -> str:
    return {DefineRegion: "R", DefineTemplate: "T", Print: "P", ClearErrors: "C",
            FormFeed: "f"}[type(command)]
