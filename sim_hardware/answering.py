"""What the answer-only simulators (ID-003 and SSP validators, TCL printer, MicroTouch screen)
share of their control API.

:class:`AnsweringDevice`: the serve loop (:func:`~sim_hardware.pty_link.serve_replies` on a byte
port), the events the host's bytes complete, the cable (:meth:`~AnsweringDevice.unplug`) and
repeated replies. :class:`PoweredDevice` adds the power switch (:meth:`~PoweredDevice.power_off`,
:meth:`~PoweredDevice.power_on`). :class:`OneShotReplyFaults` adds the one-shot wire faults of
the validators, each armed for the reply to one host command (or to any): a corrupted CRC, a
dropped reply, a lost host command.

A simulator calls ``super().__init__()`` before its own state (it sets the lock ``_lock`` and the
fault flags), names itself in :attr:`~AnsweringDevice.WHO`, sets its device-side codec ``_codec``
(whose events :meth:`~AnsweringDevice._received` yields) and implements ``feed(bytes)``; a
:class:`PoweredDevice` also implements the power steps ``_power_off()`` and ``_power_on()``.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from drivers.codec import NEED_DATA
from sim_hardware.pty_link import BytePort, serve_replies


class AnsweringDevice(ABC):
    """A simulator that only answers the host: serve loop, unplug, repeated replies."""

    #: The simulator in log lines ("id003 sim").
    WHO: ClassVar[str]
    #: The device side of the wire protocol (a :class:`~drivers.codec.StreamDecoder`).
    _codec: Any

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._repeat = False
        self._unplug = False
        self.unplugged = False

    @abstractmethod
    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; every reply to write, in order."""

    def _received(self, data: bytes) -> Iterator[Any]:
        """Take ``data`` from the host; then each event it completes (a frame, or a
        :class:`~drivers.codec.Garbage` report), in order."""
        self._codec.receive_data(data)
        while (event := self._codec.next_event()) is not NEED_DATA:
            yield event


    def serve(self, port: BytePort, stop: threading.Event) -> None:
        """Answer the host on ``port`` until ``stop`` is set, the port fails, or :meth:`unplug`."""
        serve_replies(port, stop, self.feed, unplug=lambda: self._unplug,
                      on_unplug=self._unplugged, who=self.WHO,
                      logger=logging.getLogger(type(self).__module__))

    def _unplugged(self) -> None:
        self.unplugged = True

    def _copies(self, data: bytes) -> list[bytes]:
        """``data`` as the wire carries it: once, or twice while replies are repeated."""
        return [data, data] if self._repeat else [data]

    def repeat_replies(self, on: bool = True) -> None:
        """Every reply goes out twice."""
        with self._lock:
            self._repeat = on

    def unplug(self) -> None:
        """Pull the cable: the serve loop closes its port (the driver's reads and writes fail)."""
        with self._lock:
            self._unplug = True


class PoweredDevice(AnsweringDevice):
    """An answering simulator with a power switch (the validators, the printer)."""

    @abstractmethod
    def _power_off(self) -> None:
        """Lose power, the lock held (nothing when already off)."""

    @abstractmethod
    def _power_on(self) -> None:
        """Power up, the lock held (nothing when already on)."""

    def power_off(self) -> None:
        """Power is cut: the unit is silent until :meth:`power_on`."""
        with self._lock:
            self._power_off()

    def power_on(self) -> None:
        with self._lock:
            self._power_on()


class OneShotReplyFaults(PoweredDevice):
    """An answering simulator whose one-shot wire faults aim at the reply to one host command.

    It answers the host's events one by one (:meth:`_reply_to`) while it is powered; an answer that
    leaves it off (an SSP RESET) ends the feed, and the unit powers up again (:meth:`_power_on`).
    """

    def __init__(self) -> None:
        super().__init__()
        #: One-shot wire faults by kind -> the host code whose reply they hit (None: any).
        self._next: dict[str, int | None] = {}
        #: How many more times an armed fault strikes after this one (1 unless armed for more).
        self._times: dict[str, int] = {}

    @abstractmethod
    def _powered(self) -> bool:
        """Whether the unit has power (it answers nothing without)."""

    @abstractmethod
    def _reply_to(self, event: Any) -> list[bytes]:
        """The writes answering one event from the host (a frame or a Garbage report)."""

    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; the writes to make, in order (usually one reply)."""
        with self._lock:
            if self._unplug or not self._powered():
                return []
            out: list[bytes] = []
            for event in self._received(data):
                out += self._reply_to(event)
                if not self._powered():         # it restarts after its reply
                    self._power_on()
                    break
            return out

    def _arm(self, kind: str, code: int | None, times: int = 1) -> None:
        if times < 1:
            raise ValueError(f"a wire fault strikes at least once, not {times} times")
        self._next[kind] = code
        self._times[kind] = times

    def _take(self, kind: str, code: int | None) -> bool:
        """Use up one strike of the wire fault ``kind`` if it is armed for host code ``code``."""
        if kind not in self._next:
            return False
        target = self._next[kind]
        if target is not None and target != code:
            return False
        left = self._times.pop(kind, 1) - 1
        if left:
            self._times[kind] = left
        else:
            del self._next[kind]
        return True

    def _disturb(self, data: bytes, request: int | None) -> bytes | None:
        """The reply ``data`` (to host code ``request``) after an armed corruption (a wrong CRC)
        or drop (None)."""
        if self._take("corrupt", request):
            data = data[:-1] + bytes((data[-1] ^ 0x5A,))
        if self._take("drop", request):
            return None
        return data

    def corrupt_next_crc(self, to: int | None = None) -> None:
        """The next reply (to host code ``to``, if given) goes out with a wrong CRC."""
        with self._lock:
            self._arm("corrupt", to)

    def drop_next_reply(self, to: int | None = None, *, times: int = 1) -> None:
        """The next reply (to ``to``, if given) is lost, and the next ``times - 1`` such replies
        (resent ones included); the command itself still takes effect."""
        with self._lock:
            self._arm("drop", to, times)

    def lose_next_command(self, code: int | None = None, *, times: int = 1) -> None:
        """The next host command (with ``code``, if given) never arrives, nor the next
        ``times - 1`` such commands (repeats included): no effect, no reply."""
        with self._lock:
            self._arm("lose", code, times)


__all__ = ["AnsweringDevice", "OneShotReplyFaults", "PoweredDevice"]
