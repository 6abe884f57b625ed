"""ITL SSP/eSSP bill validator driver: the host role of :class:`SspCodec` (and of
:class:`EsspSession` with ``encryption``) over pyserial.

Open: SYNC; with ``encryption``, the key exchange (SET_GENERATOR, SET_MODULUS,
REQUEST_KEY_EXCHANGE) and every later command encrypted; HOST_PROTOCOL_VERSION 6; SETUP_REQUEST
(the channel values); GET_SERIAL_NUMBER; SET_CHANNEL_INHIBITS (all inhibited); SET_BARCODE_INHIBIT
(tickets inhibited; refused: the unit has no bar-code reader); DISABLE. The cabinet calls
``enable(...)`` when it wants money.

One exchange (:meth:`SspValidator._transact`): drop whatever waits on the line, send the command
with a new sequence flag, read until a reply *with that flag* arrives. A time-out or a damaged reply
(bad CRC, an encrypted block that does not decrypt) and the same bytes are sent again with the same
flag: the validator answers a repeat with its last reply and does not act twice. Replies with the
other flag are stale (a repeated frame) and skipped; an encrypted reply whose counter is not the
expected one is a replay and skipped. ``MAX_MISSED_POLLS`` POLLs in a row without an answer, or a
port error, and the device is :meth:`lost`.

A command unanswered after every send leaves the sequence in doubt: the validator may have acted
on it (its reply lost) or never seen it, so whatever flag the next command carried, the validator
could take it for a repeat and answer it with an old reply without acting (and with eSSP the two
ends' counters may differ). So the next exchange starts with SYNC, and with eSSP a new key
exchange (the counter back to 0), before its command goes out (:meth:`SspValidator._resynchronise`).

Escrow (ITL: "to hold a note in escrow, replace POLL with HOLD after READ > 0; a POLL then accepts
the note; REJECT returns it"): after ``READ n`` (n > 0) the poll thread sends HOLD instead of POLL
until the cabinet decides; ``stack()`` sends the POLL that accepts, ``return_escrow()`` sends
REJECT_BANKNOTE.

Tickets (bar-code vouchers): ``enable(..., tickets=True)`` clears the ticket bit of the bar-code
inhibit register (SET_BARCODE_INHIBIT). BARCODE_TICKET_VALIDATED (a ticket in escrow, no data) and
the driver holds it at once, reads its number with GET_BARCODE_DATA and emits ``TicketEscrowed``;
the cabinet stacks (the accepting POLL) or returns (REJECT_BANKNOTE) it exactly as a note;
BARCODE_TICKET_ACK is ``TicketStacked``. A ticket whose number cannot be read is returned.

Exactly once: :class:`EventTracker` credits (``NoteStacked``) on CREDIT for the note in escrow, and
reports a ticket stacked (``TicketStacked``) on BARCODE_TICKET_ACK for the ticket in escrow, and
marks it credited; a second CREDIT or ACK before the next escrow credits nothing. The transport
already hands each reply over once (sequence flag, counter); the tracker is the second line.
"""

from __future__ import annotations

import collections
import logging
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar

import serial

from drivers.codec import NEED_DATA, Garbage, Role
from drivers.escrow import Escrow, EscrowFront, EscrowItem, FaultTable, dollars
from drivers.serial_loop import PolledSerialDevice, drop_waiting, read_some
from drivers.ssp.barcode import BarcodeData, TicketStatus, barcode_inhibit, parse_barcode_data
from drivers.ssp.codec import (
    SERIAL,
    Command,
    Packet,
    PollEvent,
    Response,
    SspCodec,
    parse_events,
)
from drivers.ssp.essp import (
    DecryptError,
    EsspSession,
    KeyExchange,
    ReplayError,
    is_encrypted,
    pack64,
    parse_fixed_key,
    u64,
)
from drivers.ssp.setup import (
    PROTOCOL_VERSION,
    REJECT_CODES,
    channels_for_cents,
    inhibit_mask,
    parse_setup,
)
from hal.devices.bill_validator import BillValidator
from hal.errors import DeviceError, DeviceInitError, DeviceOperationError, DeviceTimeoutError
from hal.events import DeviceEvent, FaultKind, Rejected

log = logging.getLogger(__name__)

