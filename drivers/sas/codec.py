"""SAS 6.02 link layer: a sans-I/O codec for the gaming machine (EGM) and the host.

Wire (``docs/protocols/sas.md``), 19200 baud, 8 data bits and a ninth "wakeup" bit that the host
sets on the first byte of each message (mark/space parity, ``CMSPAR``, on a Linux port)::

    general poll   0x80 | address                       -> one exception code byte, or while
                                                           real-time event reporting is on
                   address, 0xFF, event code, data..., CRC_L CRC_H   (drivers/sas/events.py)
    R long poll    address, command                     -> reply
    S long poll    address, command, data..., CRC_L CRC_H   (data length fixed by command)
    M long poll    address, command, length, data..., CRC_L CRC_H
    reply          address, command, [length,] data..., CRC_L CRC_H
                   or ACK (the address) / NACK (address | 0x80) for polls that only act

The CRC is :func:`drivers.sas.crc.sas_crc` over everything before it.

On a pseudo-terminal the wakeup bit is lost, so :class:`EgmDecoder` frames by content: outside a
message a byte with bit 7 set is a general poll (0x80, address 0, polls no machine: it is skipped
as garbage, not taken for a poll to another machine), any other byte an address that starts a long
poll whose length the command table (``drivers/sas/commands.py``) gives; our long polls are
confirmed by their CRC, other machines' polls are skipped as far as the table knows their length.
After a bad CRC or an unknown command only the address byte is dropped and the search restarts
right after it.

:class:`HostDecoder` is told what was asked (``expect``) and frames the reply accordingly; a byte
equal to the machine's address while nothing is expected is the machine's chirp. With
``real_time`` set (the host turned real-time event reporting on), a general poll's answer that
starts with the address and 0xFF is an event response, framed by its event code's data length.
The same event classes are the messages the encoders take, so golden frames pin both roles.

Implied ACK (:class:`ReplyLog`): the next poll to this address that is not a repeat acknowledges
the last reply; the same poll again, with no poll to another address in between, asks for the last
reply again (it must be resent, not acted on twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from drivers.codec import Garbage, LocalProtocolError, StreamDecoder
from drivers.sas.commands import LONG_POLLS, LongPollSpec, PollType, ReplyKind
from drivers.sas.crc import crc_bytes, sas_crc, with_crc
from drivers.sas.events import EVENT_RESPONSE, data_length

#: pyserial settings of the line (the wakeup bit needs mark/space parity on a real port).
SERIAL: Final = {"baudrate": 19200, "bytesize": 8, "parity": "N", "stopbits": 1}
GENERAL_POLL_BIT: Final = 0x80
NACK_BIT: Final = 0x80
#: Address 0 is the broadcast address of long polls; machines answer 1-127.
BROADCAST: Final = 0
#: The gaming machine must start its reply within this long after the poll (seconds).
REPLY_DEADLINE: Final = 0.020
#: No poll for this long (seconds) and the link is down: the machine starts chirping.
LINK_DOWN_AFTER: Final = 5.0


def _check_address(address: int, *, broadcast: bool = False) -> None:
    low = BROADCAST if broadcast else 1
    if not low <= address <= 0x7F:
        raise LocalProtocolError(f"SAS address {address} is outside {low}-127")


# -- messages (events of one role, arguments of the other's encoder) ----------------------------

@dataclass(frozen=True, slots=True)
class GeneralPoll:
    address: int


@dataclass(frozen=True, slots=True)
class LongPoll:
    address: int
    command: int
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class OtherAddress:
    """A poll for another machine, skipped; ``command`` None for a general poll."""

    address: int
    command: int | None = None


@dataclass(frozen=True, slots=True)
class ExceptionReply:
    code: int


@dataclass(frozen=True, slots=True)
class Reply:
    address: int
    command: int
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class EventReply:
    """A general poll's answer while real-time event reporting is on (``drivers/sas/events.py``):
    address, 0xFF, the event code, its data, CRC. Code 0x00: no activity."""

    address: int
    code: int
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Ack:
    address: int


@dataclass(frozen=True, slots=True)
class Nack:
    address: int


@dataclass(frozen=True, slots=True)
class Chirp:
    address: int


Poll = GeneralPoll | LongPoll
EgmMessage = ExceptionReply | EventReply | Reply | Ack | Nack | Chirp


def spec_of(command: int) -> LongPollSpec:
    try:
        return LONG_POLLS[command]
    except KeyError:
        raise LocalProtocolError(f"long poll 0x{command:02X} is not in the SAS table") from None


# -- encoders ---------------------------------------------------------------------------------

def encode_poll(poll: Poll) -> bytes:
    """The bytes the host sends for ``poll``."""
    if isinstance(poll, GeneralPoll):
        _check_address(poll.address)
        return bytes((GENERAL_POLL_BIT | poll.address,))
    _check_address(poll.address, broadcast=True)
    spec = spec_of(poll.command)
    head = bytes((poll.address, poll.command))
    if spec.type is PollType.R:
        if poll.data:
            raise LocalProtocolError(f"R poll 0x{poll.command:02X} carries no data")
        return head
    if spec.type is PollType.S:
        if len(poll.data) != spec.request:
            raise LocalProtocolError(
                f"S poll 0x{poll.command:02X} carries {spec.request} data bytes, not {len(poll.data)}")
        return with_crc(head + poll.data)
    if len(poll.data) > 0xFF:
        raise LocalProtocolError("an M poll carries at most 255 data bytes")
    return with_crc(head + bytes((len(poll.data),)) + poll.data)


def encode_reply(reply: EgmMessage) -> bytes:
    """The bytes the gaming machine sends for ``reply``."""
    if isinstance(reply, ExceptionReply):
        if not 0 <= reply.code <= 0xFF:
            raise LocalProtocolError(f"an exception code is one byte, not {reply.code}")
        return bytes((reply.code,))
    _check_address(reply.address)
    if isinstance(reply, EventReply):
        if not 0 <= reply.code <= 0xFF:
            raise LocalProtocolError(f"an event code is one byte, not {reply.code}")
        if len(reply.data) != data_length(reply.code):
            raise LocalProtocolError(
                f"event 0x{reply.code:02X} carries {data_length(reply.code)} data bytes, not {len(reply.data)}")
        return with_crc(bytes((reply.address, EVENT_RESPONSE, reply.code)) + reply.data)
    if isinstance(reply, Ack | Chirp):
        return bytes((reply.address,))
    if isinstance(reply, Nack):
        return bytes((reply.address | NACK_BIT,))
    spec = spec_of(reply.command)
    head = bytes((reply.address, reply.command))
    if spec.reply_kind is ReplyKind.FIXED:
        if len(reply.data) != spec.reply:
            raise LocalProtocolError(
                f"reply 0x{reply.command:02X} carries {spec.reply} data bytes, not {len(reply.data)}")
        return with_crc(head + reply.data)
    if spec.reply_kind is ReplyKind.ACK:
        raise LocalProtocolError(f"long poll 0x{reply.command:02X} is answered by ACK/NACK")
    if len(reply.data) > 0xFF:
        raise LocalProtocolError("a variable reply carries at most 255 data bytes")
    return with_crc(head + bytes((len(reply.data),)) + reply.data)


# -- framing helpers --------------------------------------------------------------------------

def _poll_length(buffer: bytearray, spec: LongPollSpec) -> int | None:
    """Bytes of the long poll at the start of ``buffer`` (None: the length byte has not come)."""
    if spec.type is PollType.R:
        return 2
    if spec.type is PollType.S:
        assert spec.request is not None
        return 2 + spec.request + 2
    if len(buffer) < 3:
        return None
    return 3 + buffer[2] + 2


def _crc_ok(frame: bytes) -> bool:
    return crc_bytes(frame[:-2]) == frame[-2:]


class EgmDecoder(StreamDecoder):
    """The gaming machine's side: fed what the host sends, yields the polls (framing by content)."""

    max_buffer = 2 * (3 + 0xFF + 2)

    def __init__(self, address: int) -> None:
        super().__init__()
        _check_address(address)
        self.address = address

    def _decode(self, buffer: bytearray) -> tuple[int, object]:
        first = buffer[0]
        if first & GENERAL_POLL_BIT:
            address = first & 0x7F
            if address == self.address:
                return 1, GeneralPoll(address)
            if address == BROADCAST:
                # No machine has address 0 for a general poll, so 0x80 polls nobody: it must not
                # count as a poll to another machine, or a host that sends it before each message
                # (sas-comm-py, to stand for the wakeup bit) could never repeat a poll.
                return 1, Garbage(bytes(buffer[:1]), "general poll to address 0 (a wakeup byte)")
            return 1, OtherAddress(address)
        if len(buffer) < 2:
            return 0, None
        command = buffer[1]
        ours = first in (self.address, BROADCAST)
        spec = LONG_POLLS.get(command)
        if spec is None:
            # Drop the address byte only: if it was noise, the next byte may be a real poll.
            if ours:
                return 1, Garbage(bytes(buffer[:1]), f"unknown long poll 0x{command:02X}")
            return 1, OtherAddress(first, command)
        length = _poll_length(buffer, spec)
        if length is None or len(buffer) < length:
            return 0, None
        frame = bytes(buffer[:length])
        if spec.type is not PollType.R and not _crc_ok(frame):
            return 1, Garbage(frame[:1], "bad CRC")
        if not ours:
            return length, OtherAddress(first, command)
        data = frame[3:-2] if spec.type is PollType.M else frame[2:-2] if spec.type is PollType.S else b""
        return length, LongPoll(first, command, data)


