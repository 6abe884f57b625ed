"""Touchscreen calibration: an affine map from raw touch coordinates to screen pixels.

``x = a rx + b ry + c``, ``y = d rx + e ry + f``: six numbers cover the scale, offset, rotation and
shear of any resistive or capacitive sensor mounted on a display. Three touches on three targets
not on one line determine them exactly (the classic 3-point calibration); more touches are fitted
by least squares and the worst residual says how good the fit is. The calibration is kept in
critical memory (``Ledger.store_setting("touch_calibration", cal.to_json())``), so it survives a
power cycle and its checksum protects it like every other record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The worst distance, in pixels, between a target and its fitted touch that a fit accepts.
MAX_RESIDUAL_PX = 8.0


class CalibrationError(ValueError):
    """The touches cannot define a calibration (too few, on one line, or too far off)."""


Point = tuple[float, float]


def targets(width: int, height: int) -> list[tuple[int, int]]:
    """The three points the calibration screen asks the technician to touch (not on one line)."""
    return [(round(width * 0.1), round(height * 0.1)), (round(width * 0.9), round(height * 0.5)),
            (round(width * 0.5), round(height * 0.9))]


@dataclass(frozen=True, slots=True)
class Calibration:
    a: float
    b: float
    c: float
    d: float
    e: float
    f: float
    width: int
    height: int
    residual_px: float = 0.0

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise CalibrationError(f"a screen of {self.width} x {self.height} pixels")
        coefficients = (self.a, self.b, self.c, self.d, self.e, self.f)
        if not all(math.isfinite(v) for v in coefficients):
            raise CalibrationError("calibration coefficients must be finite numbers")
        if abs(self.a * self.e - self.b * self.d) < 1e-12:
            raise CalibrationError("the calibration maps the screen onto a line")

    def apply(self, rx: float, ry: float) -> tuple[int, int]:
        """The screen pixel of a raw touch, rounded and kept on the screen."""
        x = self.a * rx + self.b * ry + self.c
        y = self.d * rx + self.e * ry + self.f
        return (min(max(round(x), 0), self.width - 1), min(max(round(y), 0), self.height - 1))

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "c": self.c, "d": self.d, "e": self.e, "f": self.f,
                "width": self.width, "height": self.height, "residual_px": self.residual_px}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Calibration:
        try:
            values = {k: float(doc[k]) for k in "abcdef"}
            return cls(**values, width=int(doc["width"]), height=int(doc["height"]),
                       residual_px=float(doc.get("residual_px", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, CalibrationError):
                raise
            raise CalibrationError(f"not a calibration record: {exc!r}") from None

    @classmethod
    def scaling(cls, raw_max: Point, width: int, height: int) -> Calibration:
        """The uncalibrated default: raw ``0..raw_max`` stretched over the screen."""
        return cls(width / raw_max[0], 0.0, 0.0, 0.0, height / raw_max[1], 0.0, width, height)


def fit(screen: Sequence[Point], raw: Sequence[Point], width: int, height: int,
        max_residual_px: float = MAX_RESIDUAL_PX) -> Calibration:
    """The calibration taking each ``raw`` touch to its ``screen`` target (3 or more pairs)."""
    if len(screen) != len(raw):
        raise CalibrationError(f"{len(screen)} targets but {len(raw)} touches")
    if len(raw) < 3:
        raise CalibrationError(f"a calibration needs 3 touches, not {len(raw)}")
    r = np.asarray(raw, dtype=float)
    s = np.asarray(screen, dtype=float)
    if not (np.isfinite(r).all() and np.isfinite(s).all()):
        raise CalibrationError("touch coordinates must be finite numbers")
    m = np.column_stack((r, np.ones(len(r))))
    if np.linalg.matrix_rank(m) < 3:
        raise CalibrationError("the touches lie on one line: touch each target again")
    coeffs, *_ = np.linalg.lstsq(m, s, rcond=None)
    residual = float(np.max(np.hypot(*(m @ coeffs - s).T)))
    if residual > max_residual_px:
        raise CalibrationError(
            f"a touch is {residual:.1f} px from its target (at most {max_residual_px} allowed): "
            "touch each target again")
    (a, d), (b, e), (c, f) = coeffs
    return Calibration(float(a), float(b), float(c), float(d), float(e), float(f), width, height,
                       round(residual, 3))
