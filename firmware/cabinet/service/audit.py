"""Every service request is logged: the critical-memory events of an action, a refusal and a
refused login, committed before the answer."""

from __future__ import annotations

from typing import Any, NoReturn

from firmware.cabinet.service.errors import ServiceError


def log_action(ledger: Any, role: str | None, action: str, result: str, detail: str) -> None:
    """A ``service_action`` event: the role, the action, ``ok``/``refused`` and a short detail."""
    ledger.event("service_action", role=role, action=action, result=result, detail=detail[:200])


def refuse(ledger: Any, role: str | None, action: str, detail: str) -> NoReturn:
    """Log ``action`` refused, then raise :class:`ServiceError` with why."""
    log_action(ledger, role, action, "refused", detail)
    raise ServiceError(detail)


def entry_refused(ledger: Any, role: str, detail: str) -> NoReturn:
    """Log a refused login (``service_entry``), then raise :class:`ServiceError` with why."""
    ledger.event("service_entry", role=role, result="refused", detail=detail[:200])
    raise ServiceError(detail)
