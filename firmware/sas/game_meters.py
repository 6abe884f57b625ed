"""The meters SAS reads for one game (0x2F, 0x6F and 0xAF with a game number above 0).

SAS numbers the games 1..N in the order of the firmware's game registry (every game implemented,
enabled or not: :func:`game_ids`; the same numbers as the game information polls, docs/protocols/
sas.md "Game numbers"). Critical memory keeps per game (``firmware/ledger/meters.py``) coin in and
coin out (``coin_in.GAME``, ``coin_out.GAME``, cents) and games played, won and lost
(``games_played.GAME``...); :data:`GAME_METERS` maps the SAS meter codes to them. The machine's
jackpot meter is never moved (a handpay here pays the credit meter out: cancelled credits), so a
game's jackpot reads 0 as the machine's does. Other meter codes (bills, tickets, credits) belong to
the machine, not a game, and are left out of a game's reply.
"""

from __future__ import annotations

from collections.abc import Mapping

from firmware.games.registry import available
from firmware.sas.meters import Unit

#: SAS meter code -> (the per-game ledger meter's prefix, unit).
GAME_METERS: dict[int, tuple[str, Unit]] = {
    0x00: ("coin_in", Unit.CREDITS),
    0x01: ("coin_out", Unit.CREDITS),
    0x02: ("jackpot", Unit.CREDITS),
    0x05: ("games_played", Unit.COUNT),
    0x06: ("games_won", Unit.COUNT),
    0x07: ("games_lost", Unit.COUNT),
}


def game_ids() -> list[str]:
    """Our game ids in SAS game number order: game N is ``game_ids()[N - 1]``."""
    return available()


def game_id_of(number: int) -> str | None:
    """The game SAS numbers ``number`` (1..N), None for any other number."""
    games = game_ids()
    return games[number - 1] if 1 <= number <= len(games) else None


def game_meter(code: int, meters: Mapping[str, int], game_id: str, accounting_denom_cents: int) -> int:
    """Meter ``code`` of ``game_id`` (a code of :data:`GAME_METERS`)."""
    prefix, unit = GAME_METERS[code]
    value = meters.get(f"{prefix}.{game_id}", 0)
    return value // accounting_denom_cents if unit is Unit.CREDITS else value
