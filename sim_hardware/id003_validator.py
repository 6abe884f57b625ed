"""A JCM ID-003 bill validator, simulated: the device role of :class:`Id003Codec` and a state machine.

The simulator answers only when polled, as the real unit does: every host frame gets at most one
reply (the host's ACK of VEND_VALID gets none). Its behaviour is the table below plus a few entry
actions; ``dwell`` is how many status requests a passing state (INITIALIZE, ACCEPTING, STACKING,
STACKED, RETURNING, REJECTING) is reported for before it moves on by itself::

    POWER_UP --RESET--> INITIALIZE --dwell--> IDLING | DISABLED      (SET_INHIBIT 0x00 | 0x01)
    IDLING --insert--> ACCEPTING --dwell--> ESCROW                    (a known, enabled note/ticket)
                                 --dwell--> REJECTING --dwell--> IDLING   (reason in the data)
    ESCROW | HOLDING --STACK_1/STACK_2--> STACKING --dwell--> VEND_VALID --host ACK--> STACKED
                                          --dwell--> IDLING       (VEND_VALID repeats until the ACK)
    ESCROW | HOLDING --RETURN--> RETURNING --dwell--> IDLING
    ESCROW | HOLDING --HOLD--> HOLDING;  WAIT keeps the state
    any state --RESET--> INITIALIZE (a note in the acceptor is returned, one in the stacker stacked)

Operation commands are answered ACK when the table allows them and INVALID_COMMAND otherwise;
setting commands are echoed, read-back commands answered with the value; a frame with a bad CRC is
answered COMMUNICATION_ERROR. Faults (jam, stacker full/open, cheat, failure) are an overlay: while
one is set, every status request reports it, operations other than RESET are refused, and
:meth:`Id003Simulator.clear_fault` sends the unit through INITIALIZE again. A note caught by a
fault is gone (the attendant's problem), never stacked.

The control API (the public methods) is what tests, and later ``egm sim bill-validator``, use: insert
notes and tickets, inject faults, and disturb the wire (corrupt, drop, repeat, cut, lose, unplug).
It is thread-safe: the serve loop runs in its own thread.
"""

from __future__ import annotations

import collections
import enum
import logging
from dataclasses import dataclass

from drivers.codec import Garbage, Role
from drivers.id003.codec import TICKET_CODE, Command, Frame, Id003Codec, Status
from drivers.id003.settings import (
    ALL_ENABLED,
    BARCODE_OFF,
    BARCODE_TYPE_INTERLEAVED_2_OF_5,
    FAILURE_CODES,
    INHIBIT_OFF,
    INHIBIT_ON,
    USD_TABLE,
    Denomination,
    accepts_notes,
    accepts_tickets,
    barcode_inhibit,
    enabled_codes,
    encode_assignment,
)
from sim_hardware.answering import OneShotReplyFaults

log = logging.getLogger(__name__)

#: Reject reason for a note or ticket the settings do not accept ("return by inhibit").
REJECT_INHIBITED = 0x79


class State(enum.Enum):
    OFF = "off"                    #: no power: silent
    POWER_UP = "power up"          #: reports 0x40/0x41/0x42 until RESET
    INITIALIZE = "initialize"
    IDLING = "idling"
    DISABLED = "disabled"
    ACCEPTING = "accepting"
    ESCROW = "escrow"
    HOLDING = "holding"
    STACKING = "stacking"
    VEND_VALID = "vend valid"
    STACKED = "stacked"
    RETURNING = "returning"
    REJECTING = "rejecting"


#: The status each state reports (POWER_UP's depends on where a bill was when power came back).
STATUS_OF: dict[State, Status] = {
    State.INITIALIZE: Status.INITIALIZE,
    State.IDLING: Status.IDLING,
    State.DISABLED: Status.DISABLED,
    State.ACCEPTING: Status.ACCEPTING,
    State.ESCROW: Status.ESCROW,
    State.HOLDING: Status.HOLDING,
    State.STACKING: Status.STACKING,
    State.VEND_VALID: Status.VEND_VALID,
    State.STACKED: Status.STACKED,
    State.RETURNING: Status.RETURNING,
    State.REJECTING: Status.REJECTING,
}

