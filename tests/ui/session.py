"""A terminal with every device simulated and the player's screens, stepped together, driven
only through the touchscreen simulator (a finger -> the MicroTouch wire protocol -> the production
driver -> its calibration -> the terminal -> the screens' hit areas). Used by the acceptance
sessions of every game (tests/ui/test_acceptance*.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Seen:
    """A beat a session test waits for (:meth:`Session.watch`): its kind, the frame's name, the
    check made on it, and optionally a condition on the frame (the first war step with a result)."""

    kind: str
    frame: str
    check: Callable[[], None]
    when: Callable[[], bool] | None = None


class Session:
    """The terminal, its simulated devices and the screens, stepped together."""

    def __init__(self, tmp_path: Path, games: dict[str, Any] | None = None,
                 size: tuple[int, int] = SIZE) -> None:
        """``games``: the configuration's ``[games]`` table (default: Baccarat War alone, WAR
        optional, the war pool on with a 10-credit house ante); ``size``: the screen's."""
        w, h = size
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
        self.app = UiApp(self.terminal, size=size)
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

    def bet(self, touches: tuple[str, ...], wagers: dict[int, dict[str, int]], frame: str = "02-bets") -> None:
        """$20 in (the frame ``01-credited``), then chips and wager areas touched in order: the slip
        holds ``wagers`` and the BET meter their total (saved as ``frame``)."""
        self.insert(20)
        self.save("01-credited")
        assert "$20.00" in self.texts("meter.credit") and self.app.gui.name in self.texts("title")
        for name in touches:
            self.touch(name)
        assert self.app.slip.wagers == wagers
        self.save(frame)
        assert f"{sum(sum(b.values()) for b in wagers.values()):,} credits" in self.texts("meter.bet")

    def watch(self, *beats: Seen) -> None:
        """Show the round to its end; at the first frame of each beat in ``beats`` (its kind, and
        its ``when`` if given), save the frame under its name and run its check. Every one must
        have been seen."""
        seen: set[str] = set()
        while not self.app.playback.done:
            self.step(0.05)
            kind = self.app.playback.beat.kind
            for b in beats:
                if b.frame not in seen and b.kind == kind and (b.when is None or b.when()):
                    seen.add(b.frame)
                    self.save(b.frame)
                    b.check()
        missing = [b.frame for b in beats if b.frame not in seen]
        assert not missing, f"beats never shown: {missing}"

    def settle_and_cash_out(self, credits: int, settled: str, ticket: str, message: str = "") -> Any:
        """The round's end on screen (saved as ``settled``, saying ``message``), the meter at ``credits``, then CASH OUT
        by touch: the voucher (saved as ``ticket``) is exactly those credits (one cent each), the
        meter empty, the accounting identity holds."""
        from firmware.ledger.ledger import accounting_difference

        terminal = self.terminal
        self.step()
        self.save(settled)
        assert f"{credits:,} credits" in self.texts("meter.credit") and terminal.ledger.credits == credits
        assert message in self.texts("message")
        voucher = self.cash_out()
        self.save(ticket)
        assert voucher.amount_cents == credits and voucher.validation == terminal.status()["last_ticket"]
        assert terminal.ledger.credits == 0 and terminal.ledger.meters["ticket_out"] == credits
        assert accounting_difference(terminal.ledger.meters) == 0
        assert f"Please take your ticket ${credits / 100:,.2f}" in self.texts("message")
        return voucher

    def cash_out(self) -> Any:
        """CASH OUT touched; the voucher the simulated printer printed."""
        terminal = self.terminal
        printer = self.rig.simulator("printer")
        self.touch("button.cash_out")
        self.until(lambda: terminal.status()["last_ticket"] is not None and terminal.status()["state"] == "IDLE",
                   "the ticket printed")
        self.step()
        return printer.printed[-1].voucher()
