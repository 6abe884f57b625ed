"""The control long polls: play, sound, bill acceptor, real-time event reporting, handpay.

- 0x01 shutdown (lock out play) / 0x02 startup: SAS 6.02 section 7.4.1: a round in progress
  completes first; cashing out stays possible. ACK.
- 0x03 sound off, 0x04 sound on, 0x05 game play sounds off. ACK.
- 0x06 enable / 0x07 disable the bill acceptor. ACK.
- 0x0E real-time event reporting: one data byte, 00 off, 01 on (ACK); any other value is NACKed.
- 0x1B handpay information: the handpay lockup pending now, all zero when there is none (SAS's
  "legacy handpay reporting", section 7.8.2: exceptions 51/52 are queued when the lockup starts
  and ends).
- 0x94 remote handpay reset: reset code 00 reset, 01 unable, 02 not in a handpay (section 7.9).

The poll set acts on the terminal only through :class:`Controls`, which the cabinet implements
(``firmware/cabinet/sas_control.py``): this layer may not import the cabinet. Each call runs on the
terminal's thread and is in critical memory before it returns (the ACK follows it).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from drivers.sas.game_info import LEVEL_CANCELLED_CREDITS, HandpayInfo, RealTimeEvents
from drivers.sas.messages import Status
from firmware.sas.responder import Handler, PollRefused


class Sound(enum.Enum):
    """What the host asked of the machine's sounds (0x03, 0x04, 0x05)."""

    OFF = "off"                 #: 0x03: every sound off
    ON = "on"                   #: 0x04: every sound on
    GAME_OFF = "game_off"       #: 0x05: game play sounds off, the others (alarms) on


class HandpayReset(enum.IntEnum):
    """0x94's reply codes."""

    RESET = 0x00
    UNABLE = 0x01
    NOT_IN_HANDPAY = 0x02


@dataclass(frozen=True, slots=True)
class Handpay:
    """The handpay lockup pending: its amount in credits of the accounting denomination."""

    credits: int


class Controls(Protocol):
    """The terminal as the control polls drive it."""

    def lock_out_play(self, locked: bool) -> None:
        """Lock play out (at the end of the round in progress) or lift this lock."""
        ...

    def bill_acceptor(self, enabled: bool) -> None: ...

    def sound(self, sound: Sound) -> None: ...

    def real_time_events(self, enabled: bool) -> None: ...

    def handpay(self) -> Handpay | None:
        """The handpay lockup pending now, or None."""
        ...

    def reset_handpay(self) -> bool:
        """Pay the pending handpay as the attendant's key would; False if none is pending."""
        ...


class ControlPolls:
    """Long polls 0x01-0x07, 0x0E, 0x1B and 0x94 over ``controls``."""

    def __init__(self, controls: Controls) -> None:
        self.controls = controls

    def handlers(self) -> Mapping[int, Handler]:
        c = self.controls
        return {
            0x01: _acked(partial(c.lock_out_play, True)),
            0x02: _acked(partial(c.lock_out_play, False)),
            0x03: _acked(partial(c.sound, Sound.OFF)),
            0x04: _acked(partial(c.sound, Sound.ON)),
            0x05: _acked(partial(c.sound, Sound.GAME_OFF)),
            0x06: _acked(partial(c.bill_acceptor, True)),
            0x07: _acked(partial(c.bill_acceptor, False)),
            0x0E: self._real_time_events,
            0x1B: self._handpay_information,
            0x94: self._handpay_reset,
        }

    def _real_time_events(self, data: bytes) -> bytes:
        request = RealTimeEvents.decode(data)
        if request.enabled not in (0, 1):
            raise PollRefused(f"real-time event reporting is 00 or 01, not {request.enabled:02X}")
        self.controls.real_time_events(bool(request.enabled))
        return b""

    def _handpay_information(self, _data: bytes) -> bytes:
        pending = self.controls.handpay()
        if pending is None:
            return HandpayInfo(0, 0, 0, 0, 0).encode()
        return HandpayInfo(0, LEVEL_CANCELLED_CREDITS, pending.credits, 0, 0).encode()

    def _handpay_reset(self, _data: bytes) -> bytes:
        if self.controls.handpay() is None:
            code = HandpayReset.NOT_IN_HANDPAY
        else:
            code = HandpayReset.RESET if self.controls.reset_handpay() else HandpayReset.UNABLE
        return Status(code).encode()


def _acked(action: Callable[[], None]) -> Handler:
    """The handler of a poll without data answered by ACK: ``action``, then the ACK (the responder
    sends the address byte for any bytes returned)."""

    def handle(_data: bytes) -> bytes:
        action()
        return b""

    return handle
