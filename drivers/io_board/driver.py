"""I/O board driver: the host side of the product link over pyserial (``docs/protocols/io-board.md``).

One read thread decodes frames (:class:`LinkCodec`); every sequenced one goes through a
:class:`Receiver` (acknowledged, duplicates dropped, a gap answered RESEND_FROM: exactly once, in
order) and becomes events:

* INPUT: a door edge is :class:`DoorChanged`, a key edge :class:`KeyTurned`, a button going down
  :class:`ButtonPressed` (its release only updates :attr:`IoBoardDriver.inputs`).
* SNAPSHOT (after the board's HELLO on power-up or RESET, or when edges overflowed its window):
  every door and key that differs from what the host knew is reported as its edge, so a door
  opened while the host was away is not missed; buttons are only recorded (a held button is not a
  press).

Commands (:meth:`tower`, :meth:`button_lamps`, :meth:`pulse_meter`) are reliable frames held by a
:class:`Sender` until acknowledged and re-sent every 200 ms. The board acknowledges METER_PULSE
only after pulsing; :meth:`pulse_meter` works while the board is gone (unplugged) too: the
command waits in the window and goes out when the board is back, so a hard meter never loses
nor doubles a pulse. :meth:`wait_sent` waits until every command is acknowledged.

Open: the first RESETs the board; a reopen (after an unplug) keeps both delivery states and sends
RESEND_FROM(expected); a HELLO reconnect is answered the same way. A HELLO power-up means the board
lost its own unacknowledged frames (its command receiver and meter job are non-volatile): the
receiver restarts at the board's next SEQ and the SNAPSHOT that follows tells the inputs. A quiet
line is probed with STATUS_REQUEST; ``MAX_MISSED`` probes unanswered in a row, or a port error,
and the device is :meth:`lost`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import ClassVar

import serial

from drivers.codec import Garbage, LocalProtocolError
from drivers.io_board.messages import (
    INPUTS,
    IO_KIND,
    IoState,
    IoType,
    TowerPattern,
    decode,
    lamps_payload,
    meter_payload,
    states_of,
    tower_payload,
)
from drivers.link.codec import MAX_SEQ, SERIAL, LinkCodec, LinkFrame, LinkType, encode
from drivers.link.reliable import Receiver, Sender, control_seq
from drivers.shoe.control import Hello, HelloCause
from hal.base import Device, Lifecycle
from hal.errors import DeviceOperationError, DeviceTimeoutError
from hal.events import Button, ButtonPressed, Door, DoorChanged, KeySwitch, KeyTurned

log = logging.getLogger(__name__)

Input = Door | KeySwitch | Button


class IoBoardDriver(Device):
    """The cabinet's I/O board on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "io"
    MAX_MISSED: ClassVar[int] = 3
    READ_SLICE_S: ClassVar[float] = 0.02
    WINDOW: ClassVar[int] = 64

    def __init__(self, name: str, *, port: str, timeout: float = 1.0) -> None:
        super().__init__(name, timeout=timeout)
        if not port:
            raise ValueError(f"{name}: port names the serial device, e.g. /dev/ttyACM1")
        self.port = port
        self._serial: serial.Serial | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._write_lock = threading.Lock()
        self._status_lock = threading.Lock()
        self._cond = threading.Condition()
        self._rx = Receiver()
        self._tx = Sender()
        self._codec = LinkCodec()
        self._synced = False
        self._awaiting_reset = False
        self._resets = self._statuses = 0
        self._last_heard = self._last_probe = 0.0
        self._missed = 0
        #: What the host knows of every input; the last STATUS and HELLO.
        self.inputs: dict[Input, bool] = dict.fromkeys(INPUTS, False)
        self.last_status: IoState | None = None
        self.last_hello: Hello | None = None
        #: Link health: garbage, bad_crc, malformed, nak, reconnects, power_ups, snapshots.
        self.counters: collections.Counter[str] = collections.Counter()

    # --- lifecycle hooks ----------------------------------------------------------------------
    def _open(self) -> None:
        self._stop = threading.Event()
        self._codec = LinkCodec()
        self._missed = 0
        self._last_heard = self._last_probe = time.monotonic()
        self._serial = serial.Serial(self.port, timeout=self.READ_SLICE_S,
                                     write_timeout=self.timeout, **SERIAL)
        self._thread = threading.Thread(target=self._read_loop, name=f"io-read-{self.name}",
                                        daemon=True)
        self._thread.start()
        if self._synced:
            with self._cond:
                resync = self._rx.resync()
            self._write(resync)
            self._ask_status(self.MAX_MISSED)
        else:
            self._handshake()

    def _close(self) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(2.0)
        port, self._serial = self._serial, None
        if port is not None:
            with self._write_lock:
                port.close()

    # --- the cabinet's requests ---------------------------------------------------------------
    def status(self) -> IoState:
        self.require_open()
        return self._ask_status(1)

    def is_open_door(self, door: Door) -> bool:
        with self._cond:
            return self.inputs[Door(door)]

    def tower(self, tier: int, pattern: TowerPattern) -> None:
        """Set one tier of the tower light (0 top) to ``pattern``; reliable."""
        self._command(IoType.TOWER, tower_payload(tier, pattern))

    def button_lamps(self, lit: set[Button] | frozenset[Button]) -> None:
        """Light exactly the buttons in ``lit``; reliable."""
        self._command(IoType.BUTTON_LAMPS, lamps_payload(frozenset(Button(b) for b in lit)))

    def pulse_meter(self, meter: int, count: int) -> None:
        """Advance hard meter ``meter`` by ``count`` (1..65535) pulses, exactly once. Accepted
        while the board is gone: the command goes out when it is back."""
        self._command(IoType.METER_PULSE, meter_payload(meter, count), when_gone=True)

    @property
    def unacknowledged(self) -> int:
        """Commands not yet acknowledged (a METER_PULSE: not yet fully pulsed)."""
        with self._cond:
            return len(self._tx.unacknowledged)

    def wait_sent(self, timeout: float) -> bool:
        """Wait until every command is acknowledged; False if some is not within ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._tx.unacknowledged, timeout)

    def _command(self, kind: IoType, payload: bytes, *, when_gone: bool = False) -> None:
        if not (when_gone and self._synced and self._was_gone()):
            self.require_open()
        with self._cond:
            try:
                frame = self._tx.send(kind, payload, time.monotonic())
            except LocalProtocolError as exc:
                raise DeviceOperationError(f"{self.name}: {exc}") from exc
        if self.is_open:
            try:
                self._write(frame)
            except DeviceOperationError:
                log.warning("%s: command %d not written now; the re-send timer will", self.name,
                            frame.seq)

    def _was_gone(self) -> bool:
        return self._lifecycle is Lifecycle.GONE

    # --- protocol steps -----------------------------------------------------------------------
    def _handshake(self) -> None:
        for _ in range(self.MAX_MISSED):
            with self._cond:
                self._awaiting_reset = True
                target = self._resets + 1
            self._write(LinkFrame(0, LinkType.RESET))
            if self._wait(lambda target=target: self._resets >= target):
                return
        with self._cond:
            self._awaiting_reset = False
        raise DeviceTimeoutError(f"{self.name}: no HELLO in answer to RESET on {self.port}")

    def _ask_status(self, tries: int) -> IoState:
        with self._status_lock:
            for _ in range(tries):
                with self._cond:
                    start = self._statuses
                self._write(LinkFrame(0, LinkType.STATUS_REQUEST))
                if self._wait(lambda start=start: self._statuses > start):
                    assert self.last_status is not None
                    return self.last_status
        raise DeviceTimeoutError(f"{self.name}: no answer to a status request on {self.port}")

    def _wait(self, done) -> bool:
        with self._cond:
            return self._cond.wait_for(done, self.timeout)

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
                self._vanished(stop, f"port error: {exc}")
                return
            except Exception:
                log.exception("%s: unexpected error in the read loop (reading on)", self.name)
            if self._missed >= self.MAX_MISSED:
                self._vanished(stop, f"no answer to {self._missed} status requests in a row")
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

    def _vanished(self, stop: threading.Event, reason: str) -> None:
        while not stop.is_set():
            if self._lock.acquire(timeout=0.05):
                try:
                    self.lost(reason)
                finally:
                    self._lock.release()
                return

    def _on_event(self, event: LinkFrame | Garbage, now: float) -> list[LinkFrame]:
        if isinstance(event, Garbage):
            self.counters["bad_crc" if event.reason == "bad CRC" else "garbage"] += 1
            log.warning("%s: garbage from the I/O board (%s): %s", self.name, event.reason,
                        event.data.hex(" "))
            return []
        self._last_heard, self._missed = now, 0
        with self._cond:
            if event.seq:
                if not self._synced:
                    return []
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
            log.error("%s: the I/O board refused our frame %d (reason %s)", self.name, seq,
                      frame.payload[2:].hex())
            self._tx.acknowledged(seq)
            self._cond.notify_all()
        elif kind == LinkType.STATUS:
            try:
                self.last_status = IoState.decode(frame.payload)
            except ValueError as exc:
                self.counters["malformed"] += 1
                log.warning("%s: %s", self.name, exc)
                return []
            self._statuses += 1
            self._cond.notify_all()
        elif kind == LinkType.HELLO:
            return self._hello(frame)
        else:
            self.counters["malformed"] += 1
            log.warning("%s: unexpected frame type 0x%02X (SEQ 0) ignored", self.name, kind)
        return []

    def _hello(self, frame: LinkFrame) -> list[LinkFrame]:
        try:
            hello = Hello.decode(frame.payload)
        except ValueError as exc:
            self.counters["malformed"] += 1
            log.warning("%s: %s", self.name, exc)
            return []
        if hello.kind != IO_KIND:
            self.counters["malformed"] += 1
            log.error("%s: HELLO from a device of kind 0x%02X, not an I/O board: ignored",
                      self.name, hello.kind)
            return []
        self.last_hello = hello
        log.info("%s: HELLO (%s), firmware %d.%d, next SEQ %d", self.name, hello.cause.name,
                 *hello.version, hello.next_seq)
        if hello.cause is HelloCause.RESET and self._awaiting_reset:
            self._awaiting_reset = False
            self._rx, self._tx = Receiver(), Sender()
            self._synced = True
            self._resets += 1
            self._cond.notify_all()
            return []
        if not self._synced:
            return []
        ahead = (hello.next_seq - self._rx.expected) % MAX_SEQ
        if hello.cause is HelloCause.RECONNECT and ahead <= self.WINDOW:
            self.counters["reconnects"] += 1
            return [self._rx.resync()]
        # The board lost its own frames (its command side is non-volatile): a SNAPSHOT follows.
        self.counters["power_ups"] += 1
        log.warning("%s: the I/O board restarted (%s); waiting for its snapshot", self.name,
                    hello.cause.name)
        self._rx = Receiver(expected=hello.next_seq)
        return []

    def _message(self, frame: LinkFrame) -> None:
        """One delivered board message (called with the condition held)."""
        try:
            message = decode(frame.type, frame.payload)
            if message.type not in (IoType.INPUT, IoType.SNAPSHOT):
                raise ValueError(f"{message.type.name} is a host command, not a board event")
        except ValueError as exc:
            self.counters["malformed"] += 1
            log.error("%s: malformed frame %d ignored: %s", self.name, frame.seq, exc)
            return
        if message.type is IoType.INPUT:
            assert message.input is not None
            self._edge(message.input, message.state, press=True)
            return
        self.counters["snapshots"] += 1
        for name, on in states_of(message.mask).items():
            self._edge(name, on, press=False)

    def _edge(self, name: Input, on: bool, *, press: bool) -> None:
        if self.inputs[name] == on:
            return
        self.inputs[name] = on
        if isinstance(name, Door):
            self._emit(DoorChanged(self.name, door=name, open=on))
        elif isinstance(name, KeySwitch):
            self._emit(KeyTurned(self.name, key=name, on=on))
        elif on and press:
            self._emit(ButtonPressed(self.name, button=name))


__all__ = ["IoBoardDriver"]
