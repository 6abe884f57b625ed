"""The I/O board: doors, key switches and buttons in; button lamps, the tower light and the
electromechanical meters out.

Events: :class:`~hal.events.DoorChanged`, :class:`~hal.events.KeyTurned`,
:class:`~hal.events.ButtonPressed`; :class:`~hal.events.DeviceFault` and its clearing.
"""

from __future__ import annotations

import enum
from abc import abstractmethod
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from hal.base import Device
from hal.events import Button, Door, KeySwitch

#: The tiers of the tower light (0 the top one).
TIERS = 4

#: An input of the board.
Input = Door | KeySwitch | Button


class TowerPattern(enum.IntEnum):
    """What one tier of the tower light shows (the value is the board's code for it)."""

    OFF = 0
    ON = 1
    FLASH_SLOW = 2
    FLASH_FAST = 3


class IoBoard(Device):
    """What the cabinet asks of the I/O board."""

    device_class: ClassVar[str] = "io"

    #: Every input as the board last reported it (True: open, on, pressed); a backend keeps it.
    inputs: Mapping[Input, bool] = MappingProxyType({})

    @abstractmethod
    def button_lamps(self, lit: frozenset[Button]) -> None:
        """Light exactly the buttons in ``lit``."""

    @abstractmethod
    def tower(self, tier: int, pattern: TowerPattern) -> None:
        """Set tier ``tier`` (0..TIERS-1, 0 the top) of the tower light to ``pattern``."""

    @abstractmethod
    def pulse_meter(self, meter: int, count: int) -> None:
        """Advance hard meter ``meter`` by ``count`` pulses, exactly once."""

    def wait_inputs(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s until the board has reported every input since it was opened
        (its snapshot); whether it has. A board whose inputs are known at once: True."""
        return True


__all__ = ["TIERS", "Input", "IoBoard", "TowerPattern"]
