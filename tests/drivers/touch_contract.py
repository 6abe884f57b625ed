"""The contract every touchscreen backend keeps (evdev, MicroTouch): what the cabinet relies on.

A test module supplies a ``contract`` fixture yielding ``(device, world)``, where the world touches
the screen: :class:`SimulatedWorld` through a simulator, :class:`HardwareWorld` by prompting a
technician at a real, calibrated screen. Its test class subclasses :class:`TouchContract`.
"""

from __future__ import annotations

from collections.abc import Callable

from hal.base import Lifecycle
from hal.events import DeviceOnline, Touch, TouchPhase
from tests.drivers.events import collect
from tests.drivers.hardware import Technician
from tests.drivers.interface import assert_a_missing_member_fails, assert_implements

W, H = 1920, 1080


class SimulatedWorld:
    wait_s = 3.0

    def __init__(self, tap: Callable[[int, int], object]) -> None:
        self._tap = tap

    def touch(self, x: int, y: int) -> None:
        self._tap(x, y)


class HardwareWorld(Technician):
    """A technician at a real, calibrated touchscreen, prompted on the terminal."""

    wait_s = 60.0

    def touch(self, x: int, y: int) -> None:
        self._say(f"touch the screen at pixel ({x}, {y}) and lift")


class TouchContract:
    """Subclass as ``Test...Contract`` beside a ``contract`` fixture."""

    def test_it_and_every_registered_touchscreen_implement_the_interface(self, contract):
        dev, _ = contract
        assert_implements(dev, "touch")

    def test_a_touchscreen_missing_a_member_of_the_interface_is_refused(self, monkeypatch):
        assert_a_missing_member_fails("touch", monkeypatch)

    def test_opens_online(self, contract):
        dev, _ = contract
        assert dev.next_event(1.0) == DeviceOnline(dev.name)
        assert dev.is_open

    def test_a_tap_is_a_down_then_an_up_near_the_target(self, contract):
        dev, world = contract
        assert dev.next_event(1.0) == DeviceOnline(dev.name)
        world.touch(W // 2, H // 2)
        got = collect(dev, lambda e: isinstance(e, Touch) and e.phase is TouchPhase.UP, world.wait_s)
        tol = 0 if isinstance(world, SimulatedWorld) else 40     # a finger is not a pixel
        assert got[0].phase is TouchPhase.DOWN and got[-1].phase is TouchPhase.UP
        for e in got:
            assert abs(e.x - W // 2) <= tol and abs(e.y - H // 2) <= tol

    def test_close_is_idempotent_and_reopen_works(self, contract):
        dev, _ = contract
        dev.close()
        dev.close()
        assert dev.lifecycle is Lifecycle.CLOSED
        dev.open()
        assert dev.is_open