class HostDecoder(StreamDecoder):
    """The host's side: fed what the machine replies to the poll given to :meth:`expect`."""

    max_buffer = 2 * (3 + 0xFF + 2)

    def __init__(self, address: int) -> None:
        super().__init__()
        _check_address(address)
        self.address = address
        self.expected: Poll | None = None
        #: The host has real-time event reporting on: a general poll is answered by an event
        #: response (:class:`EventReply`) rather than an exception byte.
        self.real_time = False

    def expect(self, poll: Poll) -> None:
        """The host has just sent ``poll``: frame what follows as its reply (none to a broadcast)."""
        if isinstance(poll, LongPoll):
            spec_of(poll.command)           # a poll we cannot frame the reply of is our bug
        self.expected = None if poll.address == BROADCAST else poll

    def _decode(self, buffer: bytearray) -> tuple[int, object]:
        expected = self.expected
        first = buffer[0]
        if expected is None:
            if first == self.address:
                return 1, Chirp(first)
            return 1, Garbage(bytes(buffer[:1]), "byte while no reply is due")
        if isinstance(expected, GeneralPoll):
            if self.real_time and first == self.address:
                return self._event(buffer)
            self.expected = None
            return 1, ExceptionReply(first)
        if first == self.address | NACK_BIT:
            self.expected = None
            return 1, Nack(self.address)
        if first != self.address:
            self.expected = None
            return 1, Garbage(bytes(buffer[:1]), "reply from another address")
        spec = LONG_POLLS[expected.command]
        if spec.reply_kind is ReplyKind.ACK:
            self.expected = None
            return 1, Ack(first)
        if len(buffer) < 2:
            return 0, None
        if buffer[1] != expected.command:
            self.expected = None
            return 1, Garbage(bytes(buffer[:1]), f"reply to 0x{buffer[1]:02X}, not 0x{expected.command:02X}")
        if spec.reply_kind is ReplyKind.FIXED:
            length = 2 + spec.reply + 2
            start = 2
        else:
            if len(buffer) < 3:
                return 0, None
            length = 3 + buffer[2] + 2
            start = 3
        frame = self._complete(buffer, length)
        if not isinstance(frame, bytes):
            return (0 if frame is None else length), frame
        return length, Reply(first, expected.command, frame[start:-2])

    def _event(self, buffer: bytearray) -> tuple[int, object]:
        """An event response (reporting on): address, 0xFF, code, the code's data, CRC. A machine
        that answers an exception byte equal to its address instead is read as that exception."""
        if len(buffer) < 2:
            return 0, None
        if buffer[1] != EVENT_RESPONSE:
            self.expected = None
            return 1, ExceptionReply(buffer[0])
        length = 3 + data_length(buffer[2]) + 2 if len(buffer) >= 3 else 5
        frame = self._complete(buffer, length)
        if not isinstance(frame, bytes):
            return (0 if frame is None else length), frame
        return length, EventReply(frame[0], frame[2], frame[3:-2])

    def _complete(self, buffer: bytearray, length: int) -> bytes | Garbage | None:
        """The reply of ``length`` bytes at the start of ``buffer``: None until all have come, then
        the frame if its CRC is right (the reply is no longer expected either way)."""
        if len(buffer) < length:
            return None
        self.expected = None
        frame = bytes(buffer[:length])
        return frame if _crc_ok(frame) else Garbage(frame, "bad CRC")


