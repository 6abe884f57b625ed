"""An I/O board, simulated: the device side of the product link (``docs/protocols/io-board.md``).

Control API (thread-safe): open / close doors, turn keys, press buttons (each edge a reliable
INPUT frame), read the tower light, the button lamps and the meter counts. Host commands (TOWER,
BUTTON_LAMPS, METER_PULSE) arrive through a :class:`~drivers.link.reliable.Receiver`; a METER_PULSE
starts a pulse job (one pulse every ``pulse_s``, driven by :meth:`tick`) and is acknowledged only
when the last pulse is done; while a job runs every other reliable host frame is ignored
unacknowledged (the host re-sends it), so a cumulative ACK can never cover an unfinished job.

Like a real board the receive side (next expected host SEQ), the pulse job and the meter counts
live in non-volatile memory: a power cycle loses only the board's own unacknowledged frames (HELLO
power-up with next SEQ 1, then a SNAPSHOT of all inputs) and the job resumes where it stopped.
A full window (64 frames) coalesces further edges into one SNAPSHOT sent when there is room.

Faults as the shoe's: dropped / repeated / corrupted frames, lost host frames, random disturbance,
unplug (port closed, or a silent line) and replug (HELLO reconnect), power off / on.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from drivers.codec import Garbage
from drivers.io_board.messages import (
    INPUTS,
    IO_KIND,
    IoState,
    IoType,
    TowerPattern,
    decode,
    input_payload,
    lamps_of,
    mask_of,
    snapshot_payload,
)
from drivers.link.codec import LinkCodec, LinkFrame, LinkType, encode, seq_bytes
from drivers.link.reliable import Receiver, Sender, control_seq
from drivers.shoe.control import Hello, HelloCause
from hal.events import Button, Door, KeySwitch
from sim_hardware.pty_link import READ_SLICE_S, BytePort

log = logging.getLogger(__name__)

NAK_MALFORMED = 0x01
VERSION = (1, 0)


@dataclass(slots=True)
class _Job:
    seq: int
    meter: int
    left: int
    next_at: float


class IoBoardSimulator:
    """One simulated I/O board."""

    def __init__(self, *, pulse_s: float = 0.05, retry_s: float = 0.2, window: int = 64,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pulse_s = pulse_s
        self.retry_s = retry_s
        self.window = window
        self._clock = clock
        self._lock = threading.RLock()
        self._outbox: list[bytes] = []
        self.inputs: dict[Door | KeySwitch | Button, bool] = dict.fromkeys(INPUTS, False)
        self.tower: dict[int, TowerPattern] = {}
        self.lamps: frozenset[Button] = frozenset()
        #: Non-volatile: pulses done per meter, the pulse job, the host command receiver.
        self.meters: collections.Counter[int] = collections.Counter()
        self._job: _Job | None = None
        self._rx = Receiver()
        self.received: collections.Counter[int] = collections.Counter()
        self.discarded: list[LinkFrame] = []
        self._snapshot_due = False
        self._drop = self._corrupt = self._lose = 0
        self._repeat = False
        self._rnd: random.Random | None = None
        self._loss = self._dup = 0.0
        self._silent = self._unplug = self.unplugged = False
        self.powered = True
        self._power_up()

    def _power_up(self) -> None:
        self._codec = LinkCodec()
        self._tx = Sender(retry_s=self.retry_s, window=self.window)
        self._hello: HelloCause | None = HelloCause.POWER_UP
        self._snapshot_due = True
        if self._job is not None:
            self._job.next_at = self._clock()

    # --- state ------------------------------------------------------------------------------
    @property
    def unacknowledged(self) -> list[LinkFrame]:
        with self._lock:
            return self._tx.unacknowledged

    @property
    def pulses_left(self) -> int:
        with self._lock:
            return 0 if self._job is None else self._job.left

    def state(self) -> IoState:
        with self._lock:
            return IoState(mask_of(self.inputs), self._tx.next,
                           min(len(self._tx.unacknowledged), 0xFF), self.pulses_left)

    # --- the device: bytes in, bytes out ----------------------------------------------------
    def feed(self, data: bytes) -> list[bytes]:
        with self._lock:
            if not self.powered or self._silent or self._unplug:
                return []
            self._codec.receive_data(data)
            for event in self._codec.events():
                if isinstance(event, Garbage):
                    log.debug("io sim: garbage from the host (%s)", event.reason)
                elif self._lose > 0:
                    self._lose -= 1
                else:
                    self.received[event.type] += 1
                    self._on_frame(event)
            return self._take()

    def tick(self) -> list[bytes]:
        """The pulse job, the retry timer, HELLO and a due SNAPSHOT: every write to make now."""
        with self._lock:
            if not self.powered:
                return []
            self._pulse(self._clock())
            if self._silent:
                return []
            if self._hello is not None:
                self._say_hello(self._hello)
            if self._snapshot_due and len(self._tx.unacknowledged) < self.window:
                self._snapshot_due = False
                self._send(IoType.SNAPSHOT, snapshot_payload(mask_of(self.inputs)))
            for frame in self._tx.due(self._clock()):
                self._out(frame)
            return self._take()

    def _pulse(self, now: float) -> None:
        job = self._job
        while job is not None and job.left and now >= job.next_at:
            self.meters[job.meter] += 1
            job.left -= 1
            job.next_at += self.pulse_s
        if job is not None and not job.left:
            self._job = None
            self._out(LinkFrame(0, LinkType.ACK, seq_bytes(job.seq)))

    def _take(self) -> list[bytes]:
        out, self._outbox = self._outbox, []
        return out

    def _on_frame(self, frame: LinkFrame) -> None:
        if frame.seq:
            if self._job is not None:
                return                      # busy pulsing: no ACK may pass the job's
            deliver, reply = self._rx.receive(frame, self._clock())
            if deliver is not None and deliver.type == IoType.METER_PULSE:
                reply = None                # acknowledged when the last pulse is done
            if reply is not None:
                self._out(reply)
            if deliver is not None:
                self._command(deliver)
            return
        seq, kind = control_seq(frame), frame.type
        if kind == LinkType.ACK and seq is not None:
            self._tx.acknowledged(seq)
        elif kind == LinkType.RESEND_FROM and seq is not None:
            for again in self._tx.resend_from(seq, self._clock()):
                self._out(again)
        elif kind == LinkType.NAK and seq is not None:
            self._tx.acknowledged(seq)
        elif kind == LinkType.STATUS_REQUEST:
            self._out(LinkFrame(0, LinkType.STATUS, self.state().encode()))
        elif kind == LinkType.RESET:
            self._forget("reset by the host")
            self._tx, self._rx = Sender(retry_s=self.retry_s, window=self.window), Receiver()
            self._job = None
            self._say_hello(HelloCause.RESET)
            self._snapshot_due = False
            self._send(IoType.SNAPSHOT, snapshot_payload(mask_of(self.inputs)))
        else:
            log.warning("io sim: unexpected host frame type 0x%02X ignored", kind)

    def _command(self, frame: LinkFrame) -> None:
        try:
            message = decode(frame.type, frame.payload)
            if message.type not in (IoType.TOWER, IoType.METER_PULSE, IoType.BUTTON_LAMPS):
                raise ValueError(f"{message.type.name} is not a host command")
        except ValueError as exc:
            log.warning("io sim: host frame %d refused: %s", frame.seq, exc)
            if frame.type == IoType.METER_PULSE:   # not acknowledged above: answer it now
                self._out(LinkFrame(0, LinkType.ACK, seq_bytes(frame.seq)))
            self._out(LinkFrame(0, LinkType.NAK, seq_bytes(frame.seq) + bytes((NAK_MALFORMED,))))
            return
        if message.type is IoType.TOWER:
            self.tower[message.tier] = message.pattern
        elif message.type is IoType.BUTTON_LAMPS:
            self.lamps = lamps_of(message.mask)
        else:
            self._job = _Job(frame.seq, message.meter, message.count, self._clock())
            self._pulse(self._clock())

    def _say_hello(self, cause: HelloCause) -> None:
        self._hello = None
        self._out(LinkFrame(0, LinkType.HELLO,
                            Hello(IO_KIND, VERSION, self._tx.next, cause).encode()))

    def _forget(self, why: str) -> None:
        lost = self._tx.unacknowledged
        if lost:
            log.info("io sim: %d unacknowledged frames forgotten (%s)", len(lost), why)
        self.discarded += lost

    def _send(self, kind: IoType, payload: bytes) -> None:
        self._out(self._tx.send(kind, payload, self._clock()))

    def _out(self, frame: LinkFrame) -> None:
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
        """Run on ``port`` until ``stop``, a port failure or an unplug; serving again on a new
        port is the replug (HELLO reconnect, every unacknowledged frame still held)."""
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
                return
            try:
                data = port.read(READ_SLICE_S if self._job is None else min(READ_SLICE_S,
                                                                             self.pulse_s))
                writes = self.feed(data) if data else []
                writes += self.tick()
                for chunk in writes:
                    port.write(chunk)
            except OSError as exc:
                log.warning("io sim: port failed, stopping: %s", exc)
                return

    # --- control API: the cabinet's switches ------------------------------------------------
    def _set(self, name: Door | KeySwitch | Button, on: bool) -> bool:
        with self._lock:
            if not self.powered:
                return False
            if self.inputs[name] == on:
                return True
            self.inputs[name] = on
            if self._snapshot_due or len(self._tx.unacknowledged) >= self.window:
                self._snapshot_due = True   # coalesced: the SNAPSHOT carries it
            else:
                self._send(IoType.INPUT, input_payload(name, on))
            return True

    def open_door(self, door: Door) -> bool:
        return self._set(Door(door), True)

    def close_door(self, door: Door) -> bool:
        return self._set(Door(door), False)

    def turn_key(self, key: KeySwitch, on: bool = True) -> bool:
        return self._set(KeySwitch(key), on)

    def press(self, button: Button) -> bool:
        """A press and its release: two INPUT edges."""
        button = Button(button)
        return self._set(button, True) and self._set(button, False)

    def hold(self, button: Button, down: bool = True) -> bool:
        return self._set(Button(button), down)

    # --- control API: the wire and the power --------------------------------------------------
    def send_frame(self, kind: int, payload: bytes = b"") -> None:
        """A firmware bug: send any reliable frame."""
        with self._lock:
            self._out(self._tx.send(kind, payload, self._clock()))

    def corrupt_next_crc(self, n: int = 1) -> None:
        with self._lock:
            self._corrupt = n

    def drop_next(self, n: int = 1) -> None:
        with self._lock:
            self._drop = n

    def lose_next_from_host(self, n: int = 1) -> None:
        with self._lock:
            self._lose = n

    def repeat(self, on: bool = True) -> None:
        with self._lock:
            self._repeat = on

    def disturb(self, *, loss: float = 0.0, dup: float = 0.0, seed: int = 0) -> None:
        if not (0 <= loss < 1 and 0 <= dup <= 1):
            raise ValueError(f"loss is in [0, 1) and dup in [0, 1], not {loss}, {dup}")
        with self._lock:
            self._loss, self._dup = loss, dup
            self._rnd = random.Random(seed) if loss or dup else None

    def unplug(self, *, close_port: bool = True) -> None:
        with self._lock:
            if close_port:
                self._unplug = True
            else:
                self._silent = True

    def replug(self) -> None:
        with self._lock:
            if self._silent:
                self._silent = False
                self._codec = LinkCodec()
                self._hello = HelloCause.RECONNECT

    def power_off(self) -> None:
        with self._lock:
            if self.powered:
                self._forget("power off")
                self.powered = False
                self._outbox.clear()

    def power_on(self) -> None:
        with self._lock:
            if not self.powered:
                self.powered = True
                self._power_up()

    def power_cycle(self) -> None:
        self.power_off()
        self.power_on()

    def __repr__(self) -> str:
        return (f"<IoBoardSimulator next SEQ {self._tx.next}, "
                f"{len(self._tx.unacknowledged)} unacknowledged, meters {dict(self.meters)}>")
