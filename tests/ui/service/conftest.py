"""The service screens' tests: an in-process terminal with fake devices (``tests/cabinet/test_service``'s)
and a fake calibrated touchscreen, its service API installed with fast test PINs, and the service
app stepped frame by frame. Touches go through the touchscreen: the fake one emits ``Touch`` events
the terminal drains and hands to the app, exactly as a calibrated driver's."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from firmware.cabinet.service import ServiceApi
from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.ui.service.app import ServiceApp
from hal.devices.touch import Touchscreen
from hal.events import Touch, TouchPhase
from tests.cabinet.test_service import (
    HASHES,
    TEST_PINS,
    Clock,
    FakeIo,
    FakePrinter,
    FakeValidator,
    software_tree,
)

FRAME = 1 / 30


class FakeTouch(Touchscreen):
    """A calibrated touchscreen: a finger at screen pixel (x, y) is a ``Touch`` there."""

    def __init__(self) -> None:
        super().__init__("touch")
        self.calibration: Any = None

    def _open(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def touch_screen(self, x: float, y: float) -> None:
        self._emit(Touch("touch", round(x), round(y), TouchPhase.DOWN))
        self._emit(Touch("touch", round(x), round(y), TouchPhase.UP))


def build_terminal(state: Path, devices: Devices, *, credits_cents: int = 0, cfg: Config | None = None,
                   sas: Any = None, **api_kwargs: Any) -> SimpleNamespace:
    ledger = Ledger.open(state)
    clock = Clock()
    api_kwargs.setdefault("software_root", software_tree(state.parent / "sw"))
    api_kwargs.setdefault("par_cache_dir", state.parent / "par")
    terminal = Terminal(cfg or Config(), ledger, RngService.seeded(7), devices, VoucherBook(ledger, terminal_id="T1"),
                        service=lambda t: ServiceApi(t, pins=HASHES, clock=clock, **api_kwargs), sas=sas)
    api = terminal.service
    api.apply_stored_config()
    terminal.power_up()
    if credits_cents:
        ledger.bill_in(credits_cents)
    return SimpleNamespace(terminal=terminal, ledger=ledger, api=api, clock=clock, devices=devices)


@pytest.fixture
def rig(tmp_path):
    """``rig(credits_cents=..., size=..., app=..., cfg=...)``: a terminal and its service app (or the
    player's app, ``app=UiApp``, which hosts the menu in SERVICE)."""
    made: list[SimpleNamespace] = []

    def make(*, credits_cents: int = 0, size: tuple[int, int] = (1920, 1080), app: Any = ServiceApp,
             cfg: Config | None = None, sas: Any = None) -> SimpleNamespace:
        devices = Devices(bill_validator=FakeValidator(), printer=FakePrinter(), io_board=FakeIo(), touch=FakeTouch())
        r = build_terminal(tmp_path / f"state{len(made)}", devices, credits_cents=credits_cents, cfg=cfg, sas=sas)
        r.app = app(r.terminal, size=size)
        r.app.step(FRAME)
        made.append(r)
        return r

    yield make
    for r in made:
        r.ledger.close()


# --- driving the app -------------------------------------------------------------------------------
def settle(app: ServiceApp, frames: int = 3) -> None:
    for _ in range(frames):
        app.step(FRAME)


def until(app: ServiceApp, predicate, what: str, timeout: float = 5.0) -> None:
    """Step the app until ``predicate()`` (touches over a pty arrive on their own time)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout} s for {what}; page {app.menu.state.page}, "
                                 f"message {app.menu.state.message!r}")
        app.step(FRAME)
        time.sleep(0.002)


def centre(app: ServiceApp, name: str) -> tuple[int, int]:
    """The screen pixel of the centre of the named hit area of the frame on screen."""
    return app.scaler.point(*app.frame.hit(name).rect.center)


def touch(r: SimpleNamespace, name: str, frames: int = 3) -> None:
    """A finger on the named button, through the (calibrated) touchscreen, and the frames after it."""
    r.devices.touch.touch_screen(*centre(r.app, name))
    settle(r.app, frames)


def texts(app: ServiceApp, region: str) -> str:
    return " | ".join(app.frame.texts_in(region))


def actions(app: ServiceApp) -> set[str]:
    return {h.name for h in app.frame.hits}


def login(r: SimpleNamespace, role: str, pin: str | None = None) -> None:
    """Role button, the PIN on the keypad, ENTER: all by touch."""
    touch(r, f"role.{role}")
    for digit in pin if pin is not None else TEST_PINS[role]:
        touch(r, f"key.{digit}", frames=1)
    touch(r, "button.enter")
