"""The shared device lifecycle and the backend registry."""

from __future__ import annotations

import logging

import pytest

from hal import registry
from hal.base import Device, Lifecycle
from hal.errors import (
    BackendError,
    DeviceClosedError,
    DeviceGoneError,
    DeviceInitError,
)
from hal.events import DeviceOffline, DeviceOnline, NoteEscrowed, TicketEscrowed


class Recorder(Device):
    device_class = "test"

    def __init__(self, name: str, *, timeout: float = 1.0, fail_open: bool = False,
                 fail_close: bool = False) -> None:
        super().__init__(name, timeout=timeout)
        self.fail_open, self.fail_close = fail_open, fail_close
        self.opened = self.closed = 0

    def _open(self) -> None:
        self.opened += 1
        if self.fail_open:
            raise OSError("no such port")

    def _close(self) -> None:
        self.closed += 1
        if self.fail_close:
            raise OSError("port vanished")


def test_open_close_is_idempotent_and_a_context_manager():
    with Recorder("v") as dev:
        assert dev.is_open and dev.open() is dev and dev.opened == 1
        assert isinstance(dev.next_event(), DeviceOnline)
    assert dev.lifecycle is Lifecycle.CLOSED and dev.closed == 1
    dev.close()
    assert dev.closed == 1
    with pytest.raises(DeviceClosedError):
        dev.require_open()


def test_a_failed_open_is_an_init_error_and_tears_down_what_was_built():
    dev = Recorder("v", fail_open=True)
    with pytest.raises(DeviceInitError, match="v: cannot open: no such port") as info:
        dev.open()
    assert isinstance(info.value.__cause__, OSError)
    assert dev.closed == 1 and dev.lifecycle is Lifecycle.CLOSED
    assert dev.drain_events() == []


def test_a_failing_close_is_logged_not_raised(caplog):
    dev = Recorder("v", fail_close=True).open()
    with caplog.at_level(logging.ERROR):
        dev.close()
    assert "error while closing" in caplog.text and not dev.is_open


def test_lost_reports_once_and_reopen_recovers():
    dev = Recorder("v").open()
    dev.drain_events()
    dev.lost("unplugged")
    dev.lost("unplugged again")
    assert dev.drain_events() == [DeviceOffline("v", "unplugged")]
    with pytest.raises(DeviceGoneError):
        dev.require_open()
    dev.reopen()
    assert dev.is_open and dev.opened == 2
    assert dev.drain_events() == [DeviceOnline("v")]


def test_bad_construction_and_events_are_refused():
    with pytest.raises(ValueError):
        Recorder("")
    with pytest.raises(ValueError):
        Recorder("v", timeout=0)
    with pytest.raises(ValueError):
        NoteEscrowed("v", 0)
    with pytest.raises(ValueError):
        TicketEscrowed("v", "12a")


def test_registry_names_backends_and_settings(monkeypatch):
    with pytest.raises(BackendError, match="unknown device class 'coin'"):
        registry.create("coin", "x", "c")
    with pytest.raises(BackendError, match="unknown backend 'jcm'; backends are id003, ssp"):
        registry.create("bill_validator", "jcm", "v")
    monkeypatch.setitem(registry.BACKENDS, "test", {"rec": f"{__name__}:Recorder",
                                                    "missing": "drivers.nothing_here:X",
                                                    "notdevice": "logging:Logger"})
    dev = registry.create("test", "rec", "v", {"timeout": 2.0, "fail_open": False})
    assert isinstance(dev, Recorder) and dev.timeout == 2.0 and not dev.is_open
    with pytest.raises(BackendError, match=r"unknown setting\(s\) baud; settings are timeout"):
        registry.create("test", "rec", "v", {"baud": 9600})
    with pytest.raises(BackendError, match="timeout must be positive"):
        registry.create("test", "rec", "v", {"timeout": -1})
    with pytest.raises(BackendError, match="not built yet"):
        registry.create("test", "missing", "v")
    with pytest.raises(BackendError, match="is not a device backend"):
        registry.create("test", "notdevice", "v")