#: Poll events that are faults: what the cabinet is told. Reported on every POLL while they last.
FAULTS: FaultTable = {
    PollEvent.SAFE_JAM: (FaultKind.JAM, "safe note jam"),
    PollEvent.UNSAFE_JAM: (FaultKind.JAM, "unsafe note jam"),
    PollEvent.STACKER_FULL: (FaultKind.STACKER_FULL, "stacker full"),
    PollEvent.FRAUD_ATTEMPT: (FaultKind.CHEAT, "fraud attempt"),
    PollEvent.CASHBOX_REMOVED: (FaultKind.STACKER_OPEN, "cash box removed"),
}
#: One-byte generic replies a validator may send in plain to an encrypted command.
_GENERIC_ERRORS = frozenset(r for r in Response if r != Response.OK)
_INFO_EVENTS = frozenset({PollEvent.STACKING, PollEvent.INITIALISING, PollEvent.NOTE_PATH_OPEN,
                          PollEvent.CHANNEL_DISABLE, PollEvent.CASHBOX_REPLACED})
#: Generic refusals that mean "no bar-code reader here" when SET_BARCODE_INHIBIT gets them.
_NO_READER = frozenset({Response.UNKNOWN_COMMAND, Response.WRONG_PARAMETERS,
                        Response.PARAMETER_OUT_OF_RANGE, Response.CANNOT_PROCESS})


class KeyNotSetError(DeviceOperationError):
    """The validator answered KEY_NOT_SET: it restarted (lost its key) or wants eSSP."""


def _note(channel: int, cents: int | None) -> EscrowItem:
    return EscrowItem(("channel", channel), cents, origin=f"channel {channel}")


# --- poll events -> device events (sans-I/O) ---------------------------------------------------
@dataclass(slots=True)
class Reaction:
    events: list[DeviceEvent] = field(default_factory=list)
    rejected: bool = False         #: a note was rejected: ask LAST_REJECT_CODE for the reason
    return_escrow: bool = False    #: a note on a channel the setup does not know, an unread ticket
    read_barcode: bool = False     #: a ticket waits in escrow: ask GET_BARCODE_DATA
    reinitialise: bool = False     #: SLAVE_RESET: the unit restarted
    disabled: bool = False         #: the unit reports DISABLED


