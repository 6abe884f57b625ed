"""The card-reading shoe's messages on the product link (``docs/protocols/shoe.md``).

Cards travel as their two-character notation in ASCII (``b"As"``, ``b"Td"``), as the rest of the
product writes them, so a line capture reads like a round record.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from firmware.cards.card import Card, parse_card
from firmware.cards.errors import CardError


class ShoeType(enum.IntEnum):
    # shoe -> host, reliable (sequenced, acknowledged, re-sent)
    CARD = 0x20           #: payload: 2 ASCII chars; the card drawn past the reader
    BURN = 0x21           #: payload: 2 ASCII chars; a card drawn and burned (not dealt)
    MISREAD = 0x22        #: payload: reason byte; a card went past unread
    EMPTY = 0x23          #: no card left
    CUT_CARD = 0x24       #: the cut card came out: this is the last round of the shoe
    DOOR = 0x25           #: payload: 1 open, 0 closed
    LOADED = 0x26         #: a new shoe was loaded; payload: 2-byte card count
    # host -> shoe, reliable
    EXPECT = 0x30         #: payload: how many cards the round will draw next (for the display)


class MisreadReason(enum.IntEnum):
    NO_CARD_FACE = 1
    TWO_CARDS = 2
    UNREADABLE = 3


@dataclass(frozen=True, slots=True)
class ShoeMessage:
    type: ShoeType
    card: Card | None = None
    value: int = 0


def card_payload(card: Card) -> bytes:
    return str(card).encode("ascii")


def decode(type_: int, payload: bytes) -> ShoeMessage:
    """A shoe message from a frame's type and payload; ValueError for a malformed one."""
    try:
        kind = ShoeType(type_)
    except ValueError:
        raise ValueError(f"unknown shoe message type 0x{type_:02X}") from None
    if kind in (ShoeType.CARD, ShoeType.BURN):
        try:
            text = payload.decode("ascii")
            card = parse_card(text) if len(text) == 2 else None
        except (UnicodeDecodeError, CardError):
            card = None
        if card is None:
            raise ValueError(f"{kind.name}: not a card: {payload!r}")
        return ShoeMessage(kind, card=card)
    if kind is ShoeType.MISREAD:
        if len(payload) != 1 or payload[0] not in MisreadReason._value2member_map_:
            raise ValueError(f"MISREAD: bad reason {payload!r}")
        return ShoeMessage(kind, value=payload[0])
    if kind is ShoeType.DOOR:
        if payload not in (b"\x00", b"\x01"):
            raise ValueError(f"DOOR: expected 0 or 1, not {payload!r}")
        return ShoeMessage(kind, value=payload[0])
    if kind in (ShoeType.LOADED, ShoeType.EXPECT):
        if len(payload) != 2:
            raise ValueError(f"{kind.name}: expected a 2-byte count, not {payload!r}")
        return ShoeMessage(kind, value=payload[0] << 8 | payload[1])
    if payload:
        raise ValueError(f"{kind.name} carries no payload, not {payload!r}")
    return ShoeMessage(kind)
