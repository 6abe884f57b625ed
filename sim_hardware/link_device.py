"""The device end of the product link, simulated (``docs/protocols/link.md``).

:class:`LinkDeviceSimulator` is what the shoe and I/O-board simulators share (the device-side
mirror of :class:`drivers.link.endpoint.LinkEndpoint`): the framing (a :class:`LinkCodec` in, every
frame :func:`encode`\\ d out), the reliable delivery (a :class:`Sender` for the device's own frames,
kept until acknowledged and re-sent on the retry timer; a :class:`Receiver` for the host's
commands), the control frames (ACK, RESEND_FROM, NAK, STATUS_REQUEST, RESET), the HELLO, the
``serve`` loop on a byte port, and the faults: corrupted, dropped and repeated frames (one-shot or
at random rates), lost host frames, unplug / replug and power off / on.

``feed(bytes)`` and ``tick()`` are the whole device (sans-I/O, each returns the writes to make);
``serve`` runs them on a byte port. The control API is thread-safe: frames it produces wait in an
outbox the serve loop writes.

A subclass names itself (:attr:`KIND` for its HELLO, :attr:`LOG_NAME` for its log lines), says
what a STATUS is (:meth:`state`), handles the host's delivered commands (:meth:`_command`) and,
optionally, what is its own: :meth:`_power_up` (what survives a power cut), :meth:`_reliable` (one
reliable host frame), :meth:`_after_reset` (a RESET was answered with HELLO), :meth:`_tick_extra`
(frames due on the timer) and :meth:`_read_slice`. All of them run with ``_lock`` held.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from drivers.codec import Garbage
from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes
from drivers.link.hello import Hello, HelloCause
from drivers.link.reliable import Receiver, Sender, control_seq
from sim_hardware.pty_link import READ_SLICE_S, BytePort

#: NAK reason a device gives for a host frame it cannot use.
NAK_MALFORMED = 0x01
VERSION = (1, 0)


class LinkDeviceSimulator(ABC):
    """One simulated product-link device; see the module doc."""

    #: The device's HELLO KIND, and its name in log lines ("shoe sim").
    KIND: ClassVar[int]
    LOG_NAME: ClassVar[str]
    VERSION: ClassVar[tuple[int, int]] = VERSION

    def __init__(self, *, retry_s: float = 0.2, window: int = 64,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.retry_s = retry_s
        self.window = window
        self._clock = clock
        self._lock = threading.RLock()
        self._outbox: list[bytes] = []
        self._rx = Receiver()
        #: Host frames received by type; frames thrown away unacknowledged by a RESET or a
        #: power cut.
        self.received: collections.Counter[int] = collections.Counter()
        self.discarded: list[LinkFrame] = []
        # wire faults
        self._drop = 0
        self._corrupt = 0
        self._lose = 0
        self._repeat = False
        self._rnd: random.Random | None = None
        self._loss = self._dup = 0.0
        # the cable and the power
        self._silent = False
        self._unplug = False
        self.unplugged = False
        self.powered = True
        self._power_up()

    @property
    def _log(self) -> logging.Logger:
        """The logger of the subclass's module, so its lines keep their logger name."""
        return logging.getLogger(type(self).__module__)

    # --- hooks --------------------------------------------------------------------------------
    def _power_up(self) -> None:
        """Power comes (back): what the RAM held starts afresh, HELLO (power-up) is due."""
        self._codec = LinkCodec()
        self._tx = Sender(retry_s=self.retry_s, window=self.window)
        self._hello: HelloCause | None = HelloCause.POWER_UP

    @abstractmethod
    def state(self) -> Any:
        """What a STATUS frame would say now (an object with ``encode()``)."""

    @abstractmethod
    def _command(self, frame: LinkFrame) -> None:
        """One delivered reliable frame of the host."""

    def _reliable(self, frame: LinkFrame) -> None:
        """A reliable (SEQ > 0) host frame: acknowledge it, hand a new one to :meth:`_command`."""
        deliver, reply = self._rx.receive(frame, self._clock())
        if reply is not None:
            self._out(reply)
        if deliver is not None:
            self._command(deliver)

    def _after_reset(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """A RESET was answered with HELLO (reset): both sides are at SEQ 1."""

    def _tick_extra(self) -> None:  # noqa: B027 - an optional hook, empty by default
        """On the timer, after a due HELLO and before the re-sends (nothing by default)."""

    def _read_slice(self) -> float:
        """The serve loop's longest wait for host bytes."""
        return READ_SLICE_S

    # --- state ------------------------------------------------------------------------------
    @property
    def next_seq(self) -> int:
        return self._tx.next

    @property
    def unacknowledged(self) -> list[LinkFrame]:
        with self._lock:
            return self._tx.unacknowledged

    @property
    def window_full(self) -> bool:
        return len(self._tx.unacknowledged) >= self.window

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; every write to make now, in order."""
        with self._lock:
            if not self.powered or self._silent or self._unplug:
                return []
            self._codec.receive_data(data)
            for event in self._codec.events():
                if isinstance(event, Garbage):
                    self._log.debug("%s: garbage from the host (%s)", self.LOG_NAME, event.reason)
                elif self._lose > 0:
                    self._lose -= 1
                    self._log.debug("%s: host frame 0x%02X lost on the wire", self.LOG_NAME,
                                    event.type)
                else:
                    self.received[event.type] += 1
                    self._on_frame(event)
            return self._take()

    def tick(self) -> list[bytes]:
        """The retry timer and the HELLO: every write to make now (and the control API's)."""
        with self._lock:
            if not self.powered or self._silent:
                return []
            if self._hello is not None:
                self._say_hello(self._hello)
            self._tick_extra()
            for frame in self._tx.due(self._clock()):
                self._out(frame)
            return self._take()

    def _take(self) -> list[bytes]:
        out, self._outbox = self._outbox, []
        return out

    def _on_frame(self, frame: LinkFrame) -> None:
        if frame.seq:                                   # a reliable command of the host
            self._reliable(frame)
            return
        seq, kind = control_seq(frame), frame.type
        if kind == LinkType.ACK and seq is not None:
            self._tx.acknowledged(seq)
        elif kind == LinkType.RESEND_FROM and seq is not None:
            for again in self._tx.resend_from(seq, self._clock()):
                self._out(again)
        elif kind == LinkType.NAK and seq is not None:
            self._log.warning("%s: the host refused frame %d (reason %s)", self.LOG_NAME, seq,
                              frame.payload[2:])
            self._tx.acknowledged(seq)
        elif kind == LinkType.STATUS_REQUEST:
            self._out(LinkFrame(0, LinkType.STATUS, self.state().encode()))
        elif kind == LinkType.RESET:
            self._forget("reset by the host")
            self._tx, self._rx = Sender(retry_s=self.retry_s, window=self.window), Receiver()
            self._say_hello(HelloCause.RESET)
            self._after_reset()
        else:
            self._log.warning("%s: unexpected host frame type 0x%02X ignored", self.LOG_NAME, kind)

    def _refuse(self, frame: LinkFrame, reason: object) -> None:
        """NAK a delivered host frame that cannot be used."""
        self._log.warning("%s: host frame %d refused: %s", self.LOG_NAME, frame.seq, reason)
        self._out(LinkFrame(0, LinkType.NAK, seq_bytes(frame.seq) + bytes((NAK_MALFORMED,))))

    def _say_hello(self, cause: HelloCause) -> None:
        self._hello = None
        self._out(LinkFrame(0, LinkType.HELLO,
                            Hello(self.KIND, self.VERSION, self._tx.next, cause).encode()))

    def _forget(self, why: str) -> None:
        lost = self._tx.unacknowledged
        if lost:
            self._log.info("%s: %d unacknowledged frames forgotten (%s)", self.LOG_NAME, len(lost),
                           why)
        self.discarded += lost

    def _send(self, kind: int, payload: bytes = b"") -> None:
        self._out(self._tx.send(kind, payload, self._clock()))

    def _out(self, frame: LinkFrame) -> None:
        """Put ``frame`` on the wire as the disturbed wire carries it."""
        if not self.powered or self._silent or self.unplugged:
            return
        data = encode(frame)
        if self._corrupt > 0:
            self._corrupt -= 1
            data = data[:-1] + bytes((data[-1] ^ 0x5A,))
        if self._drop > 0:
            self._drop -= 1
            return
        copies = 2 if self._repeat else 1
        if self._rnd is not None and frame.type not in (LinkType.HELLO, LinkType.STATUS):
            if self._rnd.random() < self._loss:
                return
            if self._rnd.random() < self._dup:
                copies = 2
        self._outbox += [data] * copies

    def serve(self, port: BytePort, stop: threading.Event) -> None:
        """Run on ``port`` until ``stop`` is set, the port fails, or :meth:`unplug` closes it.

        Serving again (on a new port) after an unplug is the replug: the device says HELLO
        (reconnect) and still holds every frame not yet acknowledged.
        """
        with self._lock:
            if self.unplugged:
                self.unplugged = self._unplug = False
                self._hello = HelloCause.RECONNECT
        while not stop.is_set():
            if self._unplug:
                with self._lock:
                    port.close()
                    self.unplugged = True
                    self._outbox.clear()
                self._log.info("%s: unplugged", self.LOG_NAME)
                return
            try:
                data = port.read(self._read_slice())
                writes = self.feed(data) if data else []
                writes += self.tick()
                for chunk in writes:
                    port.write(chunk)
            except OSError as exc:
                self._log.warning("%s: port failed, stopping: %s", self.LOG_NAME, exc)
                return

    # --- control API: the wire and the power --------------------------------------------------
    def send_frame(self, kind: int, payload: bytes = b"") -> None:
        """A firmware bug: send any reliable frame (a malformed one, an unknown type)."""
        with self._lock:
            self._out(self._tx.send(kind, payload, self._clock()))

    def corrupt_next_crc(self, n: int = 1) -> None:
        """The next ``n`` frames the device writes go out with a wrong CRC."""
        with self._lock:
            self._corrupt = n

    def drop_next(self, n: int = 1) -> None:
        """The next ``n`` frames the device writes are lost on the wire."""
        with self._lock:
            self._drop = n

    def lose_next_from_host(self, n: int = 1) -> None:
        """The next ``n`` frames from the host never arrive."""
        with self._lock:
            self._lose = n

    def repeat(self, on: bool = True) -> None:
        """Every frame the device writes goes out twice."""
        with self._lock:
            self._repeat = on

    def disturb(self, *, loss: float = 0.0, dup: float = 0.0, seed: int = 0) -> None:
        """From now on each event frame and acknowledgement the device writes is lost with
        probability ``loss`` and doubled with ``dup`` (HELLO and STATUS are spared); 0, 0 stops."""
        if not (0 <= loss < 1 and 0 <= dup <= 1):
            raise ValueError(f"loss is in [0, 1) and dup in [0, 1], not {loss}, {dup}")
        with self._lock:
            self._loss, self._dup = loss, dup
            self._rnd = random.Random(seed) if loss or dup else None

    def unplug(self, *, close_port: bool = True) -> None:
        """Pull the cable. ``close_port``: the serve loop closes its port (the driver's reads fail;
        replug by serving on a new port); else the line goes silent until :meth:`replug`."""
        with self._lock:
            if close_port:
                self._unplug = True
            else:
                self._silent = True

    def replug(self) -> None:
        """Put a silenced cable back: the device says HELLO (reconnect) and carries on."""
        with self._lock:
            if self._silent:
                self._silent = False
                self._codec = LinkCodec()
                self._hello = HelloCause.RECONNECT

    def power_off(self) -> None:
        """Power is cut: silent, and every frame not acknowledged is lost with the RAM."""
        with self._lock:
            if self.powered:
                self._forget("power off")
                self.powered = False
                self._outbox.clear()

    def power_on(self) -> None:
        """Power comes back: the device's sequence restarts at 1, HELLO (power-up)."""
        with self._lock:
            if not self.powered:
                self.powered = True
                self._power_up()

    def power_cycle(self) -> None:
        self.power_off()
        self.power_on()


__all__ = ["NAK_MALFORMED", "VERSION", "LinkDeviceSimulator"]