class EventTracker(Escrow):
    """Turns SSP poll events into device events, each note credited exactly once."""

    def __init__(self, device: str, notes: dict[int, int]) -> None:
        super().__init__(device, notes)
        self.faults: set[int] = set()
        self._rejecting = False

    @property
    def reading_ticket(self) -> bool:
        """A ticket waits in escrow and its number is not read yet: GET_BARCODE_DATA."""
        item = self.item
        return (item is not None and item.ticket and item.barcode is None and not item.decided
                and not item.credited)

    @property
    def waiting(self) -> EscrowItem | None:
        """The note or ticket that waits in escrow for the cabinet (HOLD instead of POLL), if any."""
        item = self.item
        if item is None or item.decided or not (self.escrowed or self.reading_ticket):
            return None
        return item

    @property
    def holding(self) -> bool:
        """A note or ticket waits in escrow for the cabinet: HOLD instead of POLL."""
        return self.waiting is not None

    def on_poll(self, events: Iterable[tuple[int, int | None]]) -> Reaction:
        out = Reaction()
        faults: set[int] = set()
        for code, channel in events:
            if code in FAULTS:
                faults.add(code)
            elif code == PollEvent.READ:
                self._on_read(channel or 0, out)
            elif code == PollEvent.CREDIT:
                self._on_credit(channel or 0, out)
            elif code == PollEvent.BARCODE_TICKET_VALIDATED:
                self._on_ticket(out)
            elif code == PollEvent.BARCODE_TICKET_ACK:
                self._on_ticket_ack(out)
            elif code == PollEvent.STACKED:
                if self.item is None or not self.item.credited:
                    log.error("%s: STACKED without a CREDIT: nothing credited", self.device)
            elif code in (PollEvent.REJECTING, PollEvent.REJECTED):
                self._on_reject(code, out)
            elif code == PollEvent.DISABLED:
                out.disabled = True
            elif code == PollEvent.SLAVE_RESET:
                out.reinitialise = True           # a note inside is reported after it
            elif code == PollEvent.NOTE_CLEARED_FROM_FRONT:
                self.returned(out.events)
            elif code == PollEvent.NOTE_CLEARED_INTO_CASHBOX:
                what = (self.item.describe() if self.item is not None and not self.item.credited
                        else f"a note (channel {channel})")
                log.error("%s: %s was cleared into the cash box at reset: not credited, for the "
                          "attendant", self.device, what)
                self.item = None
            elif code in _INFO_EVENTS:
                log.debug("%s: event %s", self.device, PollEvent(code).name)
            else:
                log.warning("%s: unknown poll event 0x%02X ignored", self.device, code)
        if out.reinitialise:
            self.drop("a reset")
        self._faults(faults, out)
        return out

    def _on_read(self, channel: int, out: Reaction) -> None:
        item = self.item
        if channel == 0:                                # reading a new note
            if item is not None and (item.credited or not self.escrowed):
                self.item = None
            return
        note = _note(channel, self.notes.get(channel))
        if not self.place(note, out.events):
            return                                      # the same escrow, reported again
        self._rejecting = False
        if note.value_cents is None:
            log.error("%s: READ on channel %d, not in the setup: returning it", self.device,
                      channel)
            note.decided = True
            out.return_escrow = True
            out.events.append(Rejected(self.device, f"unknown channel {channel}"))

    def _on_credit(self, channel: int, out: Reaction) -> None:
        item = self.item
        key = ("channel", channel)
        if item is not None and item.credited and item.key == key:
            log.warning("%s: CREDIT repeated for %s: credited once only", self.device,
                        item.describe())
            return
        if item is None or item.key != key:
            log.warning("%s: CREDIT on channel %d without its READ", self.device, channel)
            self.item = _note(channel, self.notes.get(channel))
        self.credit(out.events)

    def _on_ticket(self, out: Reaction) -> None:
        if not self.place(EscrowItem(("ticket",), ticket=True), out.events):
            return                                      # the same escrow, reported again
        self._rejecting = False                         # held at once: a POLL would accept it
        out.read_barcode = True

    def on_barcode(self, answer: BarcodeData | None, why: str = "") -> Reaction:
        """The GET_BARCODE_DATA answer for the ticket in escrow (None: none could be had, for
        ``why``): ``TicketEscrowed`` with its number, or the ticket is returned."""
        out = Reaction()
        item = self.item
        if item is None or not self.reading_ticket:
            log.warning("%s: bar-code data with no ticket waiting for it: ignored", self.device)
            return out
        digits = answer.digits if answer is not None else None
        if answer is not None and answer.status == TicketStatus.IN_ESCROW and digits is not None:
            item.barcode = digits
            self.announce(out.events)
            return out
        if answer is not None:
            why = f"status {_status_name(answer.status)}, data {answer.data!r}"
        log.error("%s: ticket in escrow unreadable (%s): returning it", self.device, why)
        item.decided = True
        out.return_escrow = True
        out.events.append(Rejected(self.device, "unreadable ticket"))
        return out

    def _on_ticket_ack(self, out: Reaction) -> None:
        item = self.item
        if item is None or not item.ticket:
            log.error("%s: BARCODE_TICKET_ACK without a ticket in escrow: nothing reported, "
                      "for the attendant", self.device)
            return
        if not self.credit(out.events):
            log.warning("%s: BARCODE_TICKET_ACK repeated for %s: reported once only",
                        self.device, item.describe())

    def _on_reject(self, code: int, out: Reaction) -> None:
        if self.escrowed:
            self.returned(out.events)
            self._rejecting = code == PollEvent.REJECTING
            return
        if not self._rejecting and not (self.item is not None and self.item.decided):
            out.rejected = True
        self.item = None
        self._rejecting = code == PollEvent.REJECTING

    def _faults(self, now: set[int], out: Reaction) -> None:
        self.report_faults([FAULTS[code] for code in sorted(self.faults - now)],
                           [FAULTS[code] for code in sorted(now - self.faults)], out.events)
        self.faults = now


# --- the driver --------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Wanted:
    """What the cabinet asked for, restored after the validator restarts."""

    inhibits: bytes = b"\x00\x00"
    enabled: bool = False
    barcode: bytes = barcode_inhibit(notes=True, tickets=False)


