"""Typed bodies of the identity, control, handpay and game information polls (0x0E, 0x1B, 0x1F,
0x51-0x56, 0xA0, 0xB5); ``drivers.sas.messages`` lists them with the others. Layouts and their sources are in
docs/protocols/sas.md ("Long polls")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Self

from drivers.sas.bcd import from_bcd, to_bcd
from drivers.sas.layout import Body, Field

#: 0x1B level of a handpay that pays the credit meter out (not a win): "cancelled credits".
LEVEL_CANCELLED_CREDITS = 0x80


@dataclass(frozen=True, slots=True)
class MachineInfo(Body):
    """0x1F reply: game and pay table identity, denomination code, max bet, base percentage."""

    game_id: str
    additional_id: str
    denomination: int
    max_bet: int
    progressive_group: int
    game_options: int
    paytable_id: str
    base_percent: str      #: four ASCII digits, e.g. "9500" for 95.00 %
    layout: ClassVar[tuple[Field, ...]] = (("ascii", 2), ("ascii", 3), ("bin", 1), ("bin", 1),
                                           ("bin", 1), ("bin", 2), ("ascii", 6), ("ascii", 4))


@dataclass(frozen=True, slots=True)
class RealTimeEvents(Body):
    """0x0E request: real-time event reporting off (0) or on (1)."""

    enabled: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1),)


@dataclass(frozen=True, slots=True)
class HandpayInfo(Body):
    """0x1B reply: progressive group, level, amount (accounting credits), partial pay, reset ID and
    ten unused bytes; all zero when no handpay is pending (legacy handpay reporting)."""

    progressive_group: int
    level: int
    amount: int
    partial_pay: int
    reset_id: int
    unused: bytes = bytes(10)
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bin", 1), ("bcd", 5), ("bcd", 2), ("bin", 1),
                                           ("raw", 10))


@dataclass(frozen=True, slots=True)
class GameNumber(Body):
    """A game number, two BCD bytes: 0x51 and 0x55 replies, 0x53 / 0xA0 / 0xB5 requests."""

    game: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 2),)


@dataclass(frozen=True, slots=True)
class GameConfiguration:
    """0x53 reply: the game number, then the fields of 0x1F for that game."""

    game: int
    info: MachineInfo

    def encode(self) -> bytes:
        return to_bcd(self.game, 2) + self.info.encode()

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) != 22:
            raise ValueError(f"game configuration of {len(data)} bytes")
        return cls(from_bcd(data[:2]), MachineInfo.decode(data[2:]))


@dataclass(frozen=True, slots=True)
class EnabledGames:
    """0x56 reply (after its length byte): how many games are enabled, then their numbers."""

    games: tuple[int, ...]

    def encode(self) -> bytes:
        return bytes((len(self.games),)) + b"".join(to_bcd(game, 2) for game in self.games)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if not data or len(data) != 1 + 2 * data[0]:
            raise ValueError(f"enabled games of {len(data)} bytes")
        return cls(tuple(from_bcd(data[at : at + 2]) for at in range(1, len(data), 2)))


@dataclass(frozen=True, slots=True)
class EnabledFeatures(Body):
    """0xA0 reply: the game number, four bytes of feature flags and two reserved BCD bytes."""

    game: int
    features1: int
    features2: int
    features3: int
    features4: int
    reserved: int = 0
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 2), ("bin", 1), ("bin", 1), ("bin", 1), ("bin", 1),
                                           ("bcd", 2))


@dataclass(frozen=True, slots=True)
class GameInformation(Body):
    """0xB5 reply (after its length byte): game number, max bet (2 BCD), progressive group and
    levels, game name and pay table name (a length byte each, at most 20 characters) and the number
    of wager categories."""

    game: int
    max_bet: int
    progressive_group: int
    progressive_levels: int
    game_name: str
    paytable_name: str
    wager_categories: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 2), ("bcd", 2), ("bin", 1), ("bin", 4), ("lascii", 0),
                                           ("lascii", 0), ("bcd", 2))

    def encode(self) -> bytes:
        if len(self.game_name) > 20 or len(self.paytable_name) > 20:
            raise ValueError("a game or pay table name is at most 20 characters")
        return Body.encode(self)
