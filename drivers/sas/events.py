"""Real-time event reporting (RTE): the events a gaming machine sends instead of exception bytes.

While the host has real-time event reporting on (long poll 0x0E with 01), the machine answers a
general poll with an event response instead of the one exception byte::

    address, 0xFF, event code, event data..., CRC_L CRC_H

The event code is the exception code (``drivers.sas.exceptions``); a few events carry data, whose
length the code gives (:data:`EVENT_BODIES`), the others none. A bill accepted is always event 0x4F
with its data (the per-denomination codes 0x47-0x50 are the exceptions of reporting off). Layouts
from the Aristocrat Monaco platform's SAS client (public on GitHub, tejvirc/Platform:
``Aristocrat.Monaco.Sas/Exceptions/*ExceptionBuilder.cs`` and ``Aristocrat.Sas.Client/SasClient.cs``
``HandleGeneralPoll``); docs/protocols/sas.md, "Real-time event reporting".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Final

from drivers.sas.exceptions import ExceptionCode as X
from drivers.sas.layout import Body, Field

#: The "command" byte of an event response.
EVENT_RESPONSE: Final = 0xFF


@dataclass(frozen=True, slots=True)
class BillAcceptedEvent(Body):
    """0x4F: the note's country code and SAS bill denomination code (BCD), and how many notes of
    that denomination the machine has accepted in its life, this one included (BCD, 4 bytes)."""

    country_code: int
    denomination_code: int
    count: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 1), ("bcd", 1), ("bcd", 4))


@dataclass(frozen=True, slots=True)
class GameStartedEvent(Body):
    """0x7E: credits wagered (credits of the game's denomination, BCD 2), the total coin in meter
    after the wager (accounting credits, BCD 4), the wager type (bit 7: maximum bet, bit 6:
    multi-denomination, bits 0-5: the SAS denomination code) and the progressive group."""

    credits_wagered: int
    coin_in: int
    wager_type: int
    progressive_group: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 2), ("bcd", 4), ("bin", 1), ("bin", 1))


@dataclass(frozen=True, slots=True)
class GameEndedEvent(Body):
    """0x7F: what the game won, in accounting credits (BCD 4)."""

    win: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 4),)


@dataclass(frozen=True, slots=True)
class GameSelectedEvent(Body):
    """0x8C: the SAS number of the game selected (BCD 2)."""

    game_number: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 2),)


#: The events that carry data, by event code; every other event is its code alone.
EVENT_BODIES: dict[int, type[Body]] = {
    X.BILL_ACCEPTED: BillAcceptedEvent,
    X.GAME_STARTED: GameStartedEvent,
    X.GAME_ENDED: GameEndedEvent,
    X.GAME_SELECTED: GameSelectedEvent,
}

#: Bit 7 of :attr:`GameStartedEvent.wager_type`: the wager is the game's maximum bet.
WAGER_MAX_BET: Final = 0x80


def _layout_length(layout: tuple[Field, ...]) -> int:
    return sum(size for _kind, size in layout)


#: The data bytes each event with data carries.
EVENT_DATA_LENGTHS: dict[int, int] = {code: _layout_length(body.layout) for code, body in EVENT_BODIES.items()}


def data_length(code: int) -> int:
    """How many data bytes follow event ``code`` in an event response (0: none)."""
    return EVENT_DATA_LENGTHS.get(code, 0)


def parse_event(code: int, data: bytes) -> Body | None:
    """The typed data of event ``code`` (None for an event without data); ValueError if ``data``
    is not that event's."""
    body = EVENT_BODIES.get(code)
    if body is None:
        if data:
            raise ValueError(f"event 0x{code:02X} carries no data, not {len(data)} bytes")
        return None
    return body.decode(data)


__all__ = [
    "EVENT_BODIES", "EVENT_DATA_LENGTHS", "EVENT_RESPONSE", "WAGER_MAX_BET", "BillAcceptedEvent",
    "GameEndedEvent", "GameSelectedEvent", "GameStartedEvent", "data_length", "parse_event",
]
