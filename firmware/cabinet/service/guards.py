"""The cabinet state rules of the service actions: when a device or configuration action may run,
and whether a round is open."""

from __future__ import annotations

from typing import Any

from firmware.cabinet.states import CabinetState as S


def change_blocked(terminal: Any) -> str | None:
    """Why a ``device`` or ``config`` action may not run now, or None: it needs the technician's key
    (SERVICE), or IDLE with no credits and no round."""
    t = terminal
    if getattr(t, "memory_locked", False):
        return None          # critical memory failed at power-up: nothing plays, nothing takes money
    state = t.cabinet.state
    if state is S.SERVICE:
        return None
    if state is not S.IDLE:
        return f"the cabinet is {state.name}"
    if t.ledger.credits_cents:
        return f"the credit meter holds {t.ledger.credits} credits"
    if t.kernel is not None or t.starting or t.ledger.open_round is not None or t.ledger.table_bets:
        return "a round is in progress"
    return None


def round_open(terminal: Any) -> bool:
    """Whether a round is in progress (or being started, or open in critical memory, or a live
    table's bet is open)."""
    t = terminal
    return (t.cabinet.round_in_progress or t.kernel is not None or t.starting
            or t.ledger.open_round is not None or bool(t.ledger.table_bets))
