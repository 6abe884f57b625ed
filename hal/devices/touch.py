"""The touchscreen: the player's and the technician's fingers, in screen pixels once calibrated.

Events: :class:`~hal.events.Touch` (down, move, up; ``slot`` for multitouch), calibrated to screen
pixels through :attr:`Touchscreen.calibration`, or the raw sensor point while it is None (what the
calibration screen needs to fit one).
"""

from __future__ import annotations

from typing import ClassVar

from hal.base import Device
from hal.calibration import Calibration


class Touchscreen(Device):
    """What the cabinet asks of any touchscreen: touches, and a calibration it may replace."""

    device_class: ClassVar[str] = "touch"

    #: The map from sensor points to screen pixels (None: touches are reported raw). The
    #: calibration screen sets it; the terminal sets the stored one at start-up.
    calibration: Calibration | None = None


__all__ = ["Touchscreen"]
