"""Touch calibration through the calibration screen.

Acceptance: a misaligned touchscreen (the 3M MicroTouch simulator on a pty, its sensor mounted
scaled, rotated and offset, read by the real driver) taps the wrong buttons; the technician
calibrates it through the screen by touching the targets through the simulator; the calibration
is in critical memory and in the driver; afterwards taps land on the intended buttons.

Also: the procedure's own checks (touches on one line, a check touch off target, giving up), and
the terminal command's refusals (a role that may not test the touchscreen; a commit without a
passed check).
"""

from __future__ import annotations

import math

import pygame
import pytest

from firmware.cabinet.service import ServiceError
from firmware.cabinet.terminal import Devices
from firmware.ui.painter import Painter
from firmware.ui.service.app import ServiceApp
from firmware.ui.service.calibration import (
    SETTING,
    CalibrationRun,
    apply_stored_calibration,
    check_target,
    check_tolerance,
    draw_calibration,
    install_calibration,
    stored_calibration,
)
from hal import registry
from hal.calibration import Calibration, targets
from sim_hardware.rig import SimRig
from sim_hardware.touch_evdev import Sensor
from tests.cabinet.test_service import TEST_PINS, FakeIo, FakePrinter, FakeValidator
from tests.ui.service.conftest import FRAME, build_terminal, centre, settle, until

RAW_MAX = 16383
#: A panel mounted badly: scaled unevenly, turned 2 degrees and shifted, so that through the
#: factory scaling the whole screen lands in about the middle quarter of it.
MISALIGNED = Sensor(scale_x=4.27, scale_y=7.58, angle_deg=2.0, offset_x=4267.0, offset_y=4551.0, raw_max=RAW_MAX)


def click(app: ServiceApp, name: str, frames: int = 3) -> None:
    """A mouse click (development input) on the named button: the technician's way in while the
    touchscreen is still off."""
    app.step(FRAME, [pygame.event.Event(pygame.MOUSEBUTTONDOWN, button=1, pos=centre(app, name))])
    settle(app, frames)


@pytest.fixture
def bench(tmp_path):
    """A terminal whose touchscreen is the MicroTouch simulator behind the real driver, with the
    driver's factory scaling (raw 0..16383 stretched over the screen) as its calibration."""
    made = []

    def make(size):
        w, h = size
        factory = Calibration.scaling((RAW_MAX, RAW_MAX), w, h).to_json()
        rig = SimRig({"touch": registry.BackendSpec("touch", "microtouch", True)},
                     {"touch": {"calibration": factory, "probe_interval": None}})
        rig.simulator("touch").sensor = MISALIGNED
        devices = Devices(bill_validator=FakeValidator(), printer=FakePrinter(), io_board=FakeIo(),
                          touch=rig.device("touch"))
        r = build_terminal(tmp_path / f"state{len(made)}", devices)
        r.rig, r.sim = rig, rig.simulator("touch")
        r.app = ServiceApp(r.terminal, size=size)
        r.app.step(FRAME)
        made.append(r)
        return r

    yield make
    for r in made:
        r.rig.close()
        r.ledger.close()


def tap(r, name: str) -> None:
    """A finger on the centre of the named button, through the simulated sensor and the driver."""
    before = len(r.terminal.touches)
    r.sim.tap(*centre(r.app, name))
    until(r.app, lambda: len(r.terminal.touches) >= before + 2, f"the tap on {name} to arrive")
    settle(r.app, 3)


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_a_misaligned_touchscreen_is_calibrated_through_the_screen_and_taps_then_land(bench, size):
    r = bench(size)
    app = r.app
    # Misaligned: a tap on the technician's button is taken somewhere else.
    aim = centre(app, "role.technician")
    tap(r, "role.technician")
    assert app.menu.state.pin_role != "technician"
    landed = r.terminal.touches[-2]
    assert math.dist((landed["x"], landed["y"]), aim) > 60
    # The technician logs in with the development mouse and opens the calibration screen.
    if app.menu.state.page == "pin":
        click(app, "button.cancel")
    click(app, "role.technician")
    for digit in TEST_PINS["technician"]:
        click(app, f"key.{digit}", frames=1)
    click(app, "button.enter")
    assert app.menu.state.role == "technician"
    click(app, "menu.calibration")
    click(app, "button.calibrate")
    assert app.menu.calibrating and r.devices.touch.calibration is None        # raw reports now
    assert "calibration" in app.frame.regions and not app.frame.hits           # nothing to press
    # Each target as the screen shows it, touched through the misaligned sensor.
    expected = [tuple(t) for t in targets(*size)] + [check_target(*size)]
    for i, point in enumerate(expected):
        shown = app.frame.regions["calibration.target"]
        assert math.dist(app.scaler.point(*shown.center), point) <= 2, (i, point)
        step = app.menu.run.phase, len(app.menu.run.raw)
        r.sim.tap(*point)
        until(app, lambda step=step: app.menu.run is None or (app.menu.run.phase, len(app.menu.run.raw)) != step,
              f"target {i + 1} to be taken")
    until(app, lambda: not app.menu.calibrating, "the calibration to be saved")
    assert "Touchscreen calibrated" in " ".join(app.frame.texts_in("message"))
    # Stored in critical memory as the terminal keeps it, and in force in the driver.
    stored = stored_calibration(r.ledger)
    assert stored is not None and stored == r.devices.touch.calibration
    assert (stored.width, stored.height) == size
    event = next(e for e in r.ledger.events(50) if e["event"] == "touch_calibrated")
    assert event["role"] == "technician" and event["check_px"] <= check_tolerance(*size)
    # Afterwards the taps land: the menu by touch alone.
    click(app, "button.menu")
    aim = centre(app, "menu.diagnostics")
    tap(r, "menu.diagnostics")
    assert app.menu.state.page == "diagnostics"
    landed = r.terminal.touches[-2]
    assert math.dist((landed["x"], landed["y"]), aim) <= 3
    tap(r, "button.menu")
    assert app.menu.state.page == "menu"
    tap(r, "menu.meters")
    assert app.menu.state.page == "meters"
    # After a power cycle the driver gets it from critical memory again.
    r.devices.touch.calibration = None
    assert apply_stored_calibration(r.terminal) == stored and r.devices.touch.calibration == stored


