"""The host end of a product-link device on pyserial (``docs/protocols/link.md``).

:class:`LinkEndpoint` is what the shoe and I/O-board drivers share: the port and its read thread
(frames decoded by :class:`LinkCodec`, every sequenced one given to a :class:`Receiver`, the
:class:`Sender`'s overdue frames re-sent), the RESET handshake, STATUS requests, the HELLO
handling (reset / reconnect / the device lost its state) and the probing of a quiet line:
``MAX_MISSED`` STATUS_REQUESTs unanswered in a row, or a port error, and the device is
:meth:`~hal.base.Device.lost`.

A subclass names its peer (:attr:`PEER`, :attr:`PEER_KIND`...), closes its port (``_close``) and
handles what is its own: :meth:`_message` (one delivered reliable frame),
:meth:`_peer_restarted` (a HELLO saying the device lost its state) and, optionally,
:meth:`_new_session` (a RESET was answered). Those run with the condition ``_cond`` held.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Callable
from typing import ClassVar, Generic, TypeVar

import serial

from drivers.codec import Garbage
from drivers.link.codec import MAX_SEQ, SERIAL, LinkCodec, LinkFrame, LinkType, encode
from drivers.link.hello import Hello, HelloCause
from drivers.link.reliable import Receiver, Sender, control_seq
from hal.base import Device
from hal.errors import DeviceOperationError, DeviceTimeoutError

S = TypeVar("S")


class LinkEndpoint(Device, Generic[S]):
    """A product-link device on a serial port (or a simulator's pty); see the module doc."""

    #: Status probes of a quiet line in a row without an answer before the device counts as gone.
    MAX_MISSED: ClassVar[int] = 3
    #: Longest single blocking read; bounds how late the read thread notices a stop.
    READ_SLICE_S: ClassVar[float] = 0.02
    #: How far ahead of the next expected SEQ a reconnecting device's next SEQ may be.
    WINDOW: ClassVar[int] = 64
    #: The peer in log lines ("the shoe"), what its HELLO KIND must be, and that kind's name.
    PEER: ClassVar[str]
    PEER_KIND: ClassVar[int]
    PEER_KIND_NAME: ClassVar[str]
    #: An example port for the error message.
    PORT_EXAMPLE: ClassVar[str]

    def __init__(self, name: str, *, port: str, timeout: float = 1.0) -> None:
        super().__init__(name, timeout=timeout)
        if not port:
            raise ValueError(f"{name}: port names the serial device, e.g. {self.PORT_EXAMPLE}")
        self.port = port
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._status_lock = threading.Lock()
        #: Guards the delivery state and what the device last said (and a subclass's own).
        self._cond = threading.Condition()
        self._rx = Receiver()
        self._tx = Sender()
        self._codec = LinkCodec()
        self._synced = False               #: a RESET was answered once: reopen resynchronises
        self._awaiting_reset = False
        self._resets = self._statuses = 0
        self._last_heard = self._last_probe = 0.0
        self._missed = 0
        self.last_status: S | None = None
        self.last_hello: Hello | None = None
        self.counters: collections.Counter[str] = collections.Counter()

    # --- hooks --------------------------------------------------------------------------------
    @abstractmethod
    def _message(self, frame: LinkFrame) -> None:
        """One delivered reliable frame of the device."""

    @abstractmethod
    def _decode_status(self, payload: bytes) -> S:
        """The device's STATUS payload (ValueError if malformed)."""

    @abstractmethod
    def _peer_restarted(self, hello: Hello) -> list[LinkFrame]:
        """A HELLO (power-up, or too far ahead) from a device that lost its frames."""

    def _new_session(self) -> None:
        """A RESET was answered: both sides are at SEQ 1 (nothing to do by default)."""

    # --- lifecycle ----------------------------------------------------------------------------
    def _open(self) -> None:
        self._stop = threading.Event()
        self._codec = LinkCodec()
        self._missed = 0
        self._last_heard = self._last_probe = time.monotonic()
        self._serial = serial.Serial(self.port, timeout=self.READ_SLICE_S,
                                     write_timeout=self.timeout, **SERIAL)
        self._thread = threading.Thread(target=self._read_loop,
                                        name=f"{self.device_class}-read-{self.name}", daemon=True)
        self._thread.start()
        if self._synced:
            with self._cond:
                resync = self._rx.resync()
            self._write(resync)
            self._ask_status(self.MAX_MISSED)
        else:
            self._handshake()

    def status(self) -> S:
        """Ask the device for its status now."""
        self.require_open()
        return self._ask_status(1)

    # --- protocol steps -----------------------------------------------------------------------
    def _handshake(self) -> None:
        """RESET until the device answers HELLO (reset); then both sides are at SEQ 1."""
        for _ in range(self.MAX_MISSED):
            with self._cond:
                self._awaiting_reset = True
                target = self._resets + 1
            self._write(LinkFrame(0, LinkType.RESET))
            if self._wait_until(lambda: self._resets, target):
                return
        with self._cond:
            self._awaiting_reset = False
        raise DeviceTimeoutError(f"{self.name}: no HELLO in answer to RESET on {self.port}")

    def _ask_status(self, tries: int) -> S:
        with self._status_lock:
            for _ in range(tries):
                with self._cond:
                    start = self._statuses
                self._write(LinkFrame(0, LinkType.STATUS_REQUEST))
                if self._wait_until(lambda: self._statuses, start + 1):
                    assert self.last_status is not None
                    return self.last_status
        raise DeviceTimeoutError(f"{self.name}: no answer to a status request on {self.port}")

    def _wait_until(self, count: Callable[[], int], target: int) -> bool:
        """Whether ``count()`` (read under the condition) reached ``target`` within the time-out."""
        with self._cond:
            return self._cond.wait_for(lambda: count() >= target, self.timeout)

    def _write(self, frame: LinkFrame) -> None:
        with self._write_lock:
            port = self._serial
            try:
                if port is None:
                    raise serial.PortNotOpenError()
                port.write(encode(frame))
            except OSError as exc:
                raise DeviceOperationError(f"{self.name}: write failed: {exc}") from exc

    # --- the read thread ----------------------------------------------------------------------
    def _read_loop(self) -> None:
        stop, port = self._stop, self._serial
        assert port is not None
        while not stop.is_set():
            try:
                data = port.read(1)
                if data and port.in_waiting:
                    data += port.read(port.in_waiting)
                now = time.monotonic()
                replies: list[LinkFrame] = []
                if data:
                    self._codec.receive_data(data)
                    for event in self._codec.events():
                        replies += self._on_event(event, now)
                with self._cond:
                    if self._synced:
                        replies += self._tx.due(now)
                replies += self._heartbeat(now)
                with self._write_lock:
                    for frame in replies:
                        port.write(encode(frame))
            except OSError as exc:
                self.lost_from_thread(stop, f"port error: {exc}")
                return
            except Exception:
                log_of(self).exception("%s: unexpected error in the read loop (reading on)", self.name)
            if self._missed >= self.MAX_MISSED:
                self.lost_from_thread(stop, f"no answer to {self._missed} status requests in a row")
                return

    def _heartbeat(self, now: float) -> list[LinkFrame]:
        if now - self._last_heard < self.timeout or now - self._last_probe < self.timeout:
            return []
        if self._last_probe > self._last_heard:
            self._missed += 1
            if self._missed >= self.MAX_MISSED:
                return []
        self._last_probe = now
        return [LinkFrame(0, LinkType.STATUS_REQUEST)]

    def _on_event(self, event: LinkFrame | Garbage, now: float) -> list[LinkFrame]:
        """Handle one decoded frame; the frames to send back."""
        if isinstance(event, Garbage):
            self.counters["bad_crc" if event.reason == "bad CRC" else "garbage"] += 1
            log_of(self).warning("%s: garbage from %s (%s): %s", self.name, self.PEER,
                                 event.reason, event.data.hex(" "))
            return []
        self._last_heard, self._missed = now, 0
        with self._cond:
            if event.seq:
                if not self._synced:
                    return []                  # a frame of a session the RESET will end
                deliver, reply = self._rx.receive(event, now)
                if deliver is not None:
                    self._message(deliver)
                return [] if reply is None else [reply]
            return self._control(event, now)

    def _control(self, frame: LinkFrame, now: float) -> list[LinkFrame]:
        kind, seq = frame.type, control_seq(frame)
        if kind == LinkType.ACK and seq is not None:
            self._tx.acknowledged(seq)
            self._cond.notify_all()
        elif kind == LinkType.RESEND_FROM and seq is not None:
            return self._tx.resend_from(seq, now)
        elif kind == LinkType.NAK and seq is not None:
            self.counters["nak"] += 1
            log_of(self).error("%s: %s refused our frame %d (reason %s)", self.name, self.PEER,
                               seq, frame.payload[2:].hex())
            self._tx.acknowledged(seq)
            self._cond.notify_all()
        elif kind == LinkType.STATUS:
            try:
                self.last_status = self._decode_status(frame.payload)
            except ValueError as exc:
                self.counters["malformed"] += 1
                log_of(self).warning("%s: %s", self.name, exc)
                return []
            self._statuses += 1
            self._cond.notify_all()
        elif kind == LinkType.HELLO:
            return self._hello(frame)
        else:
            self.counters["malformed"] += 1
            log_of(self).warning("%s: unexpected frame type 0x%02X (SEQ 0) ignored", self.name,
                                 kind)
        return []

    def _hello(self, frame: LinkFrame) -> list[LinkFrame]:
        lg = log_of(self)
        try:
            hello = Hello.decode(frame.payload)
        except ValueError as exc:
            self.counters["malformed"] += 1
            lg.warning("%s: %s", self.name, exc)
            return []
        if hello.kind != self.PEER_KIND:
            self.counters["malformed"] += 1
            lg.error("%s: HELLO from a device of kind 0x%02X, not %s: ignored", self.name,
                     hello.kind, self.PEER_KIND_NAME)
            return []
        self.last_hello = hello
        lg.info("%s: HELLO (%s), firmware %d.%d, next SEQ %d", self.name, hello.cause.name,
                *hello.version, hello.next_seq)
        if hello.cause is HelloCause.RESET and self._awaiting_reset:
            self._awaiting_reset = False
            self._rx, self._tx = Receiver(), Sender()
            self._new_session()
            self._synced = True
            self._resets += 1
            self._cond.notify_all()
            return []
        if not self._synced:
            return []                          # our RESET is on its way
        ahead = (hello.next_seq - self._rx.expected) % MAX_SEQ
        if hello.cause is HelloCause.RECONNECT and ahead <= self.WINDOW:
            self.counters["reconnects"] += 1
            return [self._rx.resync()]
        return self._peer_restarted(hello)


def log_of(endpoint: Device) -> logging.Logger:
    """The logger of the endpoint's own module, so its lines keep their logger name."""
    return logging.getLogger(type(endpoint).__module__)


__all__ = ["LinkEndpoint", "log_of"]
