"""The real evdev touch driver reading the simulator's records through a FIFO, end to end.

Every test checks that it leaves no thread and no file descriptor behind. The contract class at the
bottom also runs against a real touchscreen when ``EGM_HW_TOUCH`` names its event node.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from drivers.touch.evdev_codec import Phase
from drivers.touch.evdev_driver import EvdevTouch
from hal import registry
from hal.base import Lifecycle
from hal.calibration import fit, targets
from hal.errors import BackendError, DeviceInitError
from hal.events import DeviceOffline, DeviceOnline, Touch, TouchPhase
from sim_hardware.touch_evdev import EvdevTouchSimulator, Sensor, make_fifo
from tests.drivers.events import take
from tests.drivers.hardware import contract_params
from tests.drivers.touch_contract import HardwareWorld, SimulatedWorld, TouchContract

NAME = "touch"
W, H = 1920, 1080
HW_PATH = os.environ.get("EGM_HW_TOUCH", "")


pytestmark = pytest.mark.usefixtures("no_leaks")


def calibration_for(sensor: Sensor) -> dict:
    """The 3-point calibration a technician would fit on this sensor (the critical-memory record)."""
    points = targets(W, H)
    return fit(points, [sensor.raw(*p) for p in points], W, H).to_json()


@pytest.fixture
def fifo(tmp_path) -> str:
    return make_fifo(str(tmp_path / "event0"))


@contextlib.contextmanager
def rig(fifo: str, calibration: dict | None, **sim_kw) -> Iterator[tuple[EvdevTouch,
                                                                       EvdevTouchSimulator]]:
    with EvdevTouch(NAME, path=fifo, timeout=0.5, calibration=calibration) as dev, \
            EvdevTouchSimulator(fifo, **sim_kw).connect() as sim:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        yield dev, sim


def test_a_touch_at_a_screen_point_comes_out_at_the_calibrated_coordinates(fifo):
    sensor = Sensor()
    with rig(fifo, calibration_for(sensor), sensor=sensor) as (dev, sim):
        points = [(0, 0), (W - 1, H - 1), (W // 2, H // 2), (123, 987), (1800, 40),
                  *targets(W, H)]
        for x, y in points:
            sim.touch_screen(x, y)
        got = take(dev, 2 * len(points))
        assert got == [Touch(NAME, x, y, phase, 0) for x, y in points
                       for phase in (TouchPhase.DOWN, TouchPhase.UP)]


def test_uncalibrated_the_driver_reports_raw_points_for_the_calibration_screen(fifo):
    with rig(fifo, None) as (dev, sim):
        sim.down(1000, 2000)
        sim.move(1100, 2000)
        sim.up()
        assert take(dev, 3) == [Touch(NAME, 1000, 2000, TouchPhase.DOWN),
                                   Touch(NAME, 1100, 2000, TouchPhase.MOVE),
                                   Touch(NAME, 1100, 2000, TouchPhase.UP)]


def test_two_fingers_and_a_split_stream_and_syn_dropped(fifo):
    sensor = Sensor()
    with rig(fifo, calibration_for(sensor), sensor=sensor) as (dev, sim):
        a, b = sensor.raw(100, 100), sensor.raw(1700, 900)
        sim.split(5)                                    # every record torn across reads
        sim.two_finger(a, b)
        assert take(dev, 4) == [
            Touch(NAME, 100, 100, TouchPhase.DOWN, 0), Touch(NAME, 1700, 900, TouchPhase.DOWN, 1),
            Touch(NAME, 100, 100, TouchPhase.UP, 0), Touch(NAME, 1700, 900, TouchPhase.UP, 1)]
        sim.down(*sensor.raw(10, 10))
        sim.syn_dropped()
        sim.frame([(0, Phase.MOVE, *sensor.raw(20, 20))])   # lost in the overrun
        sim.frame([(0, Phase.MOVE, *sensor.raw(30, 30))])
        assert take(dev, 2) == [Touch(NAME, 10, 10, TouchPhase.DOWN),
                                   Touch(NAME, 30, 30, TouchPhase.MOVE)]
        assert dev.counters["dropped"] == 1


def test_a_half_written_record_waits_for_its_end(fifo):
    with rig(fifo, None) as (dev, sim):
        from drivers.touch.evdev_codec import TouchEncoder

        data = TouchEncoder().frame([(0, Phase.DOWN, 1, 2)])
        sim.write_raw(data[:-10])
        assert dev.next_event(0.2) is None
        sim.write_raw(data[-10:])
        assert take(dev, 1) == [Touch(NAME, 1, 2, TouchPhase.DOWN)]


def test_the_writer_going_away_is_lost_and_reopen_recovers(fifo):
    with EvdevTouch(NAME, path=fifo, timeout=0.5) as dev:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        with EvdevTouchSimulator(fifo).connect() as sim:
            sim.tap(5, 6)
            assert len(take(dev, 2)) == 2
            sim.unplug()
            offline = dev.next_event(2.0)
        assert isinstance(offline, DeviceOffline) and "ended" in offline.reason
        assert dev.lifecycle is Lifecycle.GONE
        dev.reopen()
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        with EvdevTouchSimulator(fifo).connect() as sim:
            sim.tap(7, 8)
            assert take(dev, 2) == [Touch(NAME, 7, 8, TouchPhase.DOWN),
                                       Touch(NAME, 7, 8, TouchPhase.UP)]


def test_open_errors_and_settings_through_the_registry(tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        EvdevTouch(NAME, path=str(tmp_path / "missing")).open()
    with pytest.raises(BackendError, match="calibration"):
        registry.create("touch", "evdev", NAME, {"path": "/x", "calibration": {"a": 1}})
    with pytest.raises(BackendError, match="unknown setting"):
        registry.create("touch", "evdev", NAME, {"port": "/x"})
    dev = registry.create("touch", "evdev", NAME, {"path": "/x", "timeout": 0.2,
                                                   "calibration": calibration_for(Sensor())})
    assert isinstance(dev, EvdevTouch)


def test_a_simulator_without_a_reader_times_out(fifo):
    with pytest.raises(TimeoutError, match="no reader"):
        EvdevTouchSimulator(fifo).connect(timeout=0.05)


# --- the contract every touchscreen backend keeps ----------------------------------------------
@pytest.fixture(params=contract_params(
    HW_PATH, "no touchscreen attached: set EGM_HW_TOUCH=/dev/input/eventN (and "
             "EGM_HW_TOUCH_CALIBRATION to its calibration JSON) to run this contract on a real one"))
def contract(request, no_leaks, tmp_path) -> Iterator[tuple[EvdevTouch, object]]:
    if request.param == "hardware":
        import json

        cal = json.loads(os.environ["EGM_HW_TOUCH_CALIBRATION"])
        with EvdevTouch(NAME, path=HW_PATH, timeout=1.0, calibration=cal) as dev:
            yield dev, HardwareWorld(request)
        return
    fifo = make_fifo(str(tmp_path / "event0"))
    sensor = Sensor(scale_x=17.0, scale_y=30.0, angle_deg=-2.0, offset_x=1500, offset_y=300)
    with EvdevTouch(NAME, path=fifo, timeout=0.5, calibration=calibration_for(sensor)) as dev, \
            EvdevTouchSimulator(fifo, sensor=sensor).connect() as sim:
        yield dev, SimulatedWorld(sim.touch_screen)


class TestTouchContract(TouchContract):
    """What the cabinet relies on from any touchscreen backend."""

