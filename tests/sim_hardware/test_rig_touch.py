"""``egm simctl touch X Y``: a finger at a fraction of the screen, through the simulated sensor and
the production MicroTouch driver, arrives at that point of the screen."""

from __future__ import annotations

import time

import pytest

from hal.calibration import fit, targets
from hal.events import Touch, TouchPhase
from hal.registry import BackendSpec
from sim_hardware.rig import RigError, SimRig
from sim_hardware.touch_microtouch import SENSOR


def test_touch_at_fractions_of_the_screen_lands_there():
    w, h = 1920, 1080
    spots = targets(w, h)
    calibration = fit(spots, [SENSOR.raw(*p) for p in spots], w, h)
    rig = SimRig({"touch": BackendSpec("touch", "microtouch", True)},
                 {"touch": {"calibration": calibration.to_json()}})
    device = rig.device("touch").open()
    try:
        answer = rig.control(["touch", "0.25", "0.75"])
        assert answer["pixel"] == [480, 809]
        deadline = time.monotonic() + 5
        seen: list[Touch] = []
        while not any(t.phase is TouchPhase.UP for t in seen) and time.monotonic() < deadline:
            seen += [e for e in device.drain_events() if isinstance(e, Touch)]
            time.sleep(0.01)
        down = next(t for t in seen if t.phase is TouchPhase.DOWN)
        assert abs(down.x - 480) <= 2 and abs(down.y - 809) <= 2
        with pytest.raises(RigError, match="fractions of the screen"):
            rig.control(["touch", "480", "809"])
    finally:
        device.close()
        rig.close()
