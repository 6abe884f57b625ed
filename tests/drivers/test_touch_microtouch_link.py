"""The real MicroTouch driver talking to the simulated controller over a pty, end to end.

Every test checks that it leaves no thread and no file descriptor behind. The contract class at the
bottom also runs against a real controller when ``EGM_HW_MICROTOUCH`` names its serial port.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator

import pytest

from drivers.touch.microtouch_driver import MicroTouch
from firmware.config.schema import DevicesSection
from hal import registry
from hal.base import Lifecycle
from hal.calibration import fit, targets
from hal.errors import BackendError, DeviceClosedError, DeviceInitError
from hal.events import DeviceOffline, DeviceOnline, Touch, TouchPhase
from sim_hardware.answering import AnsweringDevice
from sim_hardware.pty_link import run_on_pty
from sim_hardware.touch_evdev import Sensor
from sim_hardware.touch_microtouch import SENSOR, MicroTouchSimulator
from sim_hardware.twins import twin
from tests.drivers.events import take, wait_for, wait_until
from tests.drivers.hardware import contract_params
from tests.drivers.touch_contract import HardwareWorld, SimulatedWorld, TouchContract

NAME = "touch"
W, H = 1920, 1080
HW_PORT = os.environ.get("EGM_HW_MICROTOUCH", "")
#: A second panel, mounted differently from the simulator's default one (and tilted the other way).
MISALIGNED = Sensor(scale_x=7.5, scale_y=14.0, angle_deg=-2.0, offset_x=1200.0, offset_y=1000.0,
                    raw_max=16383)

pytestmark = pytest.mark.usefixtures("no_leaks")


def calibration_for(sensor: Sensor) -> dict:
    """The 3-point calibration a technician would fit on this sensor (the critical-memory record)."""
    points = targets(W, H)
    return fit(points, [sensor.raw(*p) for p in points], W, H).to_json()


@pytest.fixture
def sim() -> MicroTouchSimulator:
    return MicroTouchSimulator(sensor=MISALIGNED)


@contextlib.contextmanager
def driver(link, calibration: dict | None = None, **kw) -> Iterator[MicroTouch]:
    with MicroTouch(NAME, port=link.path, timeout=0.5, calibration=calibration, **kw) as dev:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        yield dev


def test_open_puts_the_controller_in_format_tablet_and_mode_stream(link, sim):
    with driver(link) as dev:
        assert sim.commands == ["FT", "MS"]
        assert dev.identity() == "EG0001"
        assert sim.commands[-1] == "OI"


def test_a_touch_at_a_screen_point_comes_out_at_the_calibrated_coordinates(link, sim):
    with driver(link, calibration_for(MISALIGNED)) as dev:
        points = [(0, 0), (W - 1, H - 1), (W // 2, H // 2), (123, 987), (1800, 40),
                  *targets(W, H)]
        for x, y in points:
            sim.tap(x, y)
        got = take(dev, 2 * len(points))
        assert got == [Touch(NAME, x, y, phase, 0) for x, y in points
                       for phase in (TouchPhase.DOWN, TouchPhase.UP)]


def test_a_drag_moves_and_a_still_finger_is_one_event(link, sim):
    with driver(link, calibration_for(MISALIGNED)) as dev:
        sim.stream_interval_s = None                  # only the repeats asked for, to count them
        sim.drag((100, 100), (500, 300), steps=4)
        sim.hold(5)                                   # Mode Stream repeats a still finger
        sim.lift()
        got = take(dev, 6)
        assert [(e.x, e.y, e.phase) for e in got] == [
            (100, 100, TouchPhase.DOWN), (200, 150, TouchPhase.MOVE), (300, 200, TouchPhase.MOVE),
            (400, 250, TouchPhase.MOVE), (500, 300, TouchPhase.MOVE), (500, 300, TouchPhase.UP)]
        assert dev.next_event(0.1) is None
        assert dev.counters["repeats"] == 5


def test_uncalibrated_the_driver_reports_raw_points_for_the_calibration_screen(link, sim):
    with driver(link) as dev:
        sim.touch_raw(16383, 0)
        sim.touch_raw(1000, 2000)
        sim.lift()
        assert take(dev, 3) == [Touch(NAME, 16383, 0, TouchPhase.DOWN),
                                Touch(NAME, 1000, 2000, TouchPhase.MOVE),
                                Touch(NAME, 1000, 2000, TouchPhase.UP)]


def test_garbage_a_torn_report_and_a_split_stream_are_survived(link, sim):
    with driver(link) as dev:
        sim.garbage()
        sim.touch_raw(100, 200)
        sim.tear_next(2)                              # this move loses its end on the wire
        sim.touch_raw(300, 400)
        sim.split(1)                                  # this one trickles out byte by byte
        sim.touch_raw(500, 600)
        sim.garbage(b"\x01\x30")                      # half a response, cut by the next report
        sim.lift()
        assert take(dev, 3) == [Touch(NAME, 100, 200, TouchPhase.DOWN),
                                Touch(NAME, 500, 600, TouchPhase.MOVE),
                                Touch(NAME, 500, 600, TouchPhase.UP)]
        assert dev.counters["garbage"] == 3
        assert dev.is_open


def test_unplug_is_lost_and_reopen_on_a_new_link_recovers(no_leaks):
    sim = MicroTouchSimulator()
    with run_on_pty(sim) as link, MicroTouch(NAME, port=link.path, timeout=0.5) as dev:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        sim.tap(10, 10)
        assert len(take(dev, 2)) == 2
        sim.unplug()
        offline = wait_for(dev, DeviceOffline, 3.0)
        assert "port error" in offline.reason
        assert dev.lifecycle is Lifecycle.GONE
        with pytest.raises(OSError, match="not serving"):
            sim.tap(10, 10)
        with pytest.raises(DeviceInitError):
            dev.reopen()                               # the old pty has no controller any more
        replugged = MicroTouchSimulator()
        with run_on_pty(replugged) as again:
            dev.port = again.path                      # what the hot-plug monitor does
            dev.reopen()
            assert dev.next_event(1.0) == DeviceOnline(NAME)
            replugged.touch_raw(7, 8)
            assert take(dev, 1) == [Touch(NAME, 7, 8, TouchPhase.DOWN)]
            dev.close()


class Mute(AnsweringDevice):
    """A controller that answers its first ``after`` commands ``<SOH>0<CR>``, then every one with
    ``answer`` (None: it stays silent)."""

    WHO = "mute sim"

    def __init__(self, answer: bytes | None = None, after: int = 0) -> None:
        super().__init__()
        self.answer, self.after, self.heard = answer, after, 0

    def feed(self, data: bytes) -> list[bytes]:
        out = []
        for _ in range(data.count(b"\r")):
            self.heard += 1
            if self.heard <= self.after:
                out.append(b"\x010\r")
            elif self.answer is not None:
                out.append(self.answer)
        return out


def test_no_answer_to_format_tablet_is_a_clear_open_error(no_leaks):
    with run_on_pty(Mute()) as link:
        dev = MicroTouch(NAME, port=link.path, timeout=0.2)
        with pytest.raises(DeviceInitError, match=r"no answer to Format Tablet \(<SOH>FT<CR>\)"):
            dev.open()
        assert dev.lifecycle is Lifecycle.CLOSED


def test_a_refused_format_tablet_is_a_clear_open_error(no_leaks):
    with run_on_pty(Mute(b"\x011\r")) as link:
        dev = MicroTouch(NAME, port=link.path, timeout=0.2)
        with pytest.raises(DeviceInitError, match="refused Format Tablet.*7-bit"):
            dev.open()


def test_a_controller_that_goes_silent_is_lost_after_unanswered_null_commands(no_leaks):
    mute = Mute(after=2)                              # answers FT and MS, then nothing
    with run_on_pty(mute) as link, MicroTouch(NAME, port=link.path, timeout=0.1,
                                              probe_interval=0.1) as dev:
        assert dev.next_event(1.0) == DeviceOnline(NAME)
        offline = wait_for(dev, DeviceOffline, 3.0)
        assert "no answer to 3 Null commands" in offline.reason
        assert dev.counters["missed_probes"] == 3


def test_a_quiet_controller_is_probed_and_stays_open(link, sim):
    with driver(link, probe_interval=0.05) as dev:
        wait_until(lambda: sim.commands.count("Z") >= 3)
        assert dev.is_open and dev.counters["missed_probes"] == 0
        assert dev.identity() == "EG0001"             # an ask while probes run
        sim.tap(50, 60)
        assert [e.phase for e in take(dev, 2)] == [TouchPhase.DOWN, TouchPhase.UP]


def test_identity_when_closed_raises_and_close_is_idempotent(link, sim):
    dev = MicroTouch(NAME, port=link.path, timeout=0.5)
    with pytest.raises(DeviceClosedError, match="not open"):
        dev.identity()
    dev.open()
    dev.close()
    dev.close()
    assert dev.lifecycle is Lifecycle.CLOSED
    with dev:
        assert dev.is_open
    assert dev.lifecycle is Lifecycle.CLOSED


def test_open_errors_and_settings_through_the_registry(tmp_path):
    with pytest.raises(DeviceInitError, match="cannot open"):
        MicroTouch(NAME, port=str(tmp_path / "missing")).open()
    with pytest.raises(BackendError, match="calibration"):
        registry.create("touch", "microtouch", NAME, {"port": "/x", "calibration": {"a": 1}})
    with pytest.raises(BackendError, match="unknown setting"):
        registry.create("touch", "microtouch", NAME, {"port": "/x", "baud": 9600})
    with pytest.raises(BackendError, match="probe_interval"):
        registry.create("touch", "microtouch", NAME, {"port": "/x", "probe_interval": 0})
    dev = registry.create("touch", "microtouch", NAME,
                          {"port": "/x", "timeout": 0.2, "calibration": calibration_for(SENSOR)})
    assert isinstance(dev, MicroTouch)


# --- the configuration's "sim:microtouch" -------------------------------------------------------
def test_the_default_configuration_specs_parse():
    classes = {"bill_validator": "bill_validator", "printer": "printer", "touch": "touch",
               "shoe": "shoe", "io_board": "io"}
    for key, device_class in classes.items():
        spec = registry.parse_spec(device_class, getattr(DevicesSection(), key))
        assert spec.device_class == device_class
    assert registry.parse_spec("touch", "sim:microtouch") == registry.BackendSpec(
        "touch", "microtouch", True)
    assert registry.parse_spec("touch", "evdev") == registry.BackendSpec("touch", "evdev", False)
    assert registry.parse_spec("shoe", "none") == registry.BackendSpec("shoe", None, False)
    with pytest.raises(BackendError, match="names no backend"):
        registry.parse_spec("touch", "sim:elo")
    with pytest.raises(BackendError, match="unknown device class"):
        registry.parse_spec("coin", "sim:x")


def test_sim_microtouch_runs_the_driver_against_its_simulated_twin(no_leaks):
    spec = registry.parse_spec("touch", DevicesSection().touch)
    assert spec == registry.BackendSpec("touch", "microtouch", True)
    with twin(spec, NAME, {"timeout": 0.5, "calibration": calibration_for(SENSOR)}) as (dev, sim):
        assert isinstance(dev, MicroTouch) and isinstance(sim, MicroTouchSimulator)
        with dev:
            assert dev.next_event(1.0) == DeviceOnline(NAME)
            sim.tap(640, 360)
            assert take(dev, 2) == [Touch(NAME, 640, 360, TouchPhase.DOWN),
                                    Touch(NAME, 640, 360, TouchPhase.UP)]
    with pytest.raises(BackendError, match="no simulated twin"), \
            twin(registry.parse_spec("touch", "sim:evdev"), NAME):
        pass


# --- the contract every touchscreen backend keeps ----------------------------------------------
@pytest.fixture(params=contract_params(
    HW_PORT, "no MicroTouch controller attached: set EGM_HW_MICROTOUCH=/dev/ttyS0 (and "
             "EGM_HW_TOUCH_CALIBRATION to its calibration JSON) to run this contract on a real one"))
def contract(request, no_leaks) -> Iterator[tuple[MicroTouch, object]]:
    if request.param == "hardware":
        import json

        cal = json.loads(os.environ["EGM_HW_TOUCH_CALIBRATION"])
        with MicroTouch(NAME, port=HW_PORT, timeout=1.0, calibration=cal) as dev:
            yield dev, HardwareWorld(request)
        return
    sim = MicroTouchSimulator(sensor=MISALIGNED)
    with run_on_pty(sim) as link, \
            MicroTouch(NAME, port=link.path, timeout=0.5,
                       calibration=calibration_for(MISALIGNED)) as dev:
        yield dev, SimulatedWorld(sim.tap)


class TestMicroTouchContract(TouchContract):
    """What the cabinet relies on from any touchscreen backend (as ``TestTouchContract``)."""

    def test_the_controller_identifies_itself(self, contract):
        dev, _ = contract
        identity = dev.identity()
        assert len(identity) == 6 and identity.isprintable()



def test_a_finger_held_still_streams_and_stays_down(link, sim):
    with driver(link) as dev:
        sim.touch_raw(500, 600)
        time.sleep(1.0)                               # twice the lift gap: the sim streams meanwhile
        sim.lift()
        assert [e.phase for e in take(dev, 2)] == [TouchPhase.DOWN, TouchPhase.UP]
        assert dev.counters["repeats"] >= 3 and dev.counters["lost_lift"] == 0


def test_a_lost_lift_off_counts_as_a_lift_after_the_gap_and_the_next_touch_is_a_tap(link, sim):
    with driver(link) as dev:
        sim.touch_raw(500, 600)
        with sim._lock:
            sim.touching = False                      # the finger left; its lift-off report was lost
        assert [(e.x, e.y, e.phase) for e in take(dev, 2)] == [(500, 600, TouchPhase.DOWN),
                                                               (500, 600, TouchPhase.UP)]
        assert dev.counters["lost_lift"] == 1
        sim.touch_raw(9000, 100)
        sim.lift()
        assert [e.phase for e in take(dev, 2)] == [TouchPhase.DOWN, TouchPhase.UP]
