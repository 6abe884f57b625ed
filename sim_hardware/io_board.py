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

Faults as the shoe's (both are a :class:`~sim_hardware.link_device.LinkDeviceSimulator`): dropped /
repeated / corrupted frames, lost host frames, random disturbance, unplug (port closed, or a silent
line) and replug (HELLO reconnect), power off / on.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass

from drivers.io_board.messages import (
    INPUTS,
    IO_KIND,
    IoState,
    IoType,
    decode,
    input_payload,
    lamps_of,
    mask_of,
    snapshot_payload,
)
from drivers.link.codec import LinkFrame, LinkType, seq_bytes
from hal.devices.io_board import TowerPattern
from hal.events import Button, Door, KeySwitch
from sim_hardware.link_device import NAK_MALFORMED, VERSION, LinkDeviceSimulator
from sim_hardware.pty_link import READ_SLICE_S

__all__ = ["NAK_MALFORMED", "VERSION", "IoBoardSimulator"]


@dataclass(slots=True)
class _Job:
    seq: int
    meter: int
    left: int
    next_at: float


class IoBoardSimulator(LinkDeviceSimulator):
    """One simulated I/O board."""

    KIND = IO_KIND
    LOG_NAME = "io sim"

    def __init__(self, *, pulse_s: float = 0.05, retry_s: float = 0.2, window: int = 64,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.pulse_s = pulse_s
        self.inputs: dict[Door | KeySwitch | Button, bool] = dict.fromkeys(INPUTS, False)
        self.tower: dict[int, TowerPattern] = {}
        self.lamps: frozenset[Button] = frozenset()
        #: Non-volatile: pulses done per meter, the pulse job, the host command receiver.
        self.meters: collections.Counter[int] = collections.Counter()
        self._job: _Job | None = None
        self._snapshot_due = False
        super().__init__(retry_s=retry_s, window=window, clock=clock)

    def _power_up(self) -> None:
        super()._power_up()
        self._snapshot_due = True
        if self._job is not None:
            self._job.next_at = self._clock()

    # --- state ------------------------------------------------------------------------------
    @property
    def pulses_left(self) -> int:
        with self._lock:
            return 0 if self._job is None else self._job.left

    def state(self) -> IoState:
        with self._lock:
            return IoState(mask_of(self.inputs), self._tx.next,
                           min(len(self._tx.unacknowledged), 0xFF), self.pulses_left)

    # --- the device: the pulse job and the host's frames ------------------------------------
    def tick(self) -> list[bytes]:
        """The pulse job, the retry timer, HELLO and a due SNAPSHOT: every write to make now."""
        with self._lock:
            if self.powered:
                self._pulse(self._clock())
            return super().tick()

    def _tick_extra(self) -> None:
        if self._snapshot_due and len(self._tx.unacknowledged) < self.window:
            self._snapshot_due = False
            self._send(IoType.SNAPSHOT, snapshot_payload(mask_of(self.inputs)))

    def _read_slice(self) -> float:
        return READ_SLICE_S if self._job is None else min(READ_SLICE_S, self.pulse_s)

    def _pulse(self, now: float) -> None:
        job = self._job
        while job is not None and job.left and now >= job.next_at:
            self.meters[job.meter] += 1
            job.left -= 1
            job.next_at += self.pulse_s
        if job is not None and not job.left:
            self._job = None
            self._out(LinkFrame(0, LinkType.ACK, seq_bytes(job.seq)))

    def _reliable(self, frame: LinkFrame) -> None:
        if self._job is not None:
            return                          # busy pulsing: no ACK may pass the job's
        deliver, reply = self._rx.receive(frame, self._clock())
        if deliver is not None and deliver.type == IoType.METER_PULSE:
            reply = None                    # acknowledged when the last pulse is done
        if reply is not None:
            self._out(reply)
        if deliver is not None:
            self._command(deliver)

    def _after_reset(self) -> None:
        self._job = None
        self._snapshot_due = False
        self._send(IoType.SNAPSHOT, snapshot_payload(mask_of(self.inputs)))

    def _command(self, frame: LinkFrame) -> None:
        try:
            message = decode(frame.type, frame.payload)
            if message.type not in (IoType.TOWER, IoType.METER_PULSE, IoType.BUTTON_LAMPS):
                raise ValueError(f"{message.type.name} is not a host command")
        except ValueError as exc:
            if frame.type == IoType.METER_PULSE:   # not acknowledged above: answer it now
                self._out(LinkFrame(0, LinkType.ACK, seq_bytes(frame.seq)))
            self._refuse(frame, exc)
            return
        if message.type is IoType.TOWER:
            self.tower[message.tier] = message.pattern
        elif message.type is IoType.BUTTON_LAMPS:
            self.lamps = lamps_of(message.mask)
        else:
            self._job = _Job(frame.seq, message.meter, message.count, self._clock())
            self._pulse(self._clock())

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

    def open_door_while_off(self, door: Door) -> None:
        """The door was opened while the board had no power: no edge is sent, the input reads open
        in the next SNAPSHOT (the one at power-up), as on a cabinet opened while switched off."""
        with self._lock:
            self.inputs[Door(door)] = True
            self._snapshot_due = True

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

    def __repr__(self) -> str:
        return (f"<IoBoardSimulator next SEQ {self._tx.next}, "
                f"{len(self._tx.unacknowledged)} unacknowledged, meters {dict(self.meters)}>")
