"""Long poll 0x7F, receive date and time: the host's clock, kept as an offset from the terminal's.

The terminal's system clock is never changed (other programs, the logs and the TLS of the host
link rely on it). The host's time is recorded as its difference from the terminal's clock, in
critical memory (setting :data:`SETTING`, with a ``sas.clock_set`` event in the same write), and
:func:`host_time` (0x7E, through :class:`~firmware.sas.view.LedgerView`) adds it to the
terminal's clock, so 0x7E answers the host's time, also after a power cut. 0x7F is also sent as a
global broadcast (address 0, SAS 6.02 section 7.17): the responder applies it without replying.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from drivers.sas.messages import DateTime
from firmware.ledger.ledger import Ledger

if TYPE_CHECKING:                      # the responder imports the view, which imports this module
    from firmware.sas.responder import Handler

#: ``{"offset_ms": host time - terminal time}``.
SETTING = "sas.clock"


def host_time(ledger: Ledger, wall: Callable[[], dt.datetime]) -> dt.datetime:
    """The terminal's clock ``wall()`` moved by the host's last 0x7F (unchanged before any)."""
    saved = ledger.setting(SETTING)
    offset = dt.timedelta(milliseconds=saved["offset_ms"]) if saved else dt.timedelta(0)
    return wall() + offset


class ClockPoll:
    """Long poll 0x7F: record the host's time offset against ``wall`` in ``ledger``."""

    def __init__(self, ledger: Ledger, wall: Callable[[], dt.datetime] = dt.datetime.now) -> None:
        self.ledger = ledger
        self.wall = wall

    def handlers(self) -> Mapping[int, Handler]:
        return {0x7F: self._receive}

    def _receive(self, data: bytes) -> bytes:
        when = DateTime.decode(data).when
        offset_ms = round((when - self.wall()).total_seconds() * 1000)
        with self.ledger.batch():
            self.ledger.store_setting(SETTING, {"offset_ms": offset_ms})
            self.ledger.event("sas.clock_set", time=when.isoformat(), offset_ms=offset_ms)
        return b""
