"""The ``rng`` simulator control of a simulated cabinet (``egm run --sim``; ``egm simctl rng ...``).

The words, run on the terminal's thread like every control (``firmware.cabinet.control``)::

    rng entropy stuck   the raw entropy source returns one constant byte from now on
    rng entropy ok      the source is the OS's again
    rng reseed          reseed the RNG now (a reseed is otherwise due every [rng] reseed_interval)

A stuck source is noticed where SP 800-90B puts the test: the next time the RNG reads entropy, at
its next reseed (forced here, or due) the repetition count test fails, the cabinet records an
``rng_failure`` event and goes to its RNG tilt; the technician's ``service clear-tilt rng:drbg``
passes only once a fresh health-tested instantiation succeeds, i.e. once the source is ``ok``
again (``firmware.cabinet.supervision``, ``docs/rng.md``).

The source is :class:`~firmware.rng.switchable.SwitchableSource`, which only the simulated cabinet
is built with; the simulator rig (``sim_hardware.rig``) offers this control beside its devices'
without knowing the firmware (:meth:`~sim_hardware.rig.SimRig.add_control`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from firmware.errors import UsageError
from firmware.rng.switchable import SwitchableSource

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal

USAGE = "usage: rng entropy stuck|ok | rng reseed"


class SimRng:
    """The ``rng`` control of ``terminal``, whose RNG reads ``source``."""

    def __init__(self, terminal: Terminal, source: SwitchableSource) -> None:
        if terminal.entropy_source is not source:
            raise ValueError("the terminal's entropy source is not the one the rng control switches")
        self.terminal = terminal
        self.source = source

    def control(self, words: Sequence[str]) -> dict[str, Any]:
        """``words`` without the leading ``rng``."""
        match list(words):
            case ["entropy", "stuck"]:
                self.source.stick()
                self.terminal.ledger.event("sim_entropy", source="stuck")
                return {"entropy": "stuck"}
            case ["entropy", "ok"]:
                self.source.unstick()
                self.terminal.ledger.event("sim_entropy", source="ok")
                return {"entropy": "ok"}
            case ["reseed"]:
                return {**self.terminal.supervision.reseed_rng(),
                        "entropy": "stuck" if self.source.stuck else "ok"}
        raise UsageError(USAGE)
