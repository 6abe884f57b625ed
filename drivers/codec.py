"""What every sans-I/O wire codec shares (h11's shape, pymodbus's framer rules).

A codec never touches a port. Bytes in with ``receive_data``, events out with ``next_event`` (an
event or :data:`NEED_DATA`), bytes out with ``send``. The same codec class serves both ends of a
link: the *host* role (the terminal's driver) and the *device* role (the simulator), so golden
frames pin both and a shared bug cannot hide.

Garbage never raises: bytes that cannot start a frame, a frame with a bad checksum, a frame too
long for the protocol are reported as a :class:`Garbage` event and skipped, and decoding carries on
from the next possible frame start (resynchronisation). A receive buffer that outgrows
``max_buffer`` without yielding a frame is discarded the same way. Encoding a message the role may
not send, or one that cannot be encoded, is a :class:`LocalProtocolError`: a bug on our side.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Final


class ProtocolError(Exception):
    """Base of the protocol errors."""


class LocalProtocolError(ProtocolError):
    """We tried to send something the protocol or our role does not allow."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol in a way a driver must act on (e.g. lost sequence)."""


class Role(enum.Enum):
    HOST = "host"          #: the terminal's driver
    DEVICE = "device"      #: the device (or its simulator)

    @property
    def peer(self) -> Role:
        return Role.DEVICE if self is Role.HOST else Role.HOST


class _NeedData:
    _instance: _NeedData | None = None

    def __new__(cls) -> _NeedData:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NEED_DATA"


#: ``next_event`` found no complete event in the buffer: feed more bytes.
NEED_DATA: Final = _NeedData()


@dataclass(frozen=True, slots=True)
class Garbage:
    """Bytes skipped while resynchronising, and why."""

    data: bytes
    reason: str


class StreamDecoder(ABC):
    """A bounded receive buffer and the resynchronising decode loop."""

    #: The most bytes kept while waiting for a frame to complete.
    max_buffer: int = 4096

    def __init__(self) -> None:
        self._buffer = bytearray()

    def receive_data(self, data: bytes) -> None:
        self._buffer += data

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def drop_partial(self, reason: str) -> Garbage | None:
        """Drop what is buffered (an incomplete frame the caller knows is stale): the report, or
        None when nothing was buffered."""
        if not self._buffer:
            return None
        dropped = bytes(self._buffer)
        self._buffer.clear()
        return Garbage(dropped, reason)

    def next_event(self) -> Any:
        """The next frame's event, a :class:`Garbage` report, or :data:`NEED_DATA`."""
        buffer = self._buffer
        if not buffer:
            return NEED_DATA
        used, event = self._decode(buffer)
        if used == 0:
            if len(buffer) > self.max_buffer:
                dropped = bytes(buffer)
                buffer.clear()
                return Garbage(dropped, f"no complete frame in {len(dropped)} bytes")
            return NEED_DATA
        del buffer[:used]
        return event

    def events(self) -> list[Any]:
        """Every event the buffer holds now (frames and garbage reports)."""
        out = []
        while (event := self.next_event()) is not NEED_DATA:
            out.append(event)
        return out

    @abstractmethod
    def _decode(self, buffer: bytearray) -> tuple[int, Any]:
        """``(used, event)``: ``used == 0`` means "need more bytes"; else drop ``used`` bytes."""


def skip_to(buffer: bytearray | bytes, marker: int, reason: str, start: int = 1) -> tuple[int, Garbage]:
    """Garbage up to the next ``marker`` byte at or after ``start`` (or the whole buffer)."""
    at = buffer.find(marker, start)
    used = len(buffer) if at < 0 else at
    return used, Garbage(bytes(buffer[:used]), reason)
