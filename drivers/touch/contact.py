"""What every touchscreen codec reports (a raw contact change, before calibration) and what every
touchscreen driver does with it (calibrate it into a :class:`~hal.events.Touch`)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hal.calibration import Calibration, CalibrationError
from hal.events import Touch, TouchPhase


class Phase(enum.StrEnum):
    DOWN = "down"
    MOVE = "move"
    UP = "up"


@dataclass(frozen=True, slots=True)
class Contact:
    """A raw contact change: sensor coordinates, before calibration; ``slot`` 0 on single touch."""

    slot: int
    x: int
    y: int
    phase: Phase


def load_calibration(name: str, doc: Mapping[str, Any] | None) -> Calibration | None:
    """The calibration of the JSON record ``doc`` (as kept in critical memory); None for None.

    ``ValueError`` naming the device if it is not one (the registry reports it as a bad setting).
    """
    try:
        return None if doc is None else Calibration.from_json(doc)
    except CalibrationError as exc:
        raise ValueError(f"{name}: calibration: {exc}") from exc


def to_touch(device: str, calibration: Calibration | None, contact: Contact) -> Touch:
    """The cabinet's event for a raw contact: calibrated to screen pixels if calibrated (else the
    raw sensor point, which is what the calibration screen needs to fit one)."""
    x, y = contact.x, contact.y
    if calibration is not None:
        x, y = calibration.apply(x, y)
    return Touch(device, x, y, TouchPhase(contact.phase.value), contact.slot)
