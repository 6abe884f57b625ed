"""The field update in ``egm run --update-dir``: the composition root's meeting point of the
terminal and ``firmware.update`` (docs/update.md).

At power-up :meth:`UpdateWatch.power_up` records the running version, commits a trial that reached
attract with its self-tests passed and rolls back one whose self-test failed; a trial that powered
up into a tilt is committed at the terminal's first step in attract (the watch is the terminal's
``on_step``, handed in at construction, chained to any other step such as the autoplay). Every
update event goes into critical memory through the ledger's ``event``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, Any

from firmware.cabinet.states import CabinetState
from firmware.update.boot import attract_reached, power_up_report
from firmware.update.journal import flush
from firmware.update.slots import SlotStore


class UpdateWatch:
    def __init__(self, update_dir: str, then: Callable[[Any], None] | None = None) -> None:
        self.store = SlotStore(update_dir)
        self.then = then                 #: the step it is chained to (the autoplay), or None
        self.waiting = False             #: a trial waits for attract

    def power_up(self, terminal: Any, failures: dict[str, str], out: IO[str]) -> str:
        verdict = power_up_report(self.store, self_test_passed=not failures,
                                  at_attract=terminal.cabinet.state is CabinetState.IDLE)
        flush(self.store, terminal.ledger.event)
        self.waiting = verdict == "trial"
        note = " (the self-test failed: the next boot runs the previous version)" if verdict == "rolled_back" else ""
        out.write(f"update: {verdict.replace('_', ' ')}{note}\n")
        return verdict

    def __call__(self, terminal: Any) -> None:
        if self.then is not None:
            self.then(terminal)
        if self.waiting and terminal.cabinet.state is CabinetState.IDLE:
            self.waiting = False
            if attract_reached(self.store):
                flush(self.store, terminal.ledger.event)
