"""A terminal with every device simulated and the player's screens, stepped together, driven
only through the touchscreen simulator (a finger -> the MicroTouch wire protocol -> the production
driver -> its calibration -> the terminal -> the screens' hit areas). Used by the acceptance
sessions of every game (tests/ui/test_acceptance*.py)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pygame

from firmware.cabinet.terminal import Devices, Terminal
from firmware.cashless.vouchers import VoucherBook
from firmware.config import Config
from firmware.config.schema import DEVICE_FIELDS
from firmware.ledger.ledger import Ledger
from firmware.rng.service import RngService
from firmware.ui.app import UiApp
from hal.calibration import fit, targets
from hal.registry import parse_spec
from sim_hardware.rig import SimRig
from sim_hardware.touch_microtouch import SENSOR

SIZE = (1280, 720)
FRAME = 1 / 30
BACCARAT_WAR: dict[str, Any] = {
    "enabled": ["baccarat-war"], "default": "baccarat-war", "seats": 1,
    "options": {"baccarat-war": {"war_wager": "optional", "pool": {"enabled": True, "dealer_ante": 10}}}}


class Session:
    """The terminal, its simulated devices and the screens, stepped together."""

    def __init__(self, tmp_path: Path, games: dict[str, Any] | None = None) -> None:
        """``games``: the configuration's ``[games]`` table (default: Baccarat War alone, WAR
        optional, the war pool on with a 10-credit house ante)."""
        w, h = SIZE
        # The touchscreen was calibrated on this display: three targets touched through its sensor.
        spots = targets(w, h)
        calibration = fit(spots, [SENSOR.raw(*p) for p in spots], w, h)
        self.cfg = Config.model_validate({
            "games": games or BACCARAT_WAR,
            "devices": {"bill_validator": "sim:id003", "printer": "sim:tcl", "touch": "sim:microtouch",
                        "shoe": "sim:shoe", "io_board": "sim:io",
                        "settings": {"touch": {"calibration": calibration.to_json()}}},
            "host": {"enabled": False},
        })
        specs = {slot: parse_spec(cls, getattr(self.cfg.devices, slot)) for slot, cls in DEVICE_FIELDS.items()}
        self.rig = SimRig(specs, self.cfg.devices.settings)
        devices = Devices(**{slot: self.rig.device(slot) for slot in specs})
        self.ledger = Ledger.open(tmp_path / "state")
        self.terminal = Terminal(self.cfg, self.ledger, RngService.seeded(5), devices,
                                 VoucherBook(self.ledger, terminal_id=self.cfg.terminal.id))
        self.terminal.power_up()
        self.app = UiApp(self.terminal, size=SIZE)
        self.frames = tmp_path / "frames"
        self.frames.mkdir()
        self.finger = self.rig.simulator("touch")
        self.step()

    def close(self) -> None:
        try:
            self.rig.close()
        finally:
            self.ledger.close()

    def step(self, dt: float = FRAME) -> None:
        self.app.step(dt)

    def until(self, predicate, what: str, timeout: float = 10.0, dt: float = FRAME) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; status {self.terminal.status()}")
            time.sleep(0.005)
            self.step(dt)

    def touch(self, name: str) -> None:
        """A finger on the centre of what the screen shows as ``name``, then lifted."""
        hit = self.app.frame.hit(name)
        x, y = self.app.scaler.point(*hit.rect.center)
        last = self.terminal.touches[-1] if self.terminal.touches else None
        self.finger.tap(x, y)
        self.until(lambda: self.terminal.touches and self.terminal.touches[-1] is not last
                   and self.terminal.touches[-1]["phase"] == "up", f"the touch on {name}")

    def save(self, name: str) -> Path:
        path = self.frames / f"{name}.png"
        pygame.image.save(self.app.surface, str(path))
        return path

    def texts(self, region: str) -> str:
        return " | ".join(self.app.frame.texts_in(region))




    def insert(self, dollars: int) -> None:
        """A note through the bill validator simulator, credited."""
        terminal = self.terminal
        before = terminal.status()["credits_cents"]
        self.until(lambda: terminal.status()["accepting_notes"], "the validator to take notes")
        validator = self.rig.simulator("bill_validator")
        self.until(lambda: validator.insert_note(dollars), "the validator to take the note", dt=0)
        self.until(lambda: terminal.status()["credits_cents"] == before + 100 * dollars, f"${dollars} credited")
        self.step()

    def stack_shoe(self, cards: list[str]) -> None:
        """The dealer loads ``cards`` into the card-reading shoe and draws them all (read, queued)."""
        shoe_sim, shoe = self.rig.simulator("shoe"), self.rig.device("shoe")
        shoe_sim.load(cards)
        drawn: list[str] = []
        self.until(lambda: (drawn.append(c) if (c := shoe_sim.draw()) is not None else None)
                   or len(drawn) == len(cards), "the dealer to draw the stacked cards")
        self.until(lambda: shoe.queued == len(cards), f"the shoe to read the {len(cards)} cards")

    def cash_out(self) -> Any:
        """CASH OUT touched; the voucher the simulated printer printed."""
        terminal = self.terminal
        printer = self.rig.simulator("printer")
        self.touch("button.cash_out")
        self.until(lambda: terminal.status()["last_ticket"] is not None and terminal.status()["state"] == "IDLE",
                   "the ticket printed")
        self.step()
        return printer.printed[-1].voucher()
