"""The field update in ``egm run``: the composition root's meeting point of the terminal and
``firmware.update`` (docs/update.md), through either backend (``[update] backend``, or
``--update-dir DIR`` for the directory backend).

At power-up :meth:`UpdateWatch.power_up` records the running version, commits a trial that reached
attract with its self-tests passed and rolls back one whose self-test failed (on a partitioned
cabinet: ``rauc status mark-good``/``mark-bad``); a trial that powered up into a tilt is committed
at the terminal's first step in attract (the watch is the terminal's ``on_step``, handed in at
construction, chained to any other step such as the autoplay). Every update event goes into
critical memory through the ledger's ``event``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import IO, Any

from firmware.cabinet.states import CabinetState
from firmware.errors import EgmError
from firmware.update.backend import Backend

log = logging.getLogger(__name__)


class UpdateWatch:
    def __init__(self, backend: Backend, then: Callable[[Any], None] | None = None) -> None:
        self.backend = backend
        self.then = then                 #: the step it is chained to (the autoplay), or None
        self.waiting = False             #: a trial waits for attract

    def power_up(self, terminal: Any, failures: dict[str, str], out: IO[str]) -> str:
        try:
            verdict = self.backend.power_up(self_test_passed=not failures,
                                            at_attract=terminal.cabinet.state is CabinetState.IDLE)
            self.backend.flush(terminal.ledger.event)
        except EgmError as exc:
            # The game still runs: an uncommitted trial is rolled back by the bootloader's counter.
            log.error("update: %s", exc)
            out.write(f"update: unavailable ({exc})\n")
            return "unavailable"
        self.waiting = verdict == "trial"
        note = " (the self-test failed: the next boot runs the previous version)" if verdict == "rolled_back" else ""
        out.write(f"update: {verdict.replace('_', ' ')}{note}\n")
        return verdict

    def __call__(self, terminal: Any) -> None:
        if self.then is not None:
            self.then(terminal)
        if self.waiting and terminal.cabinet.state is CabinetState.IDLE:
            self.waiting = False
            try:
                committed = self.backend.attract_reached()
            except EgmError as exc:            # RAUC unreachable: the trial stays uncommitted
                log.error("update: the trial could not be committed: %s", exc)
                return
            if committed:
                self.backend.flush(terminal.ledger.event)
