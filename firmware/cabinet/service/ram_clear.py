"""The technician's RAM clear: erase critical memory (no credits, no round), confirmed with a word
and a reason. The runner does it (``on_ram_clear``: stop, clear, restart)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from firmware.cabinet.service.audit import log_action
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.guards import round_open

if TYPE_CHECKING:
    from firmware.cabinet.service.api import ServiceApi

#: The word that confirms a RAM clear.
CLEAR_WORD = "CLEAR"


def ram_clear(api: ServiceApi, args: list[str]) -> tuple[Any, str | None]:
    t = api.terminal
    if not args or args[0] != CLEAR_WORD:
        raise ServiceError(f"a RAM clear erases every meter and all history: confirm with "
                           f"ram-clear {CLEAR_WORD} REASON...")
    reason = " ".join(args[1:]).strip()
    if not reason:
        raise ServiceError(f"a RAM clear needs a reason: ram-clear {CLEAR_WORD} REASON...")
    if t.ledger.credits_cents:
        raise ServiceError(f"the credit meter holds {t.ledger.credits} credits: cash out first")
    if round_open(t):
        raise ServiceError("a round is in progress")
    if api.on_ram_clear is None:
        raise ServiceError("RAM clear is done with `egm ledger clear` while the terminal is stopped")
    role = api.session.role if api.session else None
    log_action(api.ledger, role, "ram-clear", "ok", f"requested: {reason}")
    return api.on_ram_clear(reason), None          # the ledger may be reopened: log nothing after
