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

import logging
import threading
import time
from typing import ClassVar

from drivers.codec import LocalProtocolError
from drivers.io_board.messages import (
    INPUTS,
    IO_KIND,
    IoState,
    IoType,
    decode,
    lamps_payload,
    meter_payload,
    states_of,
    tower_payload,
)
from drivers.link.codec import LinkFrame
from drivers.link.endpoint import LinkEndpoint
from drivers.link.hello import Hello
from drivers.link.reliable import Receiver
from hal.base import Lifecycle
from hal.devices.io_board import Input, IoBoard, TowerPattern
from hal.errors import DeviceOperationError
from hal.events import Button, ButtonPressed, Door, DoorChanged, KeySwitch, KeyTurned

log = logging.getLogger(__name__)


class IoBoardDriver(LinkEndpoint[IoState], IoBoard):
    """The cabinet's I/O board on a serial port (or a simulator's pty)."""

    device_class: ClassVar[str] = "io"
    PEER: ClassVar[str] = "the I/O board"
    PEER_KIND: ClassVar[int] = IO_KIND
    PEER_KIND_NAME: ClassVar[str] = "an I/O board"
    PORT_EXAMPLE: ClassVar[str] = "/dev/ttyACM1"

    def __init__(self, name: str, *, port: str, timeout: float = 1.0) -> None:
        super().__init__(name, port=port, timeout=timeout)
        #: What the host knows of every input (``last_status``, ``last_hello``: the last STATUS
        #: and HELLO). ``counters``, link health: garbage, bad_crc, malformed, nak, reconnects,
        #: power_ups, snapshots.
        self.inputs: dict[Input, bool] = dict.fromkeys(INPUTS, False)

    # --- lifecycle hooks ----------------------------------------------------------------------
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
    def is_open_door(self, door: Door) -> bool:
        with self._cond:
            return self.inputs[Door(door)]

    def tower(self, tier: int, pattern: TowerPattern) -> None:
        """Set one tier of the tower light (0 top) to ``pattern``; reliable."""
        self._command(IoType.TOWER, tower_payload(tier, pattern))

    def button_lamps(self, lit: frozenset[Button]) -> None:
        """Light exactly the buttons in ``lit``; reliable."""
        self._command(IoType.BUTTON_LAMPS, lamps_payload(frozenset(Button(b) for b in lit)))

    def pulse_meter(self, meter: int, count: int) -> None:
        """Advance hard meter ``meter`` by ``count`` (1..65535) pulses, exactly once. Accepted
        while the board is gone: the command goes out when it is back."""
        self._command(IoType.METER_PULSE, meter_payload(meter, count), when_gone=True)

    def wait_inputs(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the board's SNAPSHOT of every input (sent once it is
        opened); whether one has come."""
        deadline = time.monotonic() + timeout
        while not self.counters.get("snapshots") and time.monotonic() < deadline:
            time.sleep(0.01)
        return bool(self.counters.get("snapshots"))

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

    # --- link hooks (called with the condition held) -----------------------------------------
    def _peer_restarted(self, hello: Hello) -> list[LinkFrame]:
        # The board lost its own frames (its command side is non-volatile): a SNAPSHOT follows.
        self.counters["power_ups"] += 1
        log.warning("%s: the I/O board restarted (%s); waiting for its snapshot", self.name,
                    hello.cause.name)
        self._rx = Receiver(expected=hello.next_seq)
        return []

    def _decode_status(self, payload: bytes) -> IoState:
        return IoState.decode(payload)

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
