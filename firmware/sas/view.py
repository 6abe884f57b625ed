"""What the SAS responder reads of the terminal: a small read-only view, and the view a ledger gives.

The responder (:mod:`firmware.sas.responder`) sees the terminal only through :class:`TerminalView`:
its meters (critical memory's, in cents and counts), its identity, the last bill it accepted,
the exception queue, whether real-time event reporting is on, and its clock. :class:`LedgerView` is that view over a :class:`Ledger`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from firmware.ledger.ledger import Ledger
from firmware.sas import rte
from firmware.sas.clock import host_time
from firmware.sas.exceptions import ExceptionQueue


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

    @property
    def real_time_events(self) -> bool:
        """Whether the host has real-time event reporting on (0x0E)."""
        ...

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
        self.exceptions = ExceptionQueue(ledger, context=rte.EventContext(
            identity.accounting_denom_cents, identity.country_code, identity.max_bet))
        self._clock = clock

    @property
    def real_time_events(self) -> bool:
        return rte.enabled(self._ledger)

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