_IDLE = None   #: in the tables: IDLING or DISABLED, as SET_INHIBIT says

#: Operation commands allowed in each state and where they lead (answered ACK). Every other
#: operation command is answered INVALID_COMMAND; RESET is allowed everywhere (see ``_reset``).
OPERATIONS: dict[State, dict[Command, State]] = {
    State.ESCROW: {Command.STACK_1: State.STACKING, Command.STACK_2: State.STACKING,
                   Command.RETURN: State.RETURNING, Command.HOLD: State.HOLDING,
                   Command.WAIT: State.ESCROW},
    State.HOLDING: {Command.STACK_1: State.STACKING, Command.STACK_2: State.STACKING,
                    Command.RETURN: State.RETURNING, Command.HOLD: State.HOLDING,
                    Command.WAIT: State.HOLDING},
}
OPERATION_COMMANDS = frozenset({Command.STACK_1, Command.STACK_2, Command.RETURN, Command.HOLD,
                                Command.WAIT})

#: States that move on by themselves after ``dwell`` status requests (ACCEPTING goes to
#: REJECTING instead when the inserted item was refused).
AFTER_DWELL: dict[State, State | None] = {
    State.INITIALIZE: _IDLE,
    State.ACCEPTING: State.ESCROW,
    State.STACKING: State.VEND_VALID,
    State.STACKED: _IDLE,
    State.RETURNING: _IDLE,
    State.REJECTING: _IDLE,
}

#: The host's ACK moves these on (and nothing else: a stray ACK is ignored, never answered).
ON_HOST_ACK: dict[State, State] = {State.VEND_VALID: State.STACKED}

#: Setting commands, their power-up value (its length is the only length accepted).
DEFAULT_SETTINGS: dict[Command, bytes] = {
    Command.SET_ENABLE: ALL_ENABLED,
    Command.SET_SECURITY: b"\x00\x00",
    Command.SET_COMMUNICATION_MODE: b"\x00",
    Command.SET_INHIBIT: INHIBIT_ON,
    Command.SET_DIRECTION: b"\x00",
    Command.SET_OPTIONAL_FUNCTION: b"\x00\x00",
    Command.SET_BARCODE_FUNCTION: BARCODE_OFF,
    Command.SET_BARCODE_INHIBIT: barcode_inhibit(notes=True, tickets=True),
}
#: Read-back command -> the setting it reads (0x80 + n reads 0xC0 + n).
GETTERS: dict[int, Command] = {Command(setting - 0x40): setting for setting in DEFAULT_SETTINGS}

#: Fault statuses the simulator can raise.
FAULTS = frozenset({Status.STACKER_FULL, Status.STACKER_OPEN, Status.JAM_IN_ACCEPTOR,
                    Status.JAM_IN_STACKER, Status.CHEATED, Status.FAILURE})

#: States in which a bill sits in the acceptor, and in which it is on its way into the stacker.
_IN_ACCEPTOR = frozenset({State.ACCEPTING, State.ESCROW, State.HOLDING})
_IN_STACKER = frozenset({State.STACKING, State.VEND_VALID})


@dataclass(frozen=True, slots=True)
class Note:
    code: int
    value: int                     #: whole units of the currency

    def escrow_data(self) -> bytes:
        return bytes((self.code,))


@dataclass(frozen=True, slots=True)
class Ticket:
    barcode: str

    def escrow_data(self) -> bytes:
        return bytes((TICKET_CODE,)) + self.barcode.encode("ascii")


Item = Note | Ticket


