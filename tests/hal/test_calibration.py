"""Touch calibration: the 3-point affine fit, its refusals, and its place in critical memory."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from firmware.ledger.ledger import Ledger
from hal.calibration import Calibration, CalibrationError, fit, targets

W, H = 1920, 1080


def _sensor(rx_scale, ry_scale, angle_deg, ox, oy):
    """A sensor mounted with scale, rotation and offset: screen -> raw (the inverse is the fit)."""
    import math

    t = math.radians(angle_deg)

    def to_raw(x, y):
        return ((math.cos(t) * x - math.sin(t) * y) * rx_scale + ox,
                (math.sin(t) * x + math.cos(t) * y) * ry_scale + oy)
    return to_raw


@given(st.floats(0.5, 4), st.floats(0.5, 4), st.floats(-5, 5), st.floats(-500, 500),
       st.floats(-500, 500))
def test_three_touches_calibrate_any_mounting_exactly(sx, sy, angle, ox, oy):
    to_raw = _sensor(sx, sy, angle, ox, oy)
    points = targets(W, H)
    cal = fit(points, [to_raw(*p) for p in points], W, H)
    for x, y in [(0, 0), (W // 2, H // 2), (W - 1, H - 1), (123, 987), *points]:
        assert cal.apply(*to_raw(x, y)) == (x, y)


def test_more_touches_fit_by_least_squares_and_noise_is_reported():
    to_raw = _sensor(2.0, 2.0, 0.0, 100, 50)
    screen = [(100, 100), (1800, 100), (1800, 1000), (100, 1000), (960, 540)]
    raw = [to_raw(*p) for p in screen]
    raw[4] = (raw[4][0] + 6, raw[4][1])                        # a slightly sloppy touch (3 px)
    cal = fit(screen, raw, W, H)
    assert 0 < cal.residual_px < 4
    with pytest.raises(CalibrationError, match="px from its target"):
        fit(screen, [*raw[:4], (raw[4][0] + 200, raw[4][1])], W, H)


def test_refusals():
    with pytest.raises(CalibrationError, match="needs 3 touches"):
        fit([(1, 1), (2, 2)], [(1, 1), (2, 2)], W, H)
    with pytest.raises(CalibrationError, match="one line"):
        fit(targets(W, H), [(0, 0), (10, 10), (20, 20)], W, H)
    with pytest.raises(CalibrationError, match="targets but"):
        fit(targets(W, H), [(0, 0)], W, H)
    with pytest.raises(CalibrationError):
        Calibration.from_json({"a": 1, "b": 0, "c": 0, "d": 0, "e": 1, "width": W, "height": H})
    with pytest.raises(CalibrationError):
        Calibration(1, 0, float("nan"), 0, 1, 0, W, H)
    with pytest.raises(CalibrationError):
        Calibration(1, 1, 0, 1, 1, 0, W, H)                    # maps onto a line


def test_touches_off_the_screen_are_kept_on_it():
    cal = Calibration.scaling((4096, 4096), W, H)
    assert cal.apply(-50, -50) == (0, 0)
    assert cal.apply(5000, 5000) == (W - 1, H - 1)
    assert cal.apply(2048, 2048) == (960, 540)


def test_the_calibration_lives_in_critical_memory(tmp_path):
    to_raw = _sensor(1.5, 1.7, 1.0, 30, 40)
    cal = fit(targets(W, H), [to_raw(*p) for p in targets(W, H)], W, H)
    with Ledger.open(tmp_path) as ledger:
        assert ledger.setting("touch_calibration") is None
        ledger.store_setting("touch_calibration", cal.to_json())
    with Ledger.open(tmp_path, read_only=True) as ledger:     # after a power cycle
        again = Calibration.from_json(ledger.setting("touch_calibration"))
        assert again == cal and not ledger.repairs
