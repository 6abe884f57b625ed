"""Waiting on a live driver: collect its events until one matches, or until a condition holds."""

from __future__ import annotations

import time
from collections.abc import Callable

from hal.events import DeviceEvent


def collect(dev, until: Callable[[DeviceEvent], bool], timeout: float = 3.0) -> list[DeviceEvent]:
    """Events up to and including the first one ``until`` accepts (fails after ``timeout``)."""
    seen: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = dev.next_event(0.05)
        if event is not None:
            seen.append(event)
            if until(event):
                return seen
    raise AssertionError(f"timed out after {timeout} s; events so far: {seen}")


def wait_for(dev, kind: type, timeout: float = 5.0) -> DeviceEvent:
    """The first event of type ``kind`` (fails after ``timeout``)."""
    return collect(dev, lambda e: isinstance(e, kind), timeout)[-1]


def take(dev, n: int, timeout: float = 3.0) -> list[DeviceEvent]:
    """The next ``n`` events (fails after ``timeout``)."""
    out: list[DeviceEvent] = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        assert time.monotonic() < deadline, f"timed out; events so far: {out}"
        event = dev.next_event(0.05)
        if event is not None:
            out.append(event)
    return out


def wait_until(condition: Callable[[], bool], timeout: float = 3.0) -> None:
    """Poll ``condition`` until it holds (fails after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)
