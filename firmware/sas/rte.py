"""Real-time event reporting (RTE) on the machine: whether the host has it on, and each event's data.

While the host has RTE on (0x0E 01, kept in critical memory as the setting :data:`SETTING`), the
responder answers a general poll with the event of the exception queue's head (address, 0xFF,
event, CRC: ``drivers/sas/events.py``). An event is its exception code, or for the events with
data the code and data read from the ledger record that raised it (:func:`event_of`), with the
meters as they stood right after that record (:class:`EventMeters`):

- a note stacked (``bill``): event 0x4F, whatever the note (the per-denomination codes 0x47-0x50
  are the exceptions of reporting off), with the country code, the note's bill code and how many
  notes of its denomination the machine has stacked, this one included;
- a round dealt (``round.deal``): 0x7E, the credits wagered (of the game's denomination), the total
  coin in meter after the wager (accounting credits), the wager type (maximum bet flag and the
  game denomination's code) and progressive group 0 (no progressives here);
- a round completed (``round.complete``): 0x7F, what the round paid (the coin out it moved, as
  the coin out meter counts it), in accounting credits;
- a game selected (``game_selected``): 0x8C, the game's SAS number (``firmware/sas/game_meters.py``).

The queue keeps each event with its exception (``firmware/sas/exceptions.py``), so what the host
reads does not move when the meters move on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from drivers.sas.bcd import rollover
from drivers.sas.events import (
    WAGER_MAX_BET,
    BillAcceptedEvent,
    GameEndedEvent,
    GameSelectedEvent,
    GameStartedEvent,
    data_length,
)
from drivers.sas.exceptions import BILL_ACCEPTED_BY_DOLLARS
from drivers.sas.exceptions import ExceptionCode as X
from firmware.ledger import meters as M
from firmware.ledger.ledger import Ledger
from firmware.sas.codes import DENOMINATION_CODES, bill_code
from firmware.sas.game_meters import game_ids

#: The setting that holds the host's choice in critical memory (``{"enabled": bool}``).
SETTING = "sas.real_time_events"

#: The records that move the meters events carry.
MOVING_KINDS = frozenset({"bill", "round.deal", "round.complete"})

#: The exceptions of a note accepted, reported as event 0x4F while RTE is on.
BILL_EXCEPTIONS = frozenset({X.BILL_ACCEPTED, *BILL_ACCEPTED_BY_DOLLARS.values()})


def enabled(ledger: Ledger) -> bool:
    """Whether the host has real-time event reporting on."""
    return bool((ledger.setting(SETTING) or {}).get("enabled", False))


@dataclass(frozen=True, slots=True)
class EventContext:
    """What the events' data needs besides the records: the accounting denomination of the
    meters, the country code of the notes, and the maximum bet (accounting credits; 0: never
    flagged)."""

    accounting_denom_cents: int
    country_code: int = 0
    max_bet: int = 0


def _carried(name: str) -> bool:
    return name == "coin_in" or name.startswith("bills_in_by_denom.")


class EventMeters:
    """The meters events carry (coin in, notes per denomination), as they stood right after the
    last record read: started from critical memory's meters and :meth:`rewind` over the records
    not read yet, then moved forward record by record (:meth:`advance`)."""

    def __init__(self, meters: Mapping[str, int]) -> None:
        self._values = {name: value for name, value in meters.items() if _carried(name)}

    def _move(self, kind: str, body: Mapping[str, Any], sign: int) -> None:
        if kind not in MOVING_KINDS:
            return
        for name, value in M.deltas(kind, body).items():
            if _carried(name):
                self._values[name] = self._values.get(name, 0) + sign * value

    def advance(self, kind: str, body: Mapping[str, Any]) -> None:
        self._move(kind, body, 1)

    def rewind(self, kind: str, body: Mapping[str, Any]) -> None:
        self._move(kind, body, -1)

    def get(self, name: str) -> int:
        return self._values.get(name, 0)


def event_of(code: int, kind: str, body: Mapping[str, Any], meters: EventMeters, context: EventContext) -> bytes:
    """The event (code, then data) of exception ``code``, raised by the record (``kind``,
    ``body``), with ``meters`` as they stood right after it."""
    acct = context.accounting_denom_cents
    if kind == "bill" and code in BILL_EXCEPTIONS:
        cents = body["denom_cents"]
        data = BillAcceptedEvent(context.country_code, bill_code(cents),
                                 rollover(meters.get(f"bills_in_by_denom.{cents}"), 4)).encode()
        return bytes((X.BILL_ACCEPTED,)) + data
    if kind == "round.deal" and code == X.GAME_STARTED:
        denom = body["denom_cents"]
        stake = M.deltas(kind, body).get("coin_in", 0)
        max_bet = WAGER_MAX_BET if context.max_bet and stake // acct >= context.max_bet else 0
        data = GameStartedEvent(rollover(stake // denom, 2), rollover(meters.get("coin_in") // acct, 4),
                                max_bet | DENOMINATION_CODES.get(denom, 0), 0).encode()
        return bytes((code,)) + data
    if kind == "round.complete" and code == X.GAME_ENDED:
        won = M.deltas(kind, body).get("coin_out", 0)
        return bytes((code,)) + GameEndedEvent(rollover(won // acct, 4)).encode()
    if kind == "event" and code == X.GAME_SELECTED:
        games = game_ids()
        number = games.index(body["game"]) + 1 if body.get("game") in games else 0
        return bytes((code,)) + GameSelectedEvent(number).encode()
    return bytes((code,))


def without_record(code: int) -> bytes:
    """The event of an exception queued before events were kept (an older ``sas.exceptions``
    setting): its record's figures are not known, so the data reads zero (a note: event 0x4F)."""
    if code in BILL_EXCEPTIONS:
        code = X.BILL_ACCEPTED
    return bytes((code,)) + bytes(data_length(code))
