"""A small SAS host on a port: polls out, replies in, through the same codec as the machine.

:class:`SasHost` is what ``egm sim sas-host``, the live tests and the latency benchmark use to talk
to a gaming machine over a serial port or the pty of ``egm run --sas pty``. It sends each poll with
the wakeup bit on its first byte (``SasPort.write(..., wakeup=True)``), tells ``HostDecoder`` what
it asked and waits up to ``timeout`` for the reply. Bytes that arrive while no reply is due are the
machine's chirps (counted in :attr:`SasHost.chirps`) or line noise; they are read before each poll
so they cannot be taken for its reply.

Where the wakeup bit is lost (a pty), a chirp is the machine's address byte like the first byte of
a long poll's reply, or an exception code equal to the address: a chirp that crosses the host's
poll would be read as its reply. So while the link is down (no reply yet, or chirps heard since)
the host sends its poll right after a chirp: the next one is 200 ms away and the poll brings the
link up, which ends the chirping.

Implied ACK (docs/protocols/sas.md, "Link layer"): the machine takes an exception off its queue
when the next poll is not a repeat of the one that carried it. :meth:`SasHost.general_poll`
therefore polls a spare address (:data:`SPARE_ADDRESS`, no reply expected) after each general poll,
as hosts with one machine on the loop do, so the next general poll reads the next exception.
"""

from __future__ import annotations

import queue
import time
from typing import Final

from drivers.codec import Garbage
from drivers.sas.codec import (
    Ack,
    Chirp,
    EgmMessage,
    EventReply,
    ExceptionReply,
    GeneralPoll,
    HostDecoder,
    LongPoll,
    Poll,
    Reply,
    encode_poll,
)
from drivers.sas.game_info import RealTimeEvents
from drivers.sas.messages import parse_reply
from drivers.sas.port import SasPort

#: How long the host waits for a reply (seconds): SAS's 20 ms plus a loaded machine and the pty.
REPLY_TIMEOUT: Final = 0.5
#: The address polled between general polls so that each acknowledges the last (no machine there).
SPARE_ADDRESS: Final = 127
#: How long the host waits for a chirp before its first poll (the machine chirps every 200 ms).
CHIRP_WAIT: Final = 0.3


class SasHostError(Exception):
    """The machine did not answer, or answered something else than what was asked."""


class SasHost:
    """A host polling the machine at ``address`` on ``path`` (a device, or a pty's slave)."""

    def __init__(self, path: str, address: int = 1, *, timeout: float = REPLY_TIMEOUT,
                 spare: int = SPARE_ADDRESS) -> None:
        if spare == address:
            raise ValueError(f"the spare address {spare} is the machine's")
        self.address = address
        self.timeout = timeout
        self.spare = spare
        self._decoder = HostDecoder(address)
        self._inbox: queue.Queue[bytes] = queue.Queue()
        self.chirps = 0                        #: chirps seen while no reply was due
        self.noise: list[Garbage] = []         #: what could not be read
        self._awake = False                    #: the machine has answered since it last chirped
        self.port = SasPort(path, self._inbox.put, name="sas-host-read")

    def close(self) -> None:
        self.port.close()

    def __enter__(self) -> SasHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- polls ----------------------------------------------------------------------------------
    def ask(self, poll: Poll) -> EgmMessage | None:
        """Send ``poll`` and wait for its reply: the decoded message, None if none came in time."""
        self._take_waiting()
        if not self._awake:
            self._after_a_chirp()
        self.port.write(encode_poll(poll), wakeup=True)
        if poll.address != self.address:
            return None                        # another machine's (or a broadcast): nothing due here
        self._decoder.expect(poll)
        deadline = time.monotonic() + self.timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                self._decoder.receive_data(self._inbox.get(timeout=left))
            except queue.Empty:
                break
            for event in self._decoder.events():
                if isinstance(event, Chirp):
                    self.chirps += 1
                elif isinstance(event, Garbage):
                    self.noise.append(event)
                else:
                    self._awake = True
                    return event               # type: ignore[no-any-return]
            if self._decoder.expected is None:
                return None                    # the reply was garbage (bad CRC, another command)
        self._decoder.expected = None
        return None

    def general_poll(self) -> int | EventReply | None:
        """The exception the machine reports (0x00: none), or while real-time event reporting is on
        (:meth:`real_time_events`) its event, code and data (code 0x00: none); None if it did not
        answer. Then the spare address is polled so that the next general poll acknowledges this one."""
        reply = self.ask(GeneralPoll(self.address))
        self.ask(GeneralPoll(self.spare))
        if isinstance(reply, EventReply):
            return reply
        return reply.code if isinstance(reply, ExceptionReply) else None

    @property
    def real_time(self) -> bool:
        """Whether this host has turned the machine's real-time event reporting on."""
        return self._decoder.real_time

    def real_time_events(self, enabled: bool) -> None:
        """Turn the machine's real-time event reporting on or off (0x0E); SasHostError unless it
        acknowledges."""
        reply = self.long_poll(0x0E, RealTimeEvents(int(enabled)).encode())
        if not isinstance(reply, Ack):
            raise SasHostError(f"the machine answered {reply} to real-time event reporting {int(enabled):02X}")
        self._decoder.real_time = enabled

    def long_poll(self, command: int, data: bytes = b"") -> EgmMessage:
        """A long poll's reply (a ``Reply``, an ``Ack`` or a ``Nack``); SasHostError if none came."""
        reply = self.ask(LongPoll(self.address, command, data))
        if reply is None:
            raise SasHostError(f"no reply to long poll 0x{command:02X} within {self.timeout} s")
        return reply

    def read(self, command: int, data: bytes = b"") -> object:
        """A long poll's reply body, typed (``drivers.sas.messages.parse_reply``)."""
        reply = self.long_poll(command, data)
        if not isinstance(reply, Reply):
            raise SasHostError(f"long poll 0x{command:02X} was answered {reply}, not with data")
        return parse_reply(command, reply.data)

    def listen(self, seconds: float) -> int:
        """Poll nothing for ``seconds``; the chirps heard meanwhile."""
        before = self.chirps
        time.sleep(seconds)
        self._take_waiting()
        return self.chirps - before

    def _take_waiting(self, wait: float = 0.0) -> bool:
        """Read what arrived while no reply was due (chirps, late replies, noise), waiting up to
        ``wait`` seconds for a chirp; whether one came."""
        self._decoder.expected = None
        deadline = time.monotonic() + wait
        chirped = False
        while True:
            try:
                left = deadline - time.monotonic()
                data = self._inbox.get(timeout=left) if left > 0 and not chirped else self._inbox.get_nowait()
            except queue.Empty:
                return chirped
            self._decoder.receive_data(data)
            for event in self._decoder.events():
                if isinstance(event, Chirp):
                    self.chirps += 1
                    chirped, self._awake = True, False
                elif isinstance(event, Garbage):
                    self.noise.append(event)

    def _after_a_chirp(self) -> None:
        """Wait (up to :data:`CHIRP_WAIT`) for the machine's next chirp, so that the poll sent
        now cannot cross one."""
        self._take_waiting(CHIRP_WAIT)


__all__ = ["REPLY_TIMEOUT", "SPARE_ADDRESS", "SasHost", "SasHostError"]
