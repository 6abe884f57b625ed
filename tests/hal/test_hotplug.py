"""Hot-plug: a watched port removed makes its device offline; added again, it is reopened on the
new node. The ID-003 driver and simulator stand in for any serial device."""

from __future__ import annotations

import time

import pytest

from drivers.id003.driver import Id003Validator
from hal.base import Lifecycle
from hal.events import DeviceOffline, DeviceOnline
from hal.hotplug import Hotplug, PortMatch, discover
from sim_hardware.id003_validator import Id003Simulator
from sim_hardware.pty_link import run_on_pty

SERIAL = "JCM_iVIZION_0042"


def _props(node: str, serial: str = SERIAL) -> dict[str, str]:
    return {"DEVNAME": node, "ID_SERIAL": serial, "SUBSYSTEM": "tty"}


def _wait(dev, kind, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = dev.next_event(0.1)
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__}")


def test_unplug_and_replug_on_another_node_reopens_the_device():
    hotplug = Hotplug()
    with run_on_pty(Id003Simulator()) as first:
        dev = Id003Validator("validator", port=first.path, timeout=0.3, poll_interval=0.02)
        hotplug.watch(dev, PortMatch(id_serial=SERIAL))
        try:
            dev.open()
            assert _wait(dev, DeviceOnline) == DeviceOnline("validator")
            hotplug.handle("remove", _props("/dev/ttyUSB7", serial="someone_else"))
            assert dev.is_open                                   # not ours: untouched
            hotplug.handle("remove", _props(first.path))
            assert dev.lifecycle is Lifecycle.GONE
            assert _wait(dev, DeviceOffline).reason.startswith("unplugged")
            with run_on_pty(Id003Simulator()) as second:        # back, on a new node
                hotplug.handle("add", _props(second.path))
                assert dev.is_open and dev.port == second.path
                assert _wait(dev, DeviceOnline) == DeviceOnline("validator")
                dev.close()
        finally:
            dev.close()


def test_a_port_that_comes_back_broken_leaves_the_device_offline(tmp_path, caplog):
    hotplug = Hotplug()
    dev = Id003Validator("validator", port=str(tmp_path / "none"), timeout=0.1)
    hotplug.watch(dev, PortMatch(devnode=str(tmp_path / "ttyX")))
    hotplug.handle("add", {"DEVNAME": str(tmp_path / "ttyX")})
    assert dev.lifecycle is Lifecycle.CLOSED and "cannot reopen" in caplog.text


def test_port_matches_and_discovery():
    with pytest.raises(ValueError):
        PortMatch()
    match = PortMatch(id_serial=SERIAL, id_path="pci-0000:00:14.0-usb-0:2:1.0")
    assert match.matches({"ID_SERIAL": SERIAL, "ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0"})
    assert not match.matches({"ID_SERIAL": SERIAL})
    # udev is there on Linux: discovery runs and finds no such adapter on this machine.
    assert discover(PortMatch(id_serial="NO_SUCH_ADAPTER_123")) == []


def test_the_udev_monitor_starts_and_stops_cleanly():
    import threading

    before = set(threading.enumerate())
    hotplug = Hotplug()
    hotplug.start()
    assert any(t.name == "egm-hotplug" for t in threading.enumerate())
    hotplug.stop()
    assert set(threading.enumerate()) == before
