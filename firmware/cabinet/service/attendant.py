"""The attendant's actions: pay a handpay by hand, answer the player's call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.service.words import no_args

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi


def handpay(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "handpay")
    paid = api.terminal.attendant_handpay(attendant="attendant (service login)")
    return paid, f"handpay of {paid['paid']} credits ({paid['reason']})"


def call_cleared(api: ServiceApi, args: list[str]) -> tuple[Any, str]:
    no_args(args, "call-cleared")
    last_call = next((e for e in api.ledger.events(200)
                      if e.get("event") in ("attendant_called", "attendant_call_cleared")), None)
    waiting = last_call is not None and last_call["event"] == "attendant_called"
    api.ledger.event("attendant_call_cleared", waiting=waiting)
    return {"cleared": True, "was_waiting": waiting,
            "called_at": last_call["time"] if waiting and last_call else None}, \
        "call cleared" if waiting else "no call was waiting"
