"""What the SAS responder reads of the terminal: a small read-only view, and the view a ledger gives.

The responder (:mod:`firmware.sas.responder`) sees the terminal only through :class:`TerminalView`:
its meters (critical memory's, in cents and counts), its identity, the last bill it accepted,
the exception queue and its clock. :class:`LedgerView` is that view over a :class:`Ledger`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from firmware.ledger.ledger import Ledger
from firmware.sas.clock import host_time
from firmware.sas.exceptions import ExceptionQueue

#: SAS denomination codes (0x1F's accounting denomination), by cents; SAS 6.02 table C-4 as
#: recalled (docs/protocols/sas.md): check against the standard.
DENOMINATION_CODES: dict[int, int] = {
    1: 0x01, 5: 0x02, 10: 0x03, 25: 0x04, 50: 0x05, 100: 0x06, 500: 0x07, 1000: 0x08, 2000: 0x09,
    10000: 0x0A, 20: 0x0B, 200: 0x0C, 250: 0x0D,
}

#: SAS bill denomination codes (0x48), by cents; recalled like the table above.
BILL_CODES: dict[int, int] = {
    100: 0x00, 500: 0x01, 1000: 0x02, 2000: 0x03, 5000: 0x04, 10000: 0x05, 50000: 0x06,
    100000: 0x07, 20000: 0x08,
}


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the machine is to a SAS host (0x1F, 0x54, 0x48)."""

    game_id: str                 #: 2 ASCII characters
    additional_id: str           #: 3 ASCII characters
    paytable_id: str             #: 6 ASCII characters
    base_percent: str            #: 4 ASCII digits, "9650" for 96.50 %
    max_bet: int                 #: credits
    serial: str                  #: up to 40 ASCII characters
    accounting_denom_cents: int
    country_code: int = 0        #: the 0x48 country code of the bills the validator takes


class TerminalView(Protocol):
    """The terminal as the responder reads it."""

    @property
    def identity(self) -> Identity: ...

    @property
    def meters(self) -> Mapping[str, int]: ...

    @property
    def exceptions(self) -> ExceptionQueue: ...

    def last_bill_cents(self) -> int | None:
        """The denomination of the last note stacked, None if none ever was."""
        ...

    def now(self) -> dt.datetime: ...


class LedgerView:
    """:class:`TerminalView` over a ledger (the queue is opened on it)."""

    def __init__(self, ledger: Ledger, identity: Identity, *,
                 clock: Callable[[], dt.datetime] = dt.datetime.now) -> None:
        self._ledger = ledger
        self.identity = identity
        self.exceptions = ExceptionQueue(ledger)
        self._clock = clock

    @property
    def meters(self) -> Mapping[str, int]:
        return self._ledger.meters

    def last_bill_cents(self) -> int | None:
        newest = self._ledger.newest_of(["bill"], 1)
        if not newest:
            return None
        denom: int = self._ledger.log_record(newest[0])["body"]["denom_cents"]
        return denom

    def now(self) -> dt.datetime:
        """The host's time: the clock moved by the host's last 0x7F (``firmware.sas.clock``)."""
        return host_time(self._ledger, self._clock)
