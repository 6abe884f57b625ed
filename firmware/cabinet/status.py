"""The terminal's status document: what the screens, ``egm simctl status`` and the host see.

:class:`StatusReport` owns nothing but the published snapshot's making: it reads every part (the
cabinet, the ledger's meters, the round in progress, the printer, the validator, the devices, the
demo mode, the host link, the SAS port and the lab prompt) and changes none of them. :meth:`StatusReport.halted`
is the last snapshot once critical memory failed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.machine import Tilt
from firmware.cabinet.states import TiltSource
from firmware.kernel.round import RoundKernel

if TYPE_CHECKING:
    from firmware.cabinet.terminal import Terminal


class StatusReport:
    """The status of ``terminal``."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal

    def document(self) -> dict[str, Any]:
        t = self.t
        cabinet, rounds = t.cabinet, t.rounds
        kernel = rounds.kernel
        pending = cabinet.handpay_pending
        printing = t.cashout.printing
        return {
            "state": cabinet.state.name,
            "interrupted": cabinet.interrupted_state.name if cabinet.interrupted_state else None,
            "disabled_by": sorted(cabinet.disabled_by),
            "tilts": [self._tilt(tilt) for tilt in cabinet.active_tilts],
            "credits": t.ledger.credits,
            "credits_cents": t.ledger.credits_cents,
            "game": rounds.game_id,
            "bet": rounds.bet_unit,
            "round": None if kernel is None else self._round(kernel),
            "handpay": None if pending is None else {"credits": pending[0], "reason": pending[1].value},
            "printing": None if printing is None else printing.validation,
            "message": t.message,
            "accepting_notes": t.money_in.accepting,
            "demo": None if t.demo is None else t.demo.status(),
            "devices": {n: d.lifecycle.value for n, d in t.devices.items()},
            "rounds_played": rounds.rounds_played,
            "starting": rounds.starting,
            "last_ticket": t.cashout.last_ticket,
            "last_round": None if rounds.last_record is None else rounds.last_record.get("round_id"),
            "host": None if t.hostlink is None else t.hostlink.status(),
            "sas": None if t.sas is None else t.sas.status(),
            "lab": t.lab.status(),
            "table": None if t.table is None else t.table.status(),
        }

    def _tilt(self, tilt: Tilt) -> dict[str, Any]:
        """One active tilt; a device's also says where it is looked for (``port``)."""
        entry: dict[str, Any] = {"tilt": tilt.key, "reason": tilt.reason}
        if tilt.source in (TiltSource.DEVICE_DISCONNECTED, TiltSource.DEVICE_FAULT):
            port = self.t.devices.port(tilt.name.partition(".")[0])
            if port:
                entry["port"] = port
        return entry

    def _round(self, kernel: RoundKernel) -> dict[str, Any]:
        """The round in play: its decisions awaited (``pending``, each with the cards its player may
        see) and, while some are, the seats that have answered (``decided``)."""
        pending = kernel.pending()
        return {
            "round_id": kernel.round_id, "game": kernel.game.id, "phase": kernel.phase.value,
            "cards_dealt": kernel.cards_dealt,
            "dice": None if kernel.dice is None else list(kernel.dice),
            "decide_within_s": self.t.rounds.decision_clock.time_left(kernel),
            "pending": [{"seat": r.seat, "kind": r.kind, "actions": list(r.actions), "hint": r.hint,
                         "view": kernel.decision_view(r.seat)} for r in pending],
            "decided": [{"seat": seat, "action": action, "view": kernel.decision_view(seat)}
                        for seat, action in kernel.decisions] if pending else [],
        }

    def halted(self, reason: str, last: dict[str, Any]) -> dict[str, Any]:
        """The last snapshot, HALTED with ``reason`` (nothing more happens: no notes, no round)."""
        snapshot = dict(last or {})
        snapshot.update(state="HALTED", halted=reason, accepting_notes=False, starting=False)
        return snapshot
