"""The SAS long polls this terminal knows: one table for both roles (pymodbus-style).

Each entry gives the poll's type and lengths, which is all the framing needs:

- type R: the host sends address and command only, no CRC;
- type S: address, command, a fixed number of data bytes (``request``), CRC;
- type M: address, command, a length byte, that many data bytes, CRC.

The reply is an ACK (the address byte alone; NACK is the address with bit 7 set), a fixed number
of data bytes between command and CRC (``reply``), or a length byte and that many bytes
(``reply is None``). ``source`` names where the layout comes from (keys explained in
``docs/protocols/sas.md``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class PollType(enum.Enum):
    R = "R"
    S = "S"
    M = "M"


class ReplyKind(enum.Enum):
    ACK = "ack"
    FIXED = "fixed"
    VARIABLE = "variable"


@dataclass(frozen=True, slots=True)
class LongPollSpec:
    code: int
    name: str
    type: PollType
    #: data bytes of an S poll (0 for R; None for M, whose length byte says).
    request: int | None
    reply_kind: ReplyKind
    #: data bytes of a FIXED reply.
    reply: int = 0
    source: str = "spec-recall"


R, S, M = PollType.R, PollType.S, PollType.M
ACK, FIXED, VARIABLE = ReplyKind.ACK, ReplyKind.FIXED, ReplyKind.VARIABLE


def _r(code: int, name: str, reply: int | None, source: str = "saspy") -> LongPollSpec:
    kind = VARIABLE if reply is None else FIXED
    return LongPollSpec(code, name, R, 0, kind, reply or 0, source)


def _s(code: int, name: str, request: int, reply: int | None | ReplyKind,
       source: str = "spec-recall") -> LongPollSpec:
    if isinstance(reply, ReplyKind):
        return LongPollSpec(code, name, S, request, reply, 0, source)
    kind = VARIABLE if reply is None else FIXED
    return LongPollSpec(code, name, S, request, kind, reply or 0, source)


def _m(code: int, name: str, reply: int | None, source: str = "spec-recall") -> LongPollSpec:
    kind = VARIABLE if reply is None else FIXED
    return LongPollSpec(code, name, M, None, kind, reply or 0, source)


_ENTRIES = (
    _s(0x01, "shutdown (lock out play)", 0, ACK),
    _s(0x02, "startup (enable play)", 0, ACK),
    _s(0x03, "sound off", 0, ACK),
    _s(0x04, "sound on", 0, ACK),
    _s(0x05, "game play sounds off", 0, ACK),
    _s(0x06, "enable bill acceptor", 0, ACK),
    _s(0x07, "disable bill acceptor", 0, ACK),
    _s(0x0E, "enable/disable real-time event reporting", 1, ACK),
    _r(0x0F, "send meters 10 through 15", 24, "spec-recall"),
    _r(0x10, "send total cancelled credits meter", 4, "saspy+egm-emulator"),
    _r(0x11, "send total coin in meter", 4),
    _r(0x12, "send total coin out meter", 4),
    _r(0x13, "send total drop meter", 4),
    _r(0x14, "send total jackpot meter", 4),
    _r(0x15, "send games played meter", 4),
    _r(0x16, "send games won meter", 4),
    _r(0x17, "send games lost meter", 4),
    _r(0x18, "send games since last power up and door closure", 4),
    _r(0x19, "send meters 11 through 15", 20),
    _r(0x1A, "send current credits", 4, "saspy+egm-emulator"),
    _r(0x1B, "send handpay information", 20, "monaco"),
    _r(0x1C, "send meters", 32),
    _r(0x1D, "send cumulative progressive wins", 4, "spec-recall"),
    _r(0x1E, "send bill meters", 24),
    _r(0x1F, "send gaming machine ID and information", 20, "spec-recall"),
    _r(0x20, "send total dollar value of bills meter", 4),
    _s(0x21, "ROM signature verification", 2, 2, "saspy"),
    _m(0x2F, "send selected meters for game N", None),
    _r(0x48, "send last accepted bill information", 6, "saspy"),
    _s(0x4C, "set secure enhanced validation ID", 6, 6, "saspy"),
    _s(0x4D, "send enhanced validation information", 1, 31, "saspy"),
    _r(0x51, "send number of games implemented", 2, "saspy"),
    _s(0x53, "send game N configuration", 2, 22, "saspy+monaco"),
    _r(0x54, "send SAS version ID and serial number", None, "spec-recall"),
    _r(0x55, "send selected game number", 2, "saspy"),
    _r(0x56, "send enabled game numbers", None, "saspy+monaco"),
    _r(0x57, "send pending cashout information", 6, "saspy"),
    _s(0x58, "receive validation number", 9, 1, "saspy"),
    _m(0x6F, "send extended meters for game N", None),
    _r(0x70, "send ticket validation data", None, "saspy"),
    _m(0x71, "redeem ticket", None, "saspy"),
    _m(0x72, "AFT transfer funds", None),
    _s(0x74, "AFT register gaming machine lock and status request", 4, None),
    LongPollSpec(0x75, "set AFT receipt data", M, None, ACK, 0, "monaco"),
    _m(0x7B, "extended validation status", None),
    _m(0x7C, "set extended ticket data", 1),
    _m(0x7D, "set ticket data", 1),
    _r(0x7E, "send current date and time", 7, "spec-recall"),
    _s(0x7F, "receive date and time", 7, ACK),
    _s(0x94, "remote handpay reset", 0, 1, "monaco"),
    _s(0xA0, "send enabled features", 2, 8, "monaco"),
    _m(0xAF, "send extended meters for game N (alternate)", None),
    _s(0xB5, "send game N information", 2, None, "monaco"),
)

#: Every long poll this codec frames, by command code.
LONG_POLLS: dict[int, LongPollSpec] = {entry.code: entry for entry in _ENTRIES}