class SspValidator(PolledSerialDevice, EscrowFront, BillValidator):
    """An SSP (or eSSP) bill validator on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "bill_validator"
    #: Sends of one command: the first and its repeats (same sequence flag).
    MAX_SENDS: ClassVar[int] = 3
    SERIAL_SETTINGS = SERIAL
    THREAD_PREFIX = "ssp-poll"
    POLLS_NAME = "polls"

    def __init__(self, name: str, *, port: str, timeout: float = 1.0, poll_interval: float = 0.2,
                 address: int = 0, encryption: bool = False, fixed_key: str = "") -> None:
        super().__init__(name, port=port, timeout=timeout, poll_interval=poll_interval)
        if not 0 <= address <= 0x7F:
            raise ValueError(f"{name}: an SSP address is 0..127, not {address}")
        if encryption and not fixed_key:
            raise ValueError(f"{name}: encryption needs fixed_key (16 hex digits, from the "
                             "machine's configuration)")
        self.address = address
        self.encryption = encryption
        self._fixed_key = parse_fixed_key(fixed_key) if encryption else 0
        self._codec = SspCodec(Role.HOST, address)
        self._essp: EsspSession | None = None
        self._rng = secrets.SystemRandom()
        self._initialising = False
        self._fresh = False
        #: A command went unanswered after every send: SYNC (and a new key) before the next one.
        self._in_doubt = False
        self._resynchronising = False
        self._wanted = _Wanted()
        self._tracker: EventTracker = EventTracker(name, {})
        self.serial_number: int | None = None
        #: False when the validator refused SET_BARCODE_INHIBIT: it reads no tickets.
        self.barcode_reader = True
        #: Link health: garbage, bad_crc, timeouts, repeats, stale, replays, resync, reinit,
        #: reenable.
        self.counters: collections.Counter[str] = collections.Counter()

    # --- lifecycle hooks ----------------------------------------------------------------------
    def _open(self) -> None:
        self._wanted = _Wanted()
        self._tracker = EventTracker(self.name, self._tracker.notes)
        self._open_port()
        with self._link:
            try:
                self._initialise()
            except KeyNotSetError as exc:
                raise DeviceInitError(
                    f"{self.name}: the validator wants eSSP (KEY_NOT_SET): set encryption and "
                    f"fixed_key" if not self.encryption else f"{self.name}: {exc}") from exc
        self._start_polling()

    def _join_timeout(self) -> float:
        return max(2 * self.timeout * self.MAX_SENDS, 1.0)

    # --- the cabinet's requests ---------------------------------------------------------------
    def enable(self, denominations_cents: Iterable[int], *, tickets: bool = True) -> None:
        """Accept exactly the notes worth ``denominations_cents`` (and tickets if ``tickets`` and
        the validator has a bar-code reader)."""
        self.require_open()
        channels = channels_for_cents(self._tracker.notes, denominations_cents)
        wanted = _Wanted(inhibit_mask(channels), True,
                         barcode_inhibit(notes=bool(channels), tickets=tickets))
        with self._exchange("enable"):
            self._command(Command.SET_CHANNEL_INHIBITS, wanted.inhibits)
            if self.barcode_reader:
                self._command(Command.SET_BARCODE_INHIBIT, wanted.barcode)
            elif tickets:
                log.warning("%s: tickets asked for, but the validator reads no bar codes",
                            self.name)
            self._command(Command.ENABLE)
            self._wanted = wanted

    def disable(self) -> None:
        """Accept nothing (the validator reports DISABLED)."""
        self.require_open()
        with self._exchange("disable"):
            self._command(Command.DISABLE)
            self._wanted = _Wanted(self._wanted.inhibits, False, self._wanted.barcode)

    def stack(self) -> None:
        """Accept the note or ticket in escrow (the POLL that ends the hold); ``NoteStacked`` or
        ``TicketStacked`` follows once."""
        with self._exchange("stack"):
            item = self._escrowed("stack")
            item.decided = True
            if self._poll_once() is None:
                raise DeviceTimeoutError(f"{self.name}: no answer to the POLL that accepts the "
                                         f"{item.describe()} (the next POLL accepts it)")

    def return_escrow(self) -> None:
        """Hand the note or ticket in escrow back (REJECT_BANKNOTE); ``Returned`` follows."""
        with self._exchange("return"):
            item = self._escrowed("return")
            self._command(Command.REJECT_BANKNOTE)
            item.decided = True

    def hold(self) -> None:
        """Keep the note or ticket in escrow now (the poll thread keeps holding it anyway)."""
        with self._exchange("hold"):
            self._escrowed("hold")
            self._command(Command.HOLD)

    def poll(self) -> tuple[int, ...]:
        """POLL now (its events are queued as usual); the event codes of the reply."""
        with self._exchange("poll"):
            events = self._poll_once()
        if events is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to POLL")
        return tuple(_name(code) for code, _ in events)

    def status(self) -> str:
        """POLL now: the events of the reply by name, or ``OK`` for none."""
        return ", ".join(e.name if isinstance(e, PollEvent) else f"0x{e:02X}"
                         for e in self.poll()) or "OK"

    def _escrowed(self, what: str) -> EscrowItem:
        item = self._tracker.item
        if item is None or not self._tracker.escrowed:
            raise DeviceOperationError(f"{self.name}: nothing in escrow to {what}")
        return item

    # --- protocol steps (link lock held) ------------------------------------------------------
    def _initialise(self) -> None:
        self._initialising = True
        try:
            self._codec.restart()
            self._codec.discard()
            self._in_doubt = False
            self._essp = EsspSession(Role.HOST, self._fixed_key) if self.encryption else None
            self._command(Command.SYNC, plain=True, what="SYNC (is the validator there?)")
            if self._essp is not None:
                self._negotiate(self._essp)
            self._command(Command.HOST_PROTOCOL_VERSION, bytes((PROTOCOL_VERSION,)))
            try:
                setup = parse_setup(self._command(Command.SETUP_REQUEST))
            except ValueError as exc:
                raise DeviceOperationError(f"{self.name}: unreadable setup: {exc}") from exc
            self._tracker.notes = setup.notes
            serial_data = self._command(Command.GET_SERIAL_NUMBER)
            self.serial_number = int.from_bytes(serial_data[:4], "big") if serial_data else None
            self._command(Command.SET_CHANNEL_INHIBITS, self._wanted.inhibits)
            self._set_barcode_inhibit(self._wanted.barcode)
            self._command(Command.ENABLE if self._wanted.enabled else Command.DISABLE)
            self._fresh = True
            log.info("%s: validator %s, firmware %s, %s notes %s", self.name, self.serial_number,
                     setup.firmware, setup.country,
                     ", ".join(dollars(c) for c in setup.notes.values()))
        finally:
            self._initialising = False

    def _set_barcode_inhibit(self, register: bytes) -> None:
        """SET_BARCODE_INHIBIT at set-up; a generic refusal means the unit has no reader."""
        reply = self._transact(bytes((Command.SET_BARCODE_INHIBIT,)) + register)
        if reply is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to SET_BARCODE_INHIBIT")
        if reply[:1] == bytes((Response.KEY_NOT_SET,)):
            raise KeyNotSetError(f"{self.name}: KEY_NOT_SET in reply to SET_BARCODE_INHIBIT")
        if not reply:
            raise DeviceOperationError(f"{self.name}: empty reply to SET_BARCODE_INHIBIT")
        self.barcode_reader = reply[0] == Response.OK
        if self.barcode_reader:
            return
        if reply[0] not in _NO_READER:
            raise DeviceOperationError(f"{self.name}: the validator refused SET_BARCODE_INHIBIT "
                                       f"({_label(reply[0])})")
        log.info("%s: no bar-code reader (SET_BARCODE_INHIBIT: %s): notes only", self.name,
                 _label(reply[0]))

    def _negotiate(self, essp: EsspSession) -> None:
        exchange = KeyExchange.for_host(self._rng)
        self._command(Command.SET_GENERATOR, pack64(exchange.generator), plain=True)
        self._command(Command.SET_MODULUS, pack64(exchange.modulus), plain=True)
        reply = self._command(Command.REQUEST_KEY_EXCHANGE, pack64(exchange.intermediate),
                              plain=True)
        try:
            essp.set_key(exchange.key(u64(reply)))
        except ValueError as exc:
            raise DeviceOperationError(f"{self.name}: bad key exchange answer: {exc}") from exc

    def _command(self, command: Command, args: bytes = b"", *, plain: bool = False,
                 what: str = "") -> bytes:
        """Send ``command``; the data after OK. Errors: no answer, a refusal, KEY_NOT_SET."""
        reply = self._transact(bytes((command,)) + args, plain=plain)
        if reply is None:
            raise DeviceTimeoutError(f"{self.name}: no answer to {what or command.name}")
        if not reply:
            raise DeviceOperationError(f"{self.name}: empty reply to {command.name}")
        if reply[0] == Response.KEY_NOT_SET:
            raise KeyNotSetError(f"{self.name}: KEY_NOT_SET in reply to {command.name}")
        if reply[0] != Response.OK:
            raise DeviceOperationError(f"{self.name}: the validator refused {command.name} "
                                       f"({_label(reply[0])})")
        return reply[1:]

    def _poll_once(self) -> list[tuple[int, int | None]] | None:
        """One POLL; its events go through the tracker. None: no answer."""
        try:
            data = self._command(Command.POLL)
        except DeviceTimeoutError:
            self._missed += 1
            return None
        self._missed = 0
        try:
            events = parse_events(data)
        except ValueError as exc:
            log.warning("%s: malformed poll reply %s: %s", self.name, data.hex(" "), exc)
            self.counters["garbage"] += 1
            return []
        fresh, self._fresh = self._fresh, False
        reaction = self._tracker.on_poll(events)
        if fresh and reaction.reinitialise:       # the reset our own initialise just handled
            reaction.reinitialise = False
        self._react(reaction)
        return events

    def _read_ticket(self) -> None:
        """GET_BARCODE_DATA for the ticket in escrow; the tracker reports or returns it. No
        answer: counted as a missed poll, asked again at the next poll step."""
        try:
            answer = parse_barcode_data(self._command(Command.GET_BARCODE_DATA))
        except DeviceTimeoutError:
            self._missed += 1
            return
        except KeyNotSetError:
            raise
        except DeviceOperationError as exc:
            self._react(self._tracker.on_barcode(None, f"GET_BARCODE_DATA: {exc}"))
        except ValueError as exc:
            self.counters["garbage"] += 1
            self._react(self._tracker.on_barcode(None, f"malformed bar-code data: {exc}"))
        else:
            self._missed = 0
            self._react(self._tracker.on_barcode(answer))

    def _react(self, reaction: Reaction) -> None:
        for event in reaction.events:
            self._emit(event)
        if reaction.rejected:
            self._emit(Rejected(self.name, self._reject_reason()))
        if reaction.return_escrow:
            item = self._tracker.item
            try:
                self._command(Command.REJECT_BANKNOTE)
            except DeviceOperationError as exc:
                log.error("%s: could not return the %s: %s", self.name,
                          item.describe() if item is not None else "item in escrow", exc)
        if reaction.read_barcode and not reaction.reinitialise:
            self._read_ticket()
        if reaction.reinitialise and not self._initialising:
            log.warning("%s: the validator restarted: key, protocol and settings again", self.name)
            self.counters["reinit"] += 1
            self._initialise()
        elif reaction.disabled and self._wanted.enabled and not self._tracker.faults:
            log.warning("%s: the validator disabled itself: enabling it again", self.name)
            self.counters["reenable"] += 1
            self._command(Command.ENABLE)

    def _reject_reason(self) -> str:
        try:
            data = self._command(Command.LAST_REJECT_CODE)
        except DeviceOperationError as exc:
            log.warning("%s: no reject reason: %s", self.name, exc)
            return "rejected"
        code = data[0] if data else -1
        return REJECT_CODES.get(code, f"reject code 0x{code & 0xFF:02X}")

    # --- the wire -----------------------------------------------------------------------------
    def _transact(self, data: bytes, *, plain: bool = False) -> bytes | None:
        """Send one command (repeating it on silence or damage); its reply DATA, decrypted. None:
        no answer after every send (the next exchange re-synchronises first), or no answer to
        that re-synchronisation (the command is not sent)."""
        if self._in_doubt and not self._resynchronising and not self._resynchronise():
            return None
        port = self._port()
        dropped = drop_waiting(port) + self._codec.discard()
        if dropped:
            self.counters["stale"] += 1
            log.debug("%s: %d stale bytes dropped", self.name, dropped)
        essp = self._essp if not plain else None
        session = essp if essp is not None and essp.keyed else None
        encrypted = session is not None
        payload = session.wrap(data) if session is not None else data
        frame = self._codec.command(payload)
        for attempt in range(self.MAX_SENDS):
            if attempt:
                self.counters["repeats"] += 1
                frame = self._codec.repeat(payload)
            port.write(frame)
            reply = self._read_reply(port, encrypted)
            if reply is not None:
                return reply
            if self._stop.is_set() and not self._initialising:
                break
        self._in_doubt = True
        return None

    def _resynchronise(self) -> bool:
        """SYNC, and with eSSP a new key exchange, after a command unanswered after every send;
        False if the validator did not answer (still in doubt)."""
        log.warning("%s: a command went unanswered: SYNC%s before the next", self.name,
                    " and a new eSSP key" if self._essp is not None else "")
        self._resynchronising = True
        try:
            self._command(Command.SYNC, plain=True)
            if self._essp is not None:
                self._negotiate(self._essp)
        except DeviceTimeoutError:
            return False
        finally:
            self._resynchronising = False
        self._in_doubt = False
        self.counters["resync"] += 1
        return True

    def _read_reply(self, port: serial.Serial, encrypted: bool) -> bytes | None:
        codec = self._codec
        deadline = time.monotonic() + self.timeout
        while True:
            while (event := codec.next_event()) is not NEED_DATA:
                if isinstance(event, Garbage):
                    bad = event.reason == "bad CRC"
                    self.counters["bad_crc" if bad else "garbage"] += 1
                    log.warning("%s: garbage from the validator (%s): %s", self.name,
                                event.reason, event.data.hex(" "))
                    if bad:
                        return None
                    continue
                reply, damaged = self._accept(event, encrypted)
                if reply is not None or damaged:
                    return reply
            if time.monotonic() >= deadline or self._stop.is_set() and not self._initialising:
                self.counters["timeouts"] += 1
                return None
            codec.receive_data(read_some(port))

    def _accept(self, packet: Packet, encrypted: bool) -> tuple[bytes | None, bool]:
        """``(data, damaged)``: the reply DATA if ``packet`` answers the command in flight; else
        None, and ``damaged`` if it was the answer but does not decrypt (send the command again)."""
        if packet.address != self.address or packet.seq != self._codec.expected_seq:
            self.counters["stale"] += 1
            return None, False
        data = packet.data
        essp = self._essp
        if is_encrypted(data):
            if essp is None or not essp.keyed:
                self.counters["garbage"] += 1
                log.warning("%s: an encrypted reply without a key: skipped", self.name)
                return None, False
            try:
                return essp.unwrap(data), False
            except ReplayError as exc:
                self.counters["replays"] += 1
                log.warning("%s: replayed or stale encrypted reply skipped: %s", self.name, exc)
                return None, False
            except DecryptError as exc:
                self.counters["bad_crc"] += 1
                log.warning("%s: encrypted reply does not decrypt: %s", self.name, exc)
                return None, True
        if encrypted and not (len(data) == 1 and data[0] in _GENERIC_ERRORS):
            self.counters["garbage"] += 1
            log.warning("%s: a plain reply to an encrypted command refused: %s", self.name,
                        data.hex(" "))
            return None, False
        return data, False

    # --- the poll thread ----------------------------------------------------------------------
    def _poll_error(self, exc: DeviceError, stop: threading.Event) -> None:
        if isinstance(exc, KeyNotSetError):
            self._recover_key(stop)
        else:
            super()._poll_error(exc, stop)

    def _poll_step(self) -> None:
        """POLL, or HOLD while a note or ticket waits in escrow for the cabinet (after reading a
        ticket's number if that is still to do)."""
        if self._tracker.reading_ticket:
            self._read_ticket()
            return
        waiting = self._tracker.waiting
        if waiting is not None:
            try:
                self._command(Command.HOLD)
                self._missed = 0
                return
            except DeviceTimeoutError:
                self._missed += 1
                return
            except KeyNotSetError:
                raise
            except DeviceOperationError as exc:    # the unit holds nothing now: POLL tells why
                log.warning("%s: HOLD refused (%s): polling", self.name, exc)
                waiting.decided = True
        self._poll_once()

    def _recover_key(self, stop: threading.Event) -> None:
        log.warning("%s: KEY_NOT_SET: the validator restarted; initialising again", self.name)
        self.counters["reinit"] += 1
        try:
            with self._link:
                if not stop.is_set():
                    self._initialise()
        except DeviceError as exc:
            log.error("%s: re-initialising failed: %s", self.name, exc)


def _name(code: int) -> PollEvent | int:
    try:
        return PollEvent(code)
    except ValueError:
        return code


def _label(code: int) -> str:
    try:
        return Response(code).name
    except ValueError:
        return f"0x{code:02X}"


def _status_name(status: int) -> str:
    try:
        return TicketStatus(status).name
    except ValueError:
        return f"0x{status:02X}"