# -- implied ACK and retry (gaming machine side) ------------------------------------------------

@dataclass(frozen=True, slots=True)
class Verdict:
    """What a poll to this machine means for the last reply."""

    #: The poll repeats the last one: resend ``ReplyLog.last_reply``, do not act again.
    repeat: bool
    #: The reply this poll acknowledged (implied ACK), if one was waiting.
    acknowledged: bytes | None = None


@dataclass(slots=True)
class ReplyLog:
    """The last poll and reply of this machine, to tell a retry from a new poll."""

    last_poll: Poll | None = None
    last_reply: bytes | None = None
    _interrupted: bool = field(default=False, repr=False)

    def on_event(self, event: object) -> Verdict | None:
        """Feed every event of :class:`EgmDecoder`; a verdict for the polls to this machine."""
        if isinstance(event, OtherAddress):
            self._interrupted = True
            return None
        if not isinstance(event, GeneralPoll | LongPoll):
            return None
        if event == self.last_poll and not self._interrupted and self.last_reply is not None:
            return Verdict(repeat=True)
        acknowledged = self.last_reply
        self.last_poll, self.last_reply, self._interrupted = event, None, False
        return Verdict(repeat=False, acknowledged=acknowledged)

    def sent(self, reply: bytes) -> None:
        """The machine answered the last poll with ``reply``."""
        self.last_reply = reply


@dataclass(slots=True)
class LinkWatch:
    """Link up while polls arrive; down after :data:`LINK_DOWN_AFTER` seconds without one."""

    timeout: float = LINK_DOWN_AFTER
    last_poll_at: float | None = None

    def polled(self, now: float) -> None:
        self.last_poll_at = now

    def up(self, now: float) -> bool:
        return self.last_poll_at is not None and now - self.last_poll_at < self.timeout


__all__ = [
    "Ack", "Chirp", "EgmDecoder", "EventReply", "ExceptionReply", "GeneralPoll", "HostDecoder", "LinkWatch",
    "LongPoll", "Nack", "OtherAddress", "Reply", "ReplyLog", "Verdict", "encode_poll",
    "encode_reply", "sas_crc", "spec_of",
]
