"""Critical memory that cannot be written halts the cabinet: nothing more is recorded, so nothing
more may happen. The terminal's loop ends with the error, the bill validator is disabled (a note
taken now could not be credited), the published state is HALTED with the reason, and the player's
window (which outlives the terminal's thread in ``egm run``) shows the lockup and offers nothing."""

from __future__ import annotations

import sqlite3

import pytest

from firmware.ledger.errors import CriticalMemoryError
from firmware.ui.app import UiApp
from firmware.ui.demo import demo_config
from firmware.ui.messages import text
from tests.ui.service.conftest import FRAME


def fail_the_disk(monkeypatch) -> None:
    """From now on every write to critical memory fails as a dying disk does."""
    from firmware.ledger import store

    def failing(self, *args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store.Copy, "write", failing)


def test_a_failed_critical_memory_write_halts_the_terminal_and_locks_the_screen(rig, monkeypatch):
    r = rig(app=UiApp, credits_cents=500, cfg=demo_config(), size=(1280, 720))
    terminal = r.terminal
    assert r.devices.bill_validator.enabled is True and "button.deal" in r.app.frame.regions
    credits = terminal.ledger.credits
    fail_the_disk(monkeypatch)
    cashout = terminal.submit("cashout")            # the voucher's record cannot be written
    with pytest.raises(CriticalMemoryError, match="write failed"):
        terminal.run(idle_wait=0, until=lambda: cashout.done())
    assert isinstance(cashout.exception(timeout=0), CriticalMemoryError)
    assert terminal.halted and "write failed" in terminal.halted
    assert r.devices.bill_validator.enabled is False
    snapshot = terminal.snapshot
    assert snapshot["state"] == "HALTED" and snapshot["accepting_notes"] is False
    assert snapshot["credits"] == credits            # nothing was paid

    # The cabinet's window reads the last published state (the terminal's thread is gone).
    app = UiApp(terminal, size=(1280, 720), drive_terminal=False)
    app.step(FRAME)
    assert text("overlay.halted") in " ".join(app.frame.texts_in("overlay"))
    assert not app.betting
    assert not any(h.name in ("deal", "cash_out") for h in app.frame.hits)
