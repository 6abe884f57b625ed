"""What the answer-only simulators (ID-003 and SSP validators, TCL printer) share of their control API.

:class:`AnsweringDevice`: the serve loop (:func:`~sim_hardware.pty_link.serve_replies` on a byte
port), the cable (:meth:`~AnsweringDevice.unplug`) and repeated replies. :class:`OneShotReplyFaults`
adds the one-shot wire faults of the validators, each armed for the reply to one host command (or
to any): a corrupted CRC, a dropped reply, a lost host command.

A simulator calls ``super().__init__()`` before its own state (it sets the lock ``_lock`` and the
fault flags), names itself in :attr:`~AnsweringDevice.WHO` and implements ``feed(bytes)``.
"""

from __future__ import annotations

import logging
import threading
from abc import ABC, abstractmethod
from typing import ClassVar

from sim_hardware.pty_link import BytePort, serve_replies


class AnsweringDevice(ABC):
    """A simulator that only answers the host: serve loop, unplug, repeated replies."""

    #: The simulator in log lines ("id003 sim").
    WHO: ClassVar[str]

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._repeat = False
        self._unplug = False
        self.unplugged = False

    @abstractmethod
    def feed(self, data: bytes) -> list[bytes]:
        """Receive ``data`` from the host; every reply to write, in order."""

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


class OneShotReplyFaults(AnsweringDevice):
    """An answering simulator whose one-shot wire faults aim at the reply to one host command."""

    def __init__(self) -> None:
        super().__init__()
        #: One-shot wire faults by kind -> the host code whose reply they hit (None: any).
        self._next: dict[str, int | None] = {}
        #: How many more times an armed fault strikes after this one (1 unless armed for more).
        self._times: dict[str, int] = {}

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


__all__ = ["AnsweringDevice", "OneShotReplyFaults"]