def _sensor(x: float, y: float) -> tuple[float, float]:
    return MISALIGNED.raw(x, y)


def test_the_run_fits_three_targets_and_checks_a_fourth():
    run = CalibrationRun(1920, 1080)
    for point in run.targets:
        assert run.target == point
        assert run.touch(*_sensor(*point)) in ("targets", "check")
    assert run.phase == "check" and run.target == check_target(1920, 1080)
    assert run.touch(*_sensor(*run.check)) == "done"
    assert run.check_error <= 1.5 and run.calibration is not None and run.target is None


def test_touches_on_one_line_or_a_check_off_target_start_again_and_three_failures_give_up():
    run = CalibrationRun(1280, 720)
    for _ in range(3):
        run.touch(100, 100)                         # the same point three times: on one line
    assert run.phase == "targets" and run.attempt == 2 and run.raw == []
    assert "one line" in run.view().detail
    for point in run.targets:
        run.touch(*_sensor(*point))
    x, y = run.check
    assert run.touch(*_sensor(x + 80, y)) == "targets"          # the check touch 80 px off
    assert run.attempt == 3 and "80 px off" in run.view().detail
    for point in run.targets:
        run.touch(*_sensor(*point))
    assert run.touch(*_sensor(x, y + 60)) == "failed" and run.done and run.calibration is None


def test_only_a_role_that_may_test_the_touchscreen_calibrates_and_a_commit_needs_its_check(rig):
    r = rig()
    command = install_calibration(r.terminal)
    assert install_calibration(r.terminal) is command
    with pytest.raises(ServiceError, match="log in first"):
        command("begin")
    r.api.login("auditor", TEST_PINS["auditor"])
    with pytest.raises(ServiceError, match="the auditor role may not use touch calibrate"):
        command("begin")
    assert r.devices.touch.calibration is None and r.ledger.setting(SETTING) is None
    r.api.login("technician", TEST_PINS["technician"])
    good = Calibration(1.0, 0.0, 2.0, 0.0, 1.0, 3.0, 1920, 1080)
    r.devices.touch.calibration = good
    assert command("begin") == {"raw": True, "device": "touch"}
    assert r.devices.touch.calibration is None
    with pytest.raises(ServiceError, match="only after its check touch"):
        command("commit", calibration=good.to_json(), check_px=40.0)
    with pytest.raises(ValueError, match="not a calibration record"):
        command("commit", calibration={"a": 1}, check_px=1.0)
    assert command("cancel") == {"restored": True} and r.devices.touch.calibration == good
    assert r.ledger.setting(SETTING) is None
    with pytest.raises(ServiceError, match="unknown step"):
        command("wipe")


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_target_count_said_is_the_dots_drawn_at_every_step(size):
    """Each step says "target k of n" and draws n progress dots: the three targets of the hal's
    calibration and the check target, the current one the k-th."""
    run = CalibrationRun(*size)
    n = len(targets(*size)) + 1
    surface = pygame.Surface(size)
    for k in range(1, n + 1):
        p = Painter(surface)
        draw_calibration(p, run.view())
        dots = sorted(name for name in p.frame.regions if name.startswith("calibration.progress."))
        said = next(t.text for t in p.frame.texts if "target" in t.text)
        assert f"target {k} of {n}" in said, said
        assert dots == [f"calibration.progress.{i}" for i in range(1, n + 1)], dots
        run.touch(*run.target)                               # a touch exactly on it (raw = screen here)
    assert run.phase == "done"
