"""An ITL SSP/eSSP bill validator, simulated: the device role of :class:`SspCodec` (and of
:class:`EsspSession` when ``encryption`` is on) and a small state machine.

It answers only when addressed, one reply per command, and a command that repeats the last
accepted command's sequence flag gets the previous reply again without being acted on twice;
after SYNC (with either flag) the next command with the flag clear is new (the codec's rule). Events are reported in
POLL replies only; ``dwell`` is how many POLLs a passing state lasts::

    IDLE --insert--> READING [READ 0] --dwell--> ESCROW [READ n, once]     (n: the note's channel)
                                      --dwell--> REJECTING ...             (inhibited or unknown)
    ESCROW --HOLD--> ESCROW (kept)   --REJECT_BANKNOTE--> REJECTING [REJECTING] --> [REJECTED] --> IDLE
    ESCROW --POLL--> STACKING [STACKING] --dwell--> [CREDIT n, STACKING] --> [STACKED] --> IDLE

A bar-code ticket (:meth:`SspSimulator.insert_ticket`) goes the same way, with
[BARCODE_TICKET_VALIDATED] instead of READ n in escrow (GET_BARCODE_DATA then answers its number)
and [BARCODE_TICKET_ACK, STACKING] instead of CREDIT n. Tickets inhibited (SET_BARCODE_INHIBIT, a
reset inhibits them), or a bar code that is not ``ticket_digits`` digits, and the ticket is
rejected like a refused note; a unit built with ``barcode_reader=False`` knows no bar-code command
and rejects every ticket as an invalid note.

IDLE reports DISABLED on every POLL until ENABLE. Faults (jam, stacker full, fraud, cash box
removed) are an overlay reported on every POLL until :meth:`SspSimulator.clear_fault`; a note
caught by one is gone. RESET, and power coming back, restart the unit: no key, disabled, every
channel inhibited, SLAVE_RESET on the first POLL (with NOTE_CLEARED_FROM_FRONT or
NOTE_CLEARED_INTO_CASHBOX if a note was inside).

With ``encryption`` on, every command but SYNC and the key exchange (0x4A, 0x4B, 0x4C) is answered
KEY_NOT_SET until a key is negotiated; an encrypted command is answered encrypted; a POLL reply
that carries a credit is always encrypted. An encrypted packet that does not decrypt, or whose
counter is wrong (a replay), gets no reply and does not count as the host's last command.

The control API (the public methods) is thread-safe: the serve loop runs in its own thread.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import logging
import random
import secrets
from dataclasses import dataclass

from drivers.codec import Garbage, Role
from drivers.ssp.barcode import (
    POWER_UP_INHIBIT,
    BarcodeData,
    TicketStatus,
    accepts_notes,
    accepts_tickets,
    encode_barcode_data,
)
from drivers.ssp.codec import Command, Packet, PollEvent, Response, SspCodec, encode_events
from drivers.ssp.essp import DecryptError, EsspSession, ReplayError, is_encrypted, is_prime, u64
from drivers.ssp.essp import pack64 as _pack64
from drivers.ssp.setup import PROTOCOL_VERSION, USD_SETUP, Setup, enabled_channels, encode_setup
from sim_hardware.answering import OneShotReplyFaults

log = logging.getLogger(__name__)

OK = bytes((Response.OK,))
#: Commands an encrypting unit answers before a key is negotiated.
KEYLESS = frozenset({Command.SYNC, Command.SET_GENERATOR, Command.SET_MODULUS,
                     Command.REQUEST_KEY_EXCHANGE})
#: Reject codes the simulator reports (LAST_REJECT_CODE).
REJECT_INHIBITED = 0x06
REJECT_BY_HOST = 0x08
REJECT_INVALID = 0x02
#: A ticket whose bar code the reader cannot take (wrong length, not digits): BAR_CODE_SCAN_FAIL in
#: ITL's reject-code table (``drivers.ssp.setup.REJECT_CODES``).
REJECT_BAD_BARCODE = 0x14
#: The simulator's ticket length: 18 digits, the TITO validation number (this product's setting).
TICKET_DIGITS = 18


class State(enum.Enum):
    OFF = "off"
    IDLE = "idle"
    READING = "reading"
    ESCROW = "escrow"
    STACKING = "stacking"
    CREDIT = "credit"
    STACKED = "stacked"
    REJECTING = "rejecting"
    REJECTED = "rejected"


#: Passing states: where they go after ``dwell`` POLLs (READING goes to REJECTING instead when the
#: note was refused).
AFTER_DWELL: dict[State, State] = {
    State.READING: State.ESCROW,
    State.STACKING: State.CREDIT,
    State.CREDIT: State.STACKED,
    State.STACKED: State.IDLE,
    State.REJECTING: State.REJECTED,
    State.REJECTED: State.IDLE,
}
#: States that last one POLL whatever ``dwell`` is (their event is reported once).
ONE_POLL = frozenset({State.CREDIT, State.STACKED, State.REJECTED})

#: Fault -> the event reported on every POLL while it lasts.
class Fault(enum.Enum):
    SAFE_JAM = PollEvent.SAFE_JAM
    UNSAFE_JAM = PollEvent.UNSAFE_JAM
    STACKER_FULL = PollEvent.STACKER_FULL
    FRAUD = PollEvent.FRAUD_ATTEMPT
    CASHBOX_REMOVED = PollEvent.CASHBOX_REMOVED


@dataclass(frozen=True, slots=True)
class Note:
    channel: int
    value: int                    #: whole currency units


@dataclass(frozen=True, slots=True)
class Ticket:
    """A bar-code voucher; ``barcode`` is what is printed on it."""

    barcode: str
    channel: int = 0              #: tickets have no channel (0 in the events that carry one)


Item = Note | Ticket


class SspSimulator(OneShotReplyFaults):
    """One simulated SSP validator. ``feed(bytes) -> [bytes]`` is the whole device; ``serve`` runs it
    on a byte port."""

    WHO = "ssp sim"

    def __init__(self, *, encryption: bool = False, fixed_key: int = 0, address: int = 0,
                 setup: Setup = USD_SETUP, dwell: int = 1, serial_number: int = 1_234_567,
                 barcode_reader: bool = True, ticket_digits: int = TICKET_DIGITS,
                 rng: random.Random | None = None) -> None:
        if dwell < 1:
            raise ValueError(f"dwell is at least 1 POLL, not {dwell}")
        super().__init__()                     # the lock and the wire faults
        self.encryption = encryption
        self.fixed_key = fixed_key
        self.address = address
        self.setup = setup
        self.dwell = dwell
        self.serial_number = serial_number
        self.barcode_reader = barcode_reader
        self.ticket_digits = ticket_digits
        self._rng = rng if rng is not None else secrets.SystemRandom()
        self._by_value = {v: ch for ch, v in enumerate(setup.channel_values, 1) if v}
        #: Notes and tickets stacked, handed back; reject codes; commands acted on by code (repeats
        #: not counted); repeated commands answered with the last reply; encrypted packets refused.
        self.cashbox: list[Item] = []
        self.returned: list[Item] = []
        self.rejected: list[int] = []
        self.received: collections.Counter[int] = collections.Counter()
        self.resent = 0
        self.refused = 0
        self._fault: Fault | None = None
        self._kept: tuple[Item | None, bool] = (None, False)
        #: GET_BARCODE_DATA's answer: the last valid ticket and what became of it.
        self._barcode_data = BarcodeData(TicketStatus.NO_VALID_DATA)
        self._power_up(note=None, into_cashbox=False)

    # --- state ------------------------------------------------------------------------------
    def _power_up(self, note: Item | None, into_cashbox: bool) -> None:
        self._codec = SspCodec(Role.DEVICE, self.address)
        self._essp = (EsspSession(Role.DEVICE, self.fixed_key, rng=self._rng)
                      if self.encryption else None)
        self._generator: int | None = None
        self._modulus: int | None = None
        self._state = State.IDLE
        self._polls = 0
        self._item: Item | None = None
        self._refuse: int | None = None
        self._announced = False
        self.enabled = False
        self.inhibits = b"\x00\x00"
        self.barcode_inhibit = POWER_UP_INHIBIT
        self.protocol = 4
        self._credit_in_reply = False
        self._last_code: int | None = None
        self._last_reject = 0
        self._pending: list[tuple[PollEvent, int | None]] = [(PollEvent.SLAVE_RESET, None)]
        if note is not None:
            if into_cashbox:
                self.cashbox.append(note)
                self._pending.append((PollEvent.NOTE_CLEARED_INTO_CASHBOX, note.channel))
            else:
                self.returned.append(note)
                self._pending.append((PollEvent.NOTE_CLEARED_FROM_FRONT, note.channel))

    @property
    def state(self) -> State:
        return self._state

    @property
    def fault(self) -> Fault | None:
        return self._fault

    @property
    def keyed(self) -> bool:
        return self._essp is not None and self._essp.keyed

    @property
    def enabled_channels(self) -> frozenset[int]:
        return enabled_channels(self.inhibits)

    def _enter(self, state: State) -> None:
        log.debug("ssp sim: %s -> %s", self._state.value, state.value)
        self._state, self._polls = state, 0
        if state is State.REJECTED:
            if self._item is not None:
                self.returned.append(self._item)
                if self._announced:                # a ticket read into escrow, then handed back
                    self._ticket_status(self._item, TicketStatus.REJECTED)
            self.rejected.append(self._last_reject)
            self._item = None
        elif state is State.IDLE:
            self._item, self._refuse, self._announced = None, None, False

    def _poll(self) -> bytes:
        """The data of a POLL reply; the state moves on."""
        events = self._pending
        self._pending = []
        state, item = self._state, self._item
        if state is State.IDLE and not self.enabled:
            events.append((PollEvent.DISABLED, None))
        elif state is State.READING:
            events.append((PollEvent.READ, 0))
        elif state is State.ESCROW and item is not None:
            if not self._announced:
                self._announced = True
                if isinstance(item, Ticket):
                    self._ticket_status(item, TicketStatus.IN_ESCROW)
                    events.append((PollEvent.BARCODE_TICKET_VALIDATED, None))
                else:
                    events.append((PollEvent.READ, item.channel))
            else:                                          # a plain POLL accepts the note
                self._enter(State.STACKING)
                events.append((PollEvent.STACKING, None))
        elif state is State.STACKING:
            events.append((PollEvent.STACKING, None))
        elif state is State.CREDIT and item is not None:
            self.cashbox.append(item)
            self._credit_in_reply = True
            if isinstance(item, Ticket):
                self._ticket_status(item, TicketStatus.STACKED)
                events += [(PollEvent.BARCODE_TICKET_ACK, None), (PollEvent.STACKING, None)]
            else:
                events += [(PollEvent.CREDIT, item.channel), (PollEvent.STACKING, None)]
        elif state is State.STACKED:
            events.append((PollEvent.STACKED, None))
        elif state is State.REJECTING:
            events.append((PollEvent.REJECTING, None))
        elif state is State.REJECTED:
            events.append((PollEvent.REJECTED, None))
        if self._fault is not None:
            channel = 0 if self._fault is Fault.FRAUD else None
            events.append((PollEvent(self._fault.value), channel))
        self._tick()
        return OK + encode_events(events)

    def _ticket_status(self, item: Item, status: TicketStatus) -> None:
        """GET_BARCODE_DATA answers ``status`` for ``item`` from now on (a valid ticket only)."""
        if isinstance(item, Ticket) and self._ticket_readable(item.barcode):
            self._barcode_data = BarcodeData(status, item.barcode.encode("ascii"))

    def _tick(self) -> None:
        state = self._state
        if state not in AFTER_DWELL or self._fault is not None:
            return
        self._polls += 1
        if state in ONE_POLL or self._polls >= self.dwell:
            if state is State.READING and self._refuse is not None:
                self._last_reject = self._refuse
                self._enter(State.REJECTING)
            else:
                self._enter(AFTER_DWELL[state])

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def _powered(self) -> bool:
        return self._state is not State.OFF   # RESET turns it off after its reply: it restarts

    def _reply_to(self, event: Packet | Garbage) -> list[bytes]:
        if isinstance(event, Garbage):
            log.debug("ssp sim: garbage from the host (%s)", event.reason)
            return []                           # SSP: a damaged packet is not answered
        return self._on_packet(event)

    def _on_packet(self, packet: Packet) -> list[bytes]:
        if packet.address != self.address:
            self._codec.forget_last()
            return []
        if packet.repeated:
            if self._codec.last_reply is None:
                return []
            self.resent += 1
            return self._wire(self._codec.last_reply, self._last_code)
        reply = self._on_command(packet.data)
        if reply is None:
            self._codec.forget_last()
            return []
        return self._wire(self._codec.reply(reply), self._last_code)

    def _on_command(self, data: bytes) -> bytes | None:
        """The reply DATA to a new command (encrypted as needed), or None: no reply."""
        encrypted = is_encrypted(data)
        essp = self._essp
        counter = essp.counter if essp is not None else 0
        if encrypted:
            if essp is None:
                return bytes((Response.UNKNOWN_COMMAND,))
            if not essp.keyed:
                return bytes((Response.KEY_NOT_SET,))
            try:
                data = essp.unwrap(data)
            except (DecryptError, ReplayError) as exc:
                self.refused += 1
                log.info("ssp sim: encrypted packet refused: %s", exc)
                return None
        if not data:
            return bytes((Response.WRONG_PARAMETERS,))
        code, args = data[0], data[1:]
        if self._take("lose", code):
            log.debug("ssp sim: host command 0x%02X lost on the wire", code)
            if essp is not None:
                essp.counter = counter               # never received: nothing counted
            return None
        self._last_code = code
        self.received[code] += 1
        self._credit_in_reply = False
        if essp is not None and not essp.keyed and code not in KEYLESS:
            reply = bytes((Response.KEY_NOT_SET,))
        else:
            reply = self._answer(code, args)
        if essp is not None and essp.keyed and (encrypted or self._credit_in_reply):
            return essp.wrap(reply)
        return reply

    def _answer(self, code: int, args: bytes) -> bytes:
        handler = _HANDLERS.get(code)
        if handler is None:
            return bytes((Response.UNKNOWN_COMMAND,))
        return handler(self, args)

    # --- commands -----------------------------------------------------------------------------
    def _sync(self, args: bytes) -> bytes:
        return OK

    def _reset(self, args: bytes) -> bytes:
        self._power_off()
        return OK

    def _host_protocol(self, args: bytes) -> bytes:
        if len(args) != 1:
            return bytes((Response.WRONG_PARAMETERS,))
        if not 1 <= args[0] <= 8:
            return bytes((Response.FAIL,))
        self.protocol = args[0]
        return OK

    def _setup_request(self, args: bytes) -> bytes:
        """The setup in the layout of the protocol the host set, which it reports (a host reads
        the protocol byte to know whether the currency codes and expanded values follow)."""
        setup = dataclasses.replace(self.setup, protocol=self.protocol)
        return OK + encode_setup(setup, expanded=self.protocol >= PROTOCOL_VERSION)

    def _set_inhibits(self, args: bytes) -> bytes:
        if len(args) != 2:
            return bytes((Response.WRONG_PARAMETERS,))
        self.inhibits = bytes(args)
        return OK

    def _enable(self, args: bytes) -> bytes:
        self.enabled = True
        return OK

    def _disable(self, args: bytes) -> bytes:
        self.enabled = False
        return OK

    def _poll_command(self, args: bytes) -> bytes:
        return self._poll()

    def _hold(self, args: bytes) -> bytes:
        if self._state is not State.ESCROW:
            return bytes((Response.CANNOT_PROCESS,))
        return OK

    def _reject(self, args: bytes) -> bytes:
        if self._state is not State.ESCROW:
            return bytes((Response.CANNOT_PROCESS,))
        self._last_reject = REJECT_BY_HOST
        self._enter(State.REJECTING)
        return OK

    def _set_barcode_inhibit(self, args: bytes) -> bytes:
        if not self.barcode_reader:
            return bytes((Response.UNKNOWN_COMMAND,))
        if len(args) != 1:
            return bytes((Response.WRONG_PARAMETERS,))
        self.barcode_inhibit = bytes(args)
        return OK

    def _get_barcode_inhibit(self, args: bytes) -> bytes:
        if not self.barcode_reader:
            return bytes((Response.UNKNOWN_COMMAND,))
        return OK + self.barcode_inhibit

    def _get_barcode_data(self, args: bytes) -> bytes:
        if not self.barcode_reader:
            return bytes((Response.UNKNOWN_COMMAND,))
        return OK + encode_barcode_data(self._barcode_data)

    def _serial(self, args: bytes) -> bytes:
        return OK + self.serial_number.to_bytes(4, "big")

    def _last_reject_code(self, args: bytes) -> bytes:
        return OK + bytes((self._last_reject,))

    def _set_generator(self, args: bytes) -> bytes:
        return self._set_prime("_generator", args)

    def _set_modulus(self, args: bytes) -> bytes:
        return self._set_prime("_modulus", args)

    def _set_prime(self, name: str, args: bytes) -> bytes:
        if self._essp is None:
            return bytes((Response.UNKNOWN_COMMAND,))
        try:
            value = u64(args)
        except ValueError:
            return bytes((Response.WRONG_PARAMETERS,))
        if not is_prime(value):
            return bytes((Response.PARAMETER_OUT_OF_RANGE,))
        setattr(self, name, value)
        self._essp.clear()                     # a new exchange: the old key is gone
        return OK

    def _key_exchange(self, args: bytes) -> bytes:
        essp = self._essp
        if essp is None:
            return bytes((Response.UNKNOWN_COMMAND,))
        if self._generator is None or self._modulus is None:
            return bytes((Response.FAIL,))
        try:
            host_inter = u64(args)
        except ValueError:
            return bytes((Response.WRONG_PARAMETERS,))
        secret = self._rng.getrandbits(64) | 1
        own = pow(self._generator, secret, self._modulus)
        essp.set_key(pow(host_inter, secret, self._modulus))
        return OK + _pack64(own)

    # --- the wire -----------------------------------------------------------------------------
    def _wire(self, data: bytes, request: int | None) -> list[bytes]:
        disturbed = self._disturb(data, request)
        return [] if disturbed is None else self._copies(disturbed)

    # --- control API: the player and the hardware -------------------------------------------
    def insert_note(self, value: int) -> bool:
        """A player inserts a note of ``value`` whole units; False if the unit cannot take it
        (disabled, busy, faulted)."""
        channel = self._by_value.get(value)
        if channel is None:
            raise ValueError(f"no {value} note in the channel table "
                             f"({', '.join(str(v) for v in sorted(self._by_value))})")
        with self._lock:
            if not self._can_insert():
                return False
            accepted = channel in self.enabled_channels and accepts_notes(self.barcode_inhibit)
            self._insert(Note(channel, value), None if accepted else REJECT_INHIBITED)
            return True

    def insert_ticket(self, barcode: str) -> bool:
        """A player inserts a voucher whose bar code reads ``barcode`` (any text: one that is not
        ``ticket_digits`` digits is rejected); False if the unit cannot take it (disabled, busy,
        faulted)."""
        if not isinstance(barcode, str):
            raise TypeError(f"a bar code is text, not {type(barcode).__name__}")
        with self._lock:
            if not self._can_insert():
                return False
            if not self.barcode_reader:
                refused: int | None = REJECT_INVALID
            elif not self._ticket_readable(barcode):
                refused = REJECT_BAD_BARCODE
            elif not accepts_tickets(self.barcode_inhibit):
                refused = REJECT_INHIBITED
            else:
                refused = None
            self._insert(Ticket(barcode), refused)
            return True

    def _ticket_readable(self, barcode: str) -> bool:
        return (len(barcode) == self.ticket_digits and barcode.isascii()
                and barcode.isdigit())

    def insert_bad_note(self, code: int = REJECT_INVALID) -> bool:
        """Something the validator cannot recognise: READ 0, then rejected with ``code``."""
        with self._lock:
            if not self._can_insert():
                return False
            self._insert(None, code)
            return True

    def _can_insert(self) -> bool:
        return self._state is State.IDLE and self.enabled and self._fault is None

    def _insert(self, note: Item | None, refuse: int | None) -> None:
        self._item, self._refuse, self._announced = note, refuse, False
        self._enter(State.READING)

    def inject_fault(self, fault: Fault) -> None:
        """Raise ``fault``: reported on every POLL until :meth:`clear_fault`."""
        with self._lock:
            if self._item is not None:
                log.info("ssp sim: %s caught by %s", self._item, fault.name)
            self._fault = fault
            self._item = None
            self._state, self._polls = State.IDLE, 0

    def jam(self, *, safe: bool = True) -> None:
        self.inject_fault(Fault.SAFE_JAM if safe else Fault.UNSAFE_JAM)

    def stacker_full(self) -> None:
        self.inject_fault(Fault.STACKER_FULL)

    def fraud(self) -> None:
        self.inject_fault(Fault.FRAUD)

    def remove_cashbox(self) -> None:
        self.inject_fault(Fault.CASHBOX_REMOVED)

    def clear_fault(self) -> None:
        with self._lock:
            if self._fault is Fault.CASHBOX_REMOVED:
                self._pending.append((PollEvent.CASHBOX_REPLACED, None))
            self._fault = None

    # --- control API: the power (the wire: OneShotReplyFaults) -----------------------------
    def _power_on(self) -> None:
        if self._state is State.OFF:
            self._power_up(*self._kept)
            self._kept = (None, False)
            log.info("ssp sim: power on")

    def _power_off(self) -> None:
        if self._state is State.OFF:
            return
        in_path = self._state in (State.READING, State.ESCROW, State.REJECTING)
        in_stacker = self._state in (State.STACKING, State.CREDIT)
        self._kept = (self._item if (in_path or in_stacker) else None, in_stacker)
        self._item = None
        self._state = State.OFF
        log.info("ssp sim: power off")

    def __repr__(self) -> str:
        return f"<SspSimulator {self._state.value}{' ' + self._fault.name if self._fault else ''}>"


_HANDLERS = {
    Command.SYNC: SspSimulator._sync,
    Command.RESET: SspSimulator._reset,
    Command.HOST_PROTOCOL_VERSION: SspSimulator._host_protocol,
    Command.SETUP_REQUEST: SspSimulator._setup_request,
    Command.SET_CHANNEL_INHIBITS: SspSimulator._set_inhibits,
    Command.ENABLE: SspSimulator._enable,
    Command.DISABLE: SspSimulator._disable,
    Command.POLL: SspSimulator._poll_command,
    Command.HOLD: SspSimulator._hold,
    Command.REJECT_BANKNOTE: SspSimulator._reject,
    Command.GET_SERIAL_NUMBER: SspSimulator._serial,
    Command.LAST_REJECT_CODE: SspSimulator._last_reject_code,
    Command.SET_BARCODE_INHIBIT: SspSimulator._set_barcode_inhibit,
    Command.GET_BARCODE_INHIBIT: SspSimulator._get_barcode_inhibit,
    Command.GET_BARCODE_DATA: SspSimulator._get_barcode_data,
    Command.SET_GENERATOR: SspSimulator._set_generator,
    Command.SET_MODULUS: SspSimulator._set_modulus,
    Command.REQUEST_KEY_EXCHANGE: SspSimulator._key_exchange,
}
