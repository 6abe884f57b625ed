"""The load test's simulator thread (``worker.py``'s ``Worker._run``) steps a terminal when its next
report is due, not only at the sweep: with stand-in terminals and a sweep of 3 s, so a step between
sweeps can only come from the due times the thread keeps."""

from __future__ import annotations

import threading
import time
from collections import deque
from types import SimpleNamespace

import pytest

from egmproto.mqtt_loop import SharedLoop
from firmware.commands._loadtest import worker as worker_module
from firmware.commands._loadtest.worker import Worker

GAP = 0.1


class Paced:
    """A terminal whose every step makes its due report and sets the next one GAP later."""

    def __init__(self) -> None:
        self.link = SimpleNamespace(session_open=True, behind=None)
        self.on_wake = lambda _t: None
        self.steps: list[float] = []
        self.next_due = float("inf")

    def start(self) -> None:
        pass

    def step(self) -> None:
        now = time.monotonic()
        self.steps.append(now)
        if self.next_due <= now:
            self.next_due = now + GAP


def _worker() -> Worker:
    worker = Worker.__new__(Worker)                   # no terminals of its own: the stand-ins run
    worker.stop, worker.errors, worker.paces, worker.loop_ms = threading.Event(), 0, 0, deque()
    return worker


def test_a_terminal_is_stepped_when_its_report_is_due_between_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "SWEEP_S", 3.0)
    worker, idle, paced = _worker(), Paced(), Paced()
    thread = threading.Thread(target=worker._run, args=([idle, paced],), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while len(paced.steps) < 1 and time.monotonic() < deadline:   # the first sweep
            time.sleep(0.01)
        paced.next_due = time.monotonic() + GAP      # go: the main thread sets the pace...
        worker.paces += 1                            # ...and says so
        idle.on_wake(idle)                           # anything wakes the thread (an ack)
        time.sleep(1.0)
    finally:
        worker.stop.set()
        thread.join(5)
    after_go = paced.steps[1:]
    # about one step per GAP; from the sweep alone it would be none (the next sweep is 3 s away),
    # and a due time not read again after its step would be stepped over and over
    assert 4 <= len(after_go) <= 1.0 / GAP + 5, paced.steps
    assert len(idle.steps) <= 3                      # the first sweep and its wake-up: nothing due


def test_on_the_network_loop_a_terminal_is_stepped_on_its_thread_when_due_and_when_woken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(worker_module, "SWEEP_S", 3.0)
    worker, idle, paced = _worker(), Paced(), Paced()
    worker.kicks, worker.loop = [], SharedLoop("egm-test-sim")
    threads: set[str] = set()
    stepped = paced.step

    def step() -> None:
        threads.add(threading.current_thread().name)
        stepped()

    paced.step = step                                 # type: ignore[method-assign]
    try:
        worker.loop.call_soon(worker._on_loop, [idle, paced])
        deadline = time.monotonic() + 5
        while len(paced.steps) < 1 and time.monotonic() < deadline:   # the first sweep
            time.sleep(0.01)
        paced.next_due = time.monotonic() + GAP
        worker.paces += 1
        worker._ring()                                # the main thread's change: a turn now
        time.sleep(1.0)
        woken = len(idle.steps)
        worker.loop.call_soon(idle.on_wake, idle)     # the link wakes a terminal (on the loop)
        time.sleep(0.2)
        assert len(idle.steps) == woken + 1
    finally:
        worker.stop.set()
        worker.loop.close()
    after_go = paced.steps[1:]
    assert 4 <= len(after_go) <= 1.2 / GAP + 5, paced.steps
    assert threads == {"egm-test-sim"}
