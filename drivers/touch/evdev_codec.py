"""Linux evdev touch events: a sans-I/O decoder (and encoder) of the ``input_event`` stream.

A record is the kernel's ``struct input_event`` in native byte order (``linux/input.h``)::

    +----------------+-----------------+--------+--------+---------+
    | tv_sec (long)  | tv_usec (long)  | type   | code   | value   |
    |                |                 | __u16  | __u16  | __s32   |
    +----------------+-----------------+--------+--------+---------+
      8 bytes          8 bytes           2        2        4        = 24 bytes on 64-bit Linux

Record alignment: the stream has no sync byte and no checksum, so it cannot resynchronise on
garbage inside it. Its alignment is fixed at its start: a read from an evdev node returns whole
records only, and the decoder keeps a partial record buffered until the rest arrives (a FIFO may
deliver any split). Every ``RECORD.size`` bytes from the start is one record; nothing else is
checked, because every bit pattern is a valid record. Records of types and codes the decoder does
not use (``EV_MSC``, other keys and axes) are ignored.

Multitouch protocol type B (kernel ``Documentation/input/multi-touch-protocol.rst``): ``ABS_MT_SLOT``
selects a contact slot; ``ABS_MT_TRACKING_ID`` >= 0 starts a contact in it, -1 ends it;
``ABS_MT_POSITION_X``/``_Y`` move it; ``EV_SYN SYN_REPORT`` closes the frame. Only the changes are
sent: a slot keeps its position between frames. At each ``SYN_REPORT`` the decoder reports one
:class:`Contact` per slot that changed: ``DOWN`` (a new tracking id), ``MOVE``, ``UP``. A device
without ``ABS_MT_*`` (single-touch) sends ``ABS_X``/``ABS_Y`` and ``EV_KEY BTN_TOUCH`` 1/0; it is
reported as slot 0. Once a multitouch record is seen, the single-touch records (the kernel's pointer
emulation that multitouch devices also send) are ignored.

``SYN_DROPPED``: the kernel's buffer overran and events were lost. Everything up to and including
the next ``SYN_REPORT`` is discarded (the kernel's rule); contacts keep their last known state.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from drivers.codec import NEED_DATA, StreamDecoder
from drivers.touch.contact import Contact, Phase

# linux/input-event-codes.h
EV_SYN = 0x00
EV_KEY = 0x01
EV_ABS = 0x03
EV_MSC = 0x04
SYN_REPORT = 0
SYN_DROPPED = 3
BTN_TOUCH = 0x14A
ABS_X = 0x00
ABS_Y = 0x01
ABS_MT_SLOT = 0x2F
ABS_MT_POSITION_X = 0x35
ABS_MT_POSITION_Y = 0x36
ABS_MT_TRACKING_ID = 0x39

#: ``struct input_event`` in native order and alignment (24 bytes on 64-bit Linux).
RECORD = struct.Struct("@llHHi")

_MT_CODES = frozenset({ABS_MT_SLOT, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_TRACKING_ID})


@dataclass(frozen=True, slots=True)
class InputEvent:
    """One ``struct input_event``."""

    type: int
    code: int
    value: int
    sec: int = 0
    usec: int = 0

    def encode(self) -> bytes:
        return RECORD.pack(self.sec, self.usec, self.type, self.code, self.value)


class RecordDecoder(StreamDecoder):
    """Bytes -> :class:`InputEvent` records; a partial record waits (see the module)."""

    max_buffer = 64 * RECORD.size

    def _decode(self, buffer: bytearray) -> tuple[int, Any]:
        if len(buffer) < RECORD.size:
            return 0, None
        sec, usec, type_, code, value = RECORD.unpack_from(buffer)
        return RECORD.size, InputEvent(type_, code, value, sec, usec)


@dataclass(slots=True)
class _Slot:
    tracking_id: int = -1
    x: int = 0
    y: int = 0
    down: bool = False          #: reported DOWN and not yet UP
    changed: bool = False


class TouchDecoder:
    """Bytes in (``receive_data``), raw :class:`Contact` changes out (``next_event``)."""

    def __init__(self, max_slots: int = 16) -> None:
        if max_slots < 1:
            raise ValueError(f"a touchscreen has at least 1 slot, not {max_slots}")
        self.max_slots = max_slots
        self._records = RecordDecoder()
        self._slots = [_Slot() for _ in range(max_slots)]
        self._slot = 0
        self._multitouch = False
        self._dropping = False
        self._ready: list[Contact] = []
        self.counters = {"records": 0, "frames": 0, "dropped": 0, "bad_slot": 0}

    def receive_data(self, data: bytes) -> None:
        self._records.receive_data(data)

    @property
    def buffered(self) -> int:
        """Bytes of a partial record waiting for the rest."""
        return self._records.buffered

    def next_event(self) -> Contact | Any:
        """The next :class:`Contact`, or :data:`~drivers.codec.NEED_DATA`."""
        while not self._ready:
            record = self._records.next_event()
            if record is NEED_DATA:
                return NEED_DATA
            self.feed(record)
        return self._ready.pop(0)

    def events(self) -> list[Contact]:
        out = []
        while (event := self.next_event()) is not NEED_DATA:
            out.append(event)
        return out

    def feed(self, event: InputEvent) -> list[Contact]:
        """Apply one record; the contacts it completed (also queued for ``next_event``)."""
        self.counters["records"] += 1
        if event.type == EV_SYN:
            if event.code == SYN_DROPPED:
                self._dropping = True
                self.counters["dropped"] += 1
                return []
            if event.code == SYN_REPORT:
                if self._dropping:
                    self._dropping = False
                    for slot in self._slots:
                        slot.changed = False
                    return []
                return self._report()
            return []
        if self._dropping:
            return []
        if event.type == EV_ABS:
            if event.code in _MT_CODES:
                self._multitouch = True
                self._mt(event.code, event.value)
            elif not self._multitouch and event.code in (ABS_X, ABS_Y):
                self._position(self._slots[0], event.code == ABS_X, event.value)
        elif event.type == EV_KEY and event.code == BTN_TOUCH and not self._multitouch:
            slot = self._slots[0]
            slot.tracking_id = 0 if event.value else -1
            slot.changed = True
        return []

    def _mt(self, code: int, value: int) -> None:
        if code == ABS_MT_SLOT:
            self._slot = value
            return
        if not 0 <= self._slot < self.max_slots:
            self.counters["bad_slot"] += 1
            return
        slot = self._slots[self._slot]
        if code == ABS_MT_TRACKING_ID:
            if value != slot.tracking_id:
                if slot.down and value >= 0:   # a new contact replaced the old one in one frame
                    self._ready.append(Contact(self._slot, slot.x, slot.y, Phase.UP))
                    slot.down = False
                slot.tracking_id = value
                slot.changed = True
        else:
            self._position(slot, code == ABS_MT_POSITION_X, value)

    @staticmethod
    def _position(slot: _Slot, is_x: bool, value: int) -> None:
        if is_x:
            slot.x = value
        else:
            slot.y = value
        slot.changed = True

    def _report(self) -> list[Contact]:
        self.counters["frames"] += 1
        start = len(self._ready)
        for index, slot in enumerate(self._slots):
            if not slot.changed:
                continue
            slot.changed = False
            if slot.tracking_id >= 0:
                phase = Phase.MOVE if slot.down else Phase.DOWN
                slot.down = True
                self._ready.append(Contact(index, slot.x, slot.y, phase))
            elif slot.down:
                slot.down = False
                self._ready.append(Contact(index, slot.x, slot.y, Phase.UP))
        return self._ready[start:]


# --- the device side: records for contact changes (the simulator uses it) --------------------
def encode(events: Iterable[InputEvent]) -> bytes:
    return b"".join(e.encode() for e in events)


def syn(sec: int = 0, usec: int = 0) -> InputEvent:
    return InputEvent(EV_SYN, SYN_REPORT, 0, sec, usec)


class TouchEncoder:
    """Contact changes -> the records a type-B multitouch device sends, one frame at a time.

    Like a kernel driver it sends only what changed, selects slots with ``ABS_MT_SLOT``, gives each
    new contact a fresh tracking id and sends ``BTN_TOUCH`` when the first contact starts and the
    last one ends. ``single_touch=True`` speaks the single-touch protocol instead (slot 0 only).
    """

    def __init__(self, *, single_touch: bool = False) -> None:
        self.single_touch = single_touch
        self._slot = 0
        self._next_id = 0
        self._active: dict[int, tuple[int, int]] = {}

    def frame(self, changes: Iterable[tuple[int, Phase, int, int]], *, sec: int = 0,
              usec: int = 0) -> bytes:
        """Records for ``(slot, phase, x, y)`` changes and the closing ``SYN_REPORT``."""
        was_touching = bool(self._active)
        out: list[InputEvent] = []

        def ev(type_: int, code: int, value: int) -> None:
            out.append(InputEvent(type_, code, value, sec, usec))

        for slot, phase, x, y in changes:
            if self.single_touch and slot != 0:
                raise ValueError("a single-touch device has slot 0 only")
            if phase is not Phase.DOWN and slot not in self._active:
                raise ValueError(f"slot {slot} is not touching: cannot {phase}")
            if phase is Phase.DOWN and slot in self._active:
                raise ValueError(f"slot {slot} is already touching")
            old = self._active.get(slot)
            if not self.single_touch and slot != self._slot:
                ev(EV_ABS, ABS_MT_SLOT, slot)
                self._slot = slot
            if phase is Phase.UP:
                del self._active[slot]
                if not self.single_touch:
                    ev(EV_ABS, ABS_MT_TRACKING_ID, -1)
                continue
            if phase is Phase.DOWN and not self.single_touch:
                ev(EV_ABS, ABS_MT_TRACKING_ID, self._next_id)
                self._next_id = (self._next_id + 1) & 0xFFFF
            x_code, y_code = ((ABS_X, ABS_Y) if self.single_touch
                              else (ABS_MT_POSITION_X, ABS_MT_POSITION_Y))
            if old is None or old[0] != x:
                ev(EV_ABS, x_code, x)
            if old is None or old[1] != y:
                ev(EV_ABS, y_code, y)
            self._active[slot] = (x, y)
        touching = bool(self._active)
        if touching != was_touching:
            ev(EV_KEY, BTN_TOUCH, int(touching))
        out.append(syn(sec, usec))
        return encode(out)
