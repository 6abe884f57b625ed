"""The game information long polls: 0x51 number of games, 0x53 game N configuration, 0x55 selected
game, 0x56 enabled games, 0xB5 game N information, 0xA0 enabled features.

SAS numbers a multi-game machine's games 1..N without gaps, N being every game *implemented*
(0x51), whether enabled or not (SAS 6.02 section 7.6.3), and the numbers must not change; game 0 is
the machine. :class:`GameCatalog` gives the games in that fixed order (the cabinet's adapter:
the firmware's game registry order, docs/protocols/sas.md "Game numbers"). A game number beyond N
gets no reply (an unsupported game is ignored, as an unsupported poll is: section 4.4).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from drivers.sas.game_info import (
    EnabledFeatures,
    EnabledGames,
    GameConfiguration,
    GameInformation,
    GameNumber,
    MachineInfo,
)
from firmware.sas.codes import DENOMINATION_CODES
from firmware.sas.responder import Handler
from firmware.sas.view import Identity

#: 0x1F / 0x53 carry the max bet in one byte: FF when it is larger (SAS 6.02 section 7.10, as the
#: Aristocrat Monaco client's 0x53 parser documents it).
MAX_BET_BYTE = 0xFF
#: 0xB5 carries it in two BCD bytes.
MAX_BET_BCD = 9999


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One implemented game as SAS sees it."""

    number: int                 #: 1..N, fixed
    game_id: str                #: 2 ASCII characters (0x53's game ID)
    paytable_id: str            #: 6 ASCII characters
    base_percent: str           #: 4 ASCII digits, "9650" for 96.50 %; "0000" when no PAR sheet is known
    max_bet: int                #: credits
    name: str                   #: at most 20 ASCII characters
    paytable_name: str          #: at most 20 ASCII characters
    wager_categories: int       #: the wagers the game offers
    enabled: bool               #: offered to the player now


class GameCatalog(Protocol):
    """The terminal's games as the game information polls read them."""

    def games(self) -> Sequence[GameEntry]:
        """Every implemented game, in game number order (1..N)."""
        ...

    def selected(self) -> int:
        """The number of the game selected now (0: none)."""
        ...


class Validation(enum.Enum):
    """The validation style the site uses (``[sas] validation``)."""

    NONE = "none"
    SECURE_ENHANCED = "secure-enhanced"
    SYSTEM = "system"


@dataclass(frozen=True, slots=True)
class Features:
    """What this machine supports, for 0xA0 (table 7.14c-f as the Aristocrat Monaco client names
    its bits)."""

    validation: Validation = Validation.SECURE_ENHANCED
    ticket_redemption: bool = True
    aft: bool = False
    extended_meters: bool = True
    #: The SAS total drop counts tickets in and total cancelled credits counts tickets out
    #: (``firmware/sas/meters.py``).
    tickets_to_drop_and_cancelled: bool = True

    def bytes(self) -> tuple[int, int, int, int]:
        first = 0
        if self.validation is not Validation.NONE:
            first |= 1 << 4                                             # validation extensions
            first |= 1 << 5 if self.validation is Validation.SYSTEM else 1 << 6
        if self.ticket_redemption:
            first |= 1 << 7
        second = ((1 << 2) * self.tickets_to_drop_and_cancelled | (1 << 3) * self.extended_meters
                  | (1 << 6) * self.aft)
        return first, second, 0, 0


class GamePolls:
    """0x51, 0x53, 0x55, 0x56, 0xA0 and 0xB5 from ``identity`` (game 0), ``catalog`` and ``features``."""

    def __init__(self, identity: Identity, catalog: GameCatalog, features: Features) -> None:
        self.identity = identity
        self.catalog = catalog
        self.features = features

    def handlers(self) -> Mapping[int, Handler]:
        return {0x51: self._count, 0x53: self._configuration, 0x55: self._selected, 0x56: self._enabled,
                0xA0: self._features, 0xB5: self._information}

    def _game(self, data: bytes) -> tuple[int, GameEntry | None] | None:
        """The requested game number and its entry (None for game 0); None if there is no such game."""
        number = GameNumber.decode(data).game
        if number == 0:
            return 0, None
        games = self.catalog.games()
        return (number, games[number - 1]) if number <= len(games) else None

    def _count(self, _data: bytes) -> bytes:
        return GameNumber(len(self.catalog.games())).encode()

    def _selected(self, _data: bytes) -> bytes:
        return GameNumber(self.catalog.selected()).encode()

    def _enabled(self, _data: bytes) -> bytes:
        return EnabledGames(tuple(g.number for g in self.catalog.games() if g.enabled)).encode()

    def _machine_info(self, entry: GameEntry | None) -> MachineInfo:
        ident = self.identity
        denomination = DENOMINATION_CODES.get(ident.accounting_denom_cents, 0)
        if entry is None:
            return MachineInfo(ident.game_id, ident.additional_id, denomination, min(ident.max_bet, MAX_BET_BYTE),
                               0, 0, ident.paytable_id, ident.base_percent)
        return MachineInfo(entry.game_id, f"{entry.number:03d}", denomination, min(entry.max_bet, MAX_BET_BYTE),
                           0, 0, entry.paytable_id, entry.base_percent)

    def _configuration(self, data: bytes) -> bytes | None:
        found = self._game(data)
        if found is None:
            return None
        number, entry = found
        return GameConfiguration(number, self._machine_info(entry)).encode()

    def _information(self, data: bytes) -> bytes | None:
        found = self._game(data)
        if found is None:
            return None
        number, entry = found
        if entry is None:
            return GameInformation(0, min(self.identity.max_bet, MAX_BET_BCD), 0, 0, "", "", 0).encode()
        return GameInformation(number, min(entry.max_bet, MAX_BET_BCD), 0, 0, entry.name[:20], entry.paytable_name[:20],
                               entry.wager_categories).encode()

    def _features(self, data: bytes) -> bytes | None:
        found = self._game(data)
        if found is None:
            return None
        return EnabledFeatures(found[0], *self.features.bytes()).encode()
