"""The gaming machine's SAS responder, sans-I/O: bytes from the host in, the reply out.

:meth:`SasMachine.receive` feeds the codec (``drivers.sas.codec.EgmDecoder``) and answers each poll
to this machine from a :class:`~firmware.sas.view.TerminalView`; the caller writes the bytes it
returns to the port (nothing: no reply is due). Answered here: the general poll (the next
exception; its real-time event while the host has real-time event reporting on,
``firmware/sas/rte.py``), the meter polls 0x0F-0x1E (but 0x1B) and 0x20, selected meters 0x2F, extended meters
0x6F / 0xAF, machine ID 0x1F, SAS version and serial 0x54, last accepted bill 0x48 and date and
time 0x7E. Broadcasts and polls to other machines get no reply, and neither does a long poll this
slice does not implement: a gaming machine ignores a long poll it does not support (SAS as
recalled; no public source confirmed it in this slice), and the host times out.

Implied ACK (SAS 6.02 section 3.1, as docs/protocols/sas.md gives its source): the host never
acknowledges a reply; its next poll does. A general poll's exception is taken off the queue when
any other poll follows it (a long poll to this machine, a broadcast, or any poll to another
machine); the same general poll again with nothing in between means the host missed the reply,
which is sent again and stays queued. ``drivers.sas.codec.ReplyLog`` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Protocol

from drivers.codec import Garbage
from drivers.sas.codec import (
    BROADCAST,
    Ack,
    EgmDecoder,
    EventReply,
    ExceptionReply,
    GeneralPoll,
    LongPoll,
    Nack,
    Reply,
    ReplyLog,
    encode_reply,
    spec_of,
)
from drivers.sas.commands import ReplyKind
from drivers.sas.game_info import MachineInfo
from drivers.sas.messages import (
    METER_CODE_WIDTHS,
    METER_LAYOUTS,
    DateTime,
    ExtendedMeters,
    ExtendedMetersRequest,
    LastBill,
    Meters,
    SasVersion,
    SelectedMeters,
    SelectedMetersRequest,
)
from firmware.sas.codes import DENOMINATION_CODES, bill_code
from firmware.sas.game_meters import GAME_METERS, game_id_of, game_meter
from firmware.sas.meters import BY_CODE, BY_FIELD
from firmware.sas.view import TerminalView

#: The SAS version this machine reports (0x54).
SAS_VERSION = "602"

#: The long polls a global broadcast (address 0) carries that the machine applies (never answering):
#: receive date and time (SAS 6.02 section 7.17).
BROADCASTS = frozenset({0x7F})

#: The game number of the machine's totals in 0x2F / 0x6F / 0xAF (1..N: one game's meters).
MACHINE_TOTALS = 0


#: A long poll's handler: the poll's data in, the reply's data out (None: no reply is due; for a
#: poll answered by ACK, any bytes mean ACK). A handler that refuses the poll's data (a value SAS
#: does not define) raises :class:`PollRefused`: the machine answers NACK and changes nothing.
Handler = Callable[[bytes], bytes | None]


class PollRefused(ValueError):
    """A long poll whose data this machine refuses: answered NACK."""


class PollSet(Protocol):
    """A group of long polls answered by one module (control, TITO, AFT, ...), built with what
    it needs of the terminal and handed to :class:`SasMachine`."""

    def handlers(self) -> Mapping[int, Handler]:
        """The long polls this set answers, by command code."""
        ...


class SasMachine:
    """One gaming machine at ``address`` on a SAS loop: the meter and identity polls answered
    here from ``terminal``, the others by the ``polls`` sets (a command answered twice is an error)."""

    def __init__(self, address: int, terminal: TerminalView, polls: Iterable[PollSet] = ()) -> None:
        self.address = address
        self.terminal = terminal
        self._decoder = EgmDecoder(address)
        self._log = ReplyLog()
        self._sent_exception = 0           #: the exception of the last general poll's reply
        #: Polls to this machine (or broadcast) decoded so far: the link is up while it grows.
        self.polls = 0
        self._long_polls: dict[int, Handler] = {
            **{command: partial(self._meter_poll, command) for command in METER_LAYOUTS},
            0x1F: self._machine_info, 0x2F: self._selected_meters, 0x48: self._last_bill,
            0x54: self._version, 0x6F: self._extended_meters, 0xAF: self._extended_meters,
            0x7E: self._date_time,
        }
        for group in polls:
            for command, handler in group.handlers().items():
                if command in self._long_polls:
                    raise ValueError(f"long poll 0x{command:02X} is answered twice ({type(group).__name__})")
                self._long_polls[command] = handler

    @property
    def commands(self) -> frozenset[int]:
        """The long polls this machine answers."""
        return frozenset(self._long_polls)

    def resync(self, reason: str) -> Garbage | None:
        """Drop an incomplete message (the bytes of a message that will not be finished); what was
        dropped, or None."""
        return self._decoder.drop_partial(reason)

    def receive(self, data: bytes) -> bytes:
        """Feed what the host sent; the reply to send (empty: none)."""
        self._decoder.receive_data(data)
        out = b""
        for event in self._decoder.events():
            verdict = self._log.on_event(event)
            if verdict is None:
                continue
            self.polls += 1
            if verdict.repeat:
                out += self._log.last_reply or b""
                continue
            if verdict.acknowledged is not None and self._sent_exception:
                self.terminal.exceptions.take(self._sent_exception)
            self._sent_exception = 0
            reply = self._answer(event)
            if reply:
                self._log.sent(reply)
                out += reply
        return out

    def _answer(self, poll: object) -> bytes | None:
        if isinstance(poll, GeneralPoll):
            queue = self.terminal.exceptions
            self._sent_exception = queue.peek()
            if self.terminal.real_time_events:
                event = queue.peek_event()
                return encode_reply(EventReply(self.address, event[0], event[1:]))
            return encode_reply(ExceptionReply(self._sent_exception))
        if not isinstance(poll, LongPoll) or (poll.address == BROADCAST and poll.command not in BROADCASTS):
            return None
        handler = self._long_polls.get(poll.command)
        try:
            data = None if handler is None else handler(poll.data)
        except PollRefused:
            return encode_reply(Nack(self.address))
        except ValueError:
            return None            # a body the codec framed but we cannot read: no answer
        if data is None or poll.address == BROADCAST:
            return None
        if spec_of(poll.command).reply_kind is ReplyKind.ACK:
            return encode_reply(Ack(self.address))
        return encode_reply(Reply(self.address, poll.command, data))

    # -- the long polls: each returns the reply's data, None for no reply -------------------------
    def _meter(self, field: str) -> int:
        return BY_FIELD[field].read(self.terminal.meters, self.terminal.identity.accounting_denom_cents)

    def _meter_poll(self, command: int, _data: bytes) -> bytes:
        return Meters(command, tuple((name, self._meter(name)) for name, _ in METER_LAYOUTS[command])).encode()

    def _machine_info(self, _data: bytes) -> bytes:
        ident = self.terminal.identity
        return MachineInfo(ident.game_id, ident.additional_id,
                           DENOMINATION_CODES.get(ident.accounting_denom_cents, 0), ident.max_bet, 0, 0,
                           ident.paytable_id, ident.base_percent).encode()

    def _version(self, _data: bytes) -> bytes:
        return SasVersion(SAS_VERSION, self.terminal.identity.serial).encode()

    def _last_bill(self, _data: bytes) -> bytes:
        cents = self.terminal.last_bill_cents()
        if cents is None:
            return LastBill(0, 0, 0).encode()
        count = self.terminal.meters.get(f"bills_in_by_denom.{cents}", 0)
        return LastBill(self.terminal.identity.country_code, bill_code(cents), count).encode()

    def _date_time(self, _data: bytes) -> bytes:
        return DateTime(self.terminal.now().replace(microsecond=0)).encode()

    def _game_values(self, game: int, codes: tuple[int, ...]) -> list[tuple[int, int]] | None:
        """(code, value) of each requested meter this terminal reports for ``game`` (0: the machine's
        totals, else the game's own meters, ``firmware/sas/game_meters.py``); None: no such game."""
        denom = self.terminal.identity.accounting_denom_cents
        meters = self.terminal.meters
        wanted = [code for code in codes if code in METER_CODE_WIDTHS]
        if game == MACHINE_TOTALS:
            return [(code, BY_CODE[code].read(meters, denom)) for code in wanted if code in BY_CODE]
        game_id = game_id_of(game)
        if game_id is None:
            return None
        return [(code, game_meter(code, meters, game_id, denom)) for code in wanted if code in GAME_METERS]

    def _selected_meters(self, data: bytes) -> bytes | None:
        request = SelectedMetersRequest.decode(data)
        values = self._game_values(request.game, request.codes)
        return None if values is None else SelectedMeters(request.game, tuple(values)).encode()

    def _extended_meters(self, data: bytes) -> bytes | None:
        request = ExtendedMetersRequest.decode(data)
        values = self._game_values(request.game, request.codes)
        if values is None:
            return None
        return ExtendedMeters(request.game, tuple((code, METER_CODE_WIDTHS[code], value)
                                                  for code, value in values)).encode()
