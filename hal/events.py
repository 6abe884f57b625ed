"""Device events: frozen, validated dataclasses that every backend (driver or simulator) emits.

Events carry values in the cabinet's units (cents, screen pixels, cards), never protocol codes; the
driver translates. Each event names the ``device`` it came from (its configured name, e.g.
``"validator"``), so one queue can serve the cabinet.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from firmware.cards.card import Card


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


@dataclass(frozen=True, slots=True)
class DeviceEvent:
    device: str

    def __post_init__(self) -> None:
        _require(bool(self.device), "an event names its device")


# --- lifecycle ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class DeviceOnline(DeviceEvent):
    """The device was opened (at start, or again after it came back)."""


@dataclass(frozen=True, slots=True)
class DeviceOffline(DeviceEvent):
    """The device stopped answering or was unplugged; the cabinet tilts until it is back."""

    reason: str = ""


class FaultKind(enum.StrEnum):
    JAM = "jam"
    CHEAT = "cheat"
    FAILURE = "failure"
    STACKER_FULL = "stacker_full"
    STACKER_OPEN = "stacker_open"
    PAPER_OUT = "paper_out"
    CHASSIS_OPEN = "chassis_open"
    MISREAD = "misread"
    COMMUNICATION = "communication"
    #: The device lost its state (a shoe powered up again): a new shoe; the round is a misdeal.
    STATE_LOST = "state_lost"


@dataclass(frozen=True, slots=True)
class DeviceFault(DeviceEvent):
    """A condition that needs an attendant (the cabinet tilts); ``cleared`` when it goes away."""

    kind: FaultKind = FaultKind.FAILURE
    detail: str = ""
    cleared: bool = False


# --- bill validator -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NoteEscrowed(DeviceEvent):
    """A bank note is held in escrow; the cabinet answers stack or return."""

    value_cents: int = 0

    def __post_init__(self) -> None:
        DeviceEvent.__post_init__(self)
        _require(self.value_cents > 0, f"a note is worth more than 0 cents, not {self.value_cents}")


@dataclass(frozen=True, slots=True)
class TicketEscrowed(DeviceEvent):
    """A voucher is held in escrow; the cabinet asks the host to redeem ``barcode``."""

    barcode: str = ""

    def __post_init__(self) -> None:
        DeviceEvent.__post_init__(self)
        _require(self.barcode.isdigit(), f"a ticket barcode is digits, not {self.barcode!r}")


@dataclass(frozen=True, slots=True)
class NoteStacked(DeviceEvent):
    """The escrowed note is in the cash box: credit it (exactly once)."""

    value_cents: int = 0

    def __post_init__(self) -> None:
        DeviceEvent.__post_init__(self)
        _require(self.value_cents > 0, f"a note is worth more than 0 cents, not {self.value_cents}")


@dataclass(frozen=True, slots=True)
class TicketStacked(DeviceEvent):
    barcode: str = ""


@dataclass(frozen=True, slots=True)
class Returned(DeviceEvent):
    """The escrowed note or ticket was handed back to the player."""


@dataclass(frozen=True, slots=True)
class Rejected(DeviceEvent):
    """The validator refused what was inserted (not a note it knows, inhibited, ...)."""

    reason: str = ""


# --- ticket printer -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class TicketPrinted(DeviceEvent):
    """The printer confirmed the voucher ``validation`` as printed: only now does it count."""

    validation: str = ""


@dataclass(frozen=True, slots=True)
class TicketNotPrinted(DeviceEvent):
    """The voucher ``validation`` did not print (paper out, jam, power cut mid-ticket)."""

    validation: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PaperLow(DeviceEvent):
    low: bool = True


# --- touchscreen --------------------------------------------------------------------------------
class TouchPhase(enum.StrEnum):
    DOWN = "down"
    MOVE = "move"
    UP = "up"


@dataclass(frozen=True, slots=True)
class Touch(DeviceEvent):
    """A touch at screen pixel (``x``, ``y``), after calibration."""

    x: int = 0
    y: int = 0
    phase: TouchPhase = TouchPhase.DOWN
    slot: int = 0                  #: multitouch contact slot


# --- card-reading shoe --------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _ShoeCard(DeviceEvent):
    """A card that came out of the shoe: ``card``, the ``seq``-th drawn since the shoe was loaded."""

    card: Card = Card(0)
    seq: int = 0

    def __post_init__(self) -> None:
        DeviceEvent.__post_init__(self)
        _require(self.seq >= 0, f"a card sequence number is >= 0, not {self.seq}")


@dataclass(frozen=True, slots=True)
class CardDrawn(_ShoeCard):
    """The shoe read ``card`` as the ``seq``-th card drawn since it was loaded."""


@dataclass(frozen=True, slots=True)
class ShoeStatus(DeviceEvent):
    """``empty``: no card left before the cut card; ``cut_card``: the cut card came out."""

    empty: bool = False
    cut_card: bool = False


@dataclass(frozen=True, slots=True)
class CardBurned(_ShoeCard):
    """The dealer burned ``card`` (the ``seq``-th card drawn since the shoe was loaded): not dealt."""


@dataclass(frozen=True, slots=True)
class ShoeDoor(DeviceEvent):
    """The shoe's door (its loading gate) opened or closed."""

    open: bool = False


# --- I/O board ----------------------------------------------------------------------------------
class Door(enum.StrEnum):
    MAIN = "main"
    CASH_BOX = "cash_box"
    LOGIC = "logic"


class KeySwitch(enum.StrEnum):
    AUDIT = "audit"
    JACKPOT_RESET = "jackpot_reset"


class Button(enum.StrEnum):
    DEAL = "deal"
    BET = "bet"
    REPEAT = "repeat"
    CASH_OUT = "cash_out"
    HELP = "help"
    SERVICE = "service"


@dataclass(frozen=True, slots=True)
class DoorChanged(DeviceEvent):
    door: Door = Door.MAIN
    open: bool = False


@dataclass(frozen=True, slots=True)
class KeyTurned(DeviceEvent):
    key: KeySwitch = KeySwitch.AUDIT
    on: bool = False


@dataclass(frozen=True, slots=True)
class ButtonPressed(DeviceEvent):
    button: Button = Button.DEAL