class Id003Simulator(OneShotReplyFaults):
    """One simulated ID-003 validator. ``feed(bytes) -> [bytes]`` is the whole device; ``serve``
    runs it on a byte port."""

    WHO = "id003 sim"

    def __init__(self, *, table: tuple[Denomination, ...] = USD_TABLE, dwell: int = 1,
                 version: bytes = b"EGM-SIM ID003 USA 1.00") -> None:
        if dwell < 1:
            raise ValueError(f"dwell is at least 1 status request, not {dwell}")
        super().__init__()                     # the lock and the wire faults
        self.table = table
        self.dwell = dwell
        self.version = version
        self._by_value = {d.value: d for d in table}
        #: What ended in the cash box, what was handed back, reject reasons, host frames by code.
        self.cashbox: list[Item] = []
        self.returned: list[Item] = []
        self.rejected: list[int] = []
        self.received: collections.Counter[int] = collections.Counter()
        self._fault: Frame | None = None       # outlives a power cut, like a real jam
        self._kept: Item | None = None         # the bill inside while the power is off
        self._kept_in_stacker = False
        self._power_up(bill=None)

    # --- state ------------------------------------------------------------------------------
    def _power_up(self, bill: Item | None, in_stacker: bool = False) -> None:
        self._codec = Id003Codec(Role.DEVICE)
        self._settings = dict(DEFAULT_SETTINGS)
        self._state = State.POWER_UP
        self._polls = 0
        self._item = bill
        self._bill_in_stacker = in_stacker
        self._reject_reason: int | None = None

    @property
    def state(self) -> State:
        return self._state

    @property
    def fault(self) -> Frame | None:
        return self._fault

    @property
    def inhibited(self) -> bool:
        return self._settings[Command.SET_INHIBIT] != INHIBIT_OFF

    @property
    def enabled_codes(self) -> frozenset[int]:
        return enabled_codes(self._settings[Command.SET_ENABLE])

    def setting(self, command: Command) -> bytes:
        return self._settings[command]

    def status(self) -> Frame:
        """The frame the next status request would be answered with (no state change)."""
        with self._lock:
            return self._status_frame()

    def _idle(self) -> State:
        return State.DISABLED if self.inhibited else State.IDLING

    def _enter(self, state: State | None) -> None:
        state = self._idle() if state is None else state
        log.debug("id003 sim: %s -> %s", self._state.value, state.value)
        self._state, self._polls = state, 0
        if state is State.STACKED:
            self._bank(self._item)
        elif state is State.RETURNING:
            self._hand_back(self._item)
        elif state is State.REJECTING:
            self._item = None
            self.rejected.append(self._reject_reason or REJECT_INHIBITED)
        elif state in (State.IDLING, State.DISABLED):
            self._item, self._reject_reason = None, None

    def _bank(self, item: Item | None) -> None:
        if item is not None:
            self.cashbox.append(item)
        self._item = None

    def _hand_back(self, item: Item | None) -> None:
        if item is not None:
            self.returned.append(item)
        self._item = None

    def _status_frame(self) -> Frame:
        state = self._state
        if state is State.POWER_UP:
            if self._item is None:
                return Frame(Status.POWER_UP)
            return Frame(Status.POWER_UP_BILL_IN_STACKER if self._bill_in_stacker
                         else Status.POWER_UP_BILL_IN_ACCEPTOR)
        if self._fault is not None:
            return self._fault
        if state is State.ESCROW and self._item is not None:
            return Frame(Status.ESCROW, self._item.escrow_data())
        if state is State.REJECTING:
            return Frame(Status.REJECTING, bytes((self._reject_reason or REJECT_INHIBITED,)))
        return Frame(STATUS_OF[state])

    def _tick(self) -> None:
        """One status request was answered: a passing state may move on."""
        if self._fault is not None or self._state not in AFTER_DWELL:
            return
        self._polls += 1
        if self._polls >= self.dwell:
            if self._state is State.ACCEPTING and self._reject_reason is not None:
                self._enter(State.REJECTING)
            else:
                self._enter(AFTER_DWELL[self._state])

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def _powered(self) -> bool:
        return self._state is not State.OFF

    def _reply_to(self, event: Frame | Garbage) -> list[bytes]:
        answer = self._on_event(event)
        return [] if answer is None else self._wire(*answer)

    def _on_event(self, event: Frame | Garbage) -> tuple[Frame, int | None] | None:
        """The reply to ``event`` and the host code it answers, or None (no reply)."""
        if isinstance(event, Garbage):
            log.debug("id003 sim: garbage from the host (%s)", event.reason)
            if event.reason == "bad CRC":
                return Frame(Status.COMMUNICATION_ERROR), None
            return None
        if self._take("lose", event.code):
            log.debug("id003 sim: host frame 0x%02X lost on the wire", event.code)
            return None
        self.received[event.code] += 1
        reply = self._answer(event)
        return None if reply is None else (reply, event.code)

    def _answer(self, frame: Frame) -> Frame | None:
        code = frame.code
        if code == Command.STATUS_REQUEST:
            reply = self._status_frame()
            self._tick()
            return reply
        if code == Command.ACK:
            if self._fault is None and self._state in ON_HOST_ACK:
                self._enter(ON_HOST_ACK[self._state])
            return None
        if code == Command.RESET:
            self._reset()
            return Frame(Status.ACK)
        if code in OPERATION_COMMANDS:
            target = None if self._fault else OPERATIONS.get(self._state, {}).get(Command(code))
            if target is None:
                return Frame(Status.INVALID_COMMAND)
            self._enter(target)
            return Frame(Status.ACK)
        if code in DEFAULT_SETTINGS:
            return self._set(Command(code), frame.data)
        if code in GETTERS and not frame.data:
            return Frame(code, self._settings[GETTERS[code]])
        if code == Command.GET_VERSION:
            return Frame(code, self.version)
        if code == Command.GET_BOOT_VERSION:
            return Frame(code, b"EGM-SIM BOOT 1.00")
        if code == Command.GET_CURRENCY_ASSIGNMENT:
            return Frame(code, encode_assignment(self.table))
        return Frame(Status.INVALID_COMMAND)

    def _set(self, command: Command, data: bytes) -> Frame:
        if len(data) != len(DEFAULT_SETTINGS[command]):
            return Frame(Status.INVALID_COMMAND)
        if command is Command.SET_INHIBIT and data not in (INHIBIT_OFF, INHIBIT_ON):
            return Frame(Status.INVALID_COMMAND)
        self._settings[command] = data
        if command is Command.SET_INHIBIT and self._state in (State.IDLING, State.DISABLED):
            self._enter(self._idle())
        return Frame(command, data)

    def _reset(self) -> None:
        if self._state is State.POWER_UP and self._bill_in_stacker:
            self._bank(self._item)           # it finishes going in: stacked, never vended
        elif self._state in _IN_STACKER:
            self._bank(self._item)
        else:
            self._hand_back(self._item)      # in the acceptor (or nowhere): handed back
        self._bill_in_stacker = False
        self._enter(State.INITIALIZE)

    def _wire(self, reply: Frame, request: int | None) -> list[bytes]:
        """The bytes of ``reply`` (to host code ``request``) as the disturbed wire carries them."""
        data = self._codec.send(reply)
        log.debug("id003 sim: reply %s %s", reply.name(Role.DEVICE), reply.data.hex())
        disturbed = self._disturb(data, request)
        if disturbed is None:
            return []
        if self._take("cut", request):
            self._power_off()
            self._power_on()
            return [disturbed[: len(disturbed) // 2]]
        return self._copies(disturbed)

    # --- control API: the player and the hardware -------------------------------------------
    def insert_note(self, value: int) -> bool:
        """A player inserts a note of ``value`` (whole currency units, e.g. 20 for $20).

        False if the validator is not idling (disabled, busy, faulted): the note does not go in.
        """
        denomination = self._by_value.get(value)
        if denomination is None:
            raise ValueError(f"no {value} note in the currency table "
                             f"({', '.join(str(v) for v in sorted(self._by_value))})")
        with self._lock:
            if not self._can_insert():
                return False
            refused = (denomination.code not in self.enabled_codes
                       or not accepts_notes(self._settings[Command.SET_BARCODE_INHIBIT]))
            self._insert(Note(denomination.code, value), REJECT_INHIBITED if refused else None)
            return True

    def insert_bad_note(self, reason: int = 0x76) -> bool:
        """Something the validator cannot recognise: rejected with ``reason`` (0x71-0x7E)."""
        if not 0x71 <= reason <= 0x7E:
            raise ValueError(f"a reject reason is 0x71-0x7E, not 0x{reason:02X}")
        with self._lock:
            if not self._can_insert():
                return False
            self._insert(None, reason)
            return True

    def insert_ticket(self, barcode: str) -> bool:
        """A player inserts a voucher whose barcode reads ``barcode``."""
        if not (barcode.isdigit() and barcode.isascii()):
            raise ValueError(f"a ticket barcode is digits, not {barcode!r}")
        with self._lock:
            if not self._can_insert():
                return False
            function = self._settings[Command.SET_BARCODE_FUNCTION]
            readable = (function[0] == BARCODE_TYPE_INTERLEAVED_2_OF_5
                        and function[1] == len(barcode)
                        and accepts_tickets(self._settings[Command.SET_BARCODE_INHIBIT]))
            self._insert(Ticket(barcode), None if readable else REJECT_INHIBITED)
            return True

    def _can_insert(self) -> bool:
        return self._state is State.IDLING and self._fault is None

    def _insert(self, item: Item | None, reject_reason: int | None) -> None:
        self._item, self._reject_reason = item, reject_reason
        self._enter(State.ACCEPTING)

    def inject_fault(self, status: Status, data: bytes = b"") -> None:
        """Raise a fault: every status request reports ``status`` until :meth:`clear_fault`."""
        if status not in FAULTS:
            raise ValueError(f"{Status(status).name} is not a fault status")
        with self._lock:
            if self._item is not None:
                log.info("id003 sim: %s caught by %s", self._item, Status(status).name)
            self._item = None
            self._fault = Frame(status, data)
            self._enter(State.INITIALIZE)

    def jam(self, *, in_stacker: bool = False) -> None:
        self.inject_fault(Status.JAM_IN_STACKER if in_stacker else Status.JAM_IN_ACCEPTOR)

    def stacker_full(self) -> None:
        self.inject_fault(Status.STACKER_FULL)

    def remove_stacker(self) -> None:
        self.inject_fault(Status.STACKER_OPEN)

    def cheat(self) -> None:
        """A cheat attempt (a note on a string, light in the path, ...)."""
        self.inject_fault(Status.CHEATED)

    def fail(self, code: int = 0xA2) -> None:
        """A hardware failure; ``code`` says what (see ``FAILURE_CODES``)."""
        if code not in FAILURE_CODES:
            raise ValueError(f"unknown failure code 0x{code:02X}")
        self.inject_fault(Status.FAILURE, bytes((code,)))

    def clear_fault(self) -> None:
        """The attendant fixed it (cleared the jam, emptied or put back the stacker)."""
        with self._lock:
            self._fault = None
            if self._state not in (State.OFF, State.POWER_UP):
                self._enter(State.INITIALIZE)

    # --- control API: the wire (and OneShotReplyFaults': corrupt, drop, repeat, lose, unplug) ---
    def power_loss_mid_frame(self, to: int | None = None) -> None:
        """Power fails halfway through the next reply (to ``to``, if given); the unit powers up
        again at once."""
        with self._lock:
            self._arm("cut", to)

    def _power_off(self) -> None:
        if self._state is State.OFF:
            return
        in_acceptor = self._state in _IN_ACCEPTOR and self._item is not None
        in_stacker = self._state in _IN_STACKER and self._item is not None
        if self._state is State.POWER_UP:
            in_acceptor, in_stacker = self._item is not None, self._bill_in_stacker
        self._kept = self._item if (in_acceptor or in_stacker) else None
        self._kept_in_stacker = in_stacker
        self._state = State.OFF
        log.info("id003 sim: power off")

    def _power_on(self) -> None:
        if self._state is not State.OFF:
            return
        self._power_up(self._kept, self._kept_in_stacker)
        log.info("id003 sim: power on (%s)", self._status_frame().name(Role.DEVICE))

    def __repr__(self) -> str:
        return f"<Id003Simulator {self._state.value}{' fault' if self._fault else ''}>"
