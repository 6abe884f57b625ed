"""Who may do what on the floor page, checked on the server for every route (docs/floor-web.md).

* :data:`PERMISSIONS`: each role's permissions; a route asks for one with :func:`require`.
* The signed session (Starlette's ``SessionMiddleware``) holds the operator's name, role and CSRF
  token; the operator is read from the database again on every request, so disabling one (or
  changing their role) takes effect at their next click.
* :func:`check_csrf`: every POST form carries the session's token.
* :class:`LoginThrottle`: after a few failed logins for a name, or from an address, each further
  attempt waits longer.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import HTTPException, Request

from host.store_operators import Operator

log = logging.getLogger(__name__)

PERMISSIONS: dict[str, frozenset[str]] = {
    "attendant": frozenset({"view", "vouchers", "send_meters"}),
    "floor-manager": frozenset({"view", "vouchers", "send_meters", "disable", "enable", "set_time"}),
    "auditor": frozenset({"view", "vouchers", "operator_log"}),
}
ROLE_TITLES = {"attendant": "Attendant", "floor-manager": "Floor manager", "auditor": "Auditor"}


class LoginRequired(Exception):
    """No (valid) session: pages redirect to the login page, fragments answer 401."""


def csrf_token(request: Request) -> str:
    """The session's CSRF token (made on first use)."""
    token = request.session.get("csrf")
    if not isinstance(token, str) or len(token) < 32:
        token = secrets.token_urlsafe(32)
        request.session["csrf"] = token
    return token


def check_csrf(request: Request, sent: str | None) -> None:
    """403 unless ``sent`` is the session's CSRF token."""
    token = request.session.get("csrf")
    if not (isinstance(token, str) and isinstance(sent, str) and hmac.compare_digest(token, sent)):
        raise HTTPException(status_code=403, detail="the form's security token is missing or out of date: reload the page")


def current_operator(request: Request) -> Operator:
    """The logged-in operator, as the database knows them now; :class:`LoginRequired` otherwise."""
    name = request.session.get("operator")
    operator: Operator | None = request.app.state.operators.get(name) if isinstance(name, str) else None
    if operator is None or operator.disabled or operator.role != request.session.get("role"):
        if name is not None:
            request.session.pop("operator", None)
            request.session.pop("role", None)
        raise LoginRequired()
    return operator


def require(permission: str) -> Callable[[Request], Operator]:
    """A FastAPI dependency: the operator, if their role has ``permission``; 403 (logged) if not."""

    def dependency(request: Request) -> Operator:
        operator = current_operator(request)
        if permission not in PERMISSIONS.get(operator.role, frozenset()):
            terminal = request.path_params.get("terminal")
            request.app.state.operators.record(operator.name, operator.role, "forbidden", terminal,
                                               f"{request.method} {request.url.path}", "refused")
            raise HTTPException(status_code=403, detail=f"a {ROLE_TITLES.get(operator.role, operator.role).lower()} "
                                                        f"may not do this ({permission.replace('_', ' ')})")
        return operator

    return dependency


def can(operator: Operator, permission: str) -> bool:
    return permission in PERMISSIONS.get(operator.role, frozenset())


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0


class LoginThrottle:
    """Failed logins per key (a name, an address): the first ``free`` cost nothing, then each
    further attempt must wait ``base * 2^(n - free)`` seconds after the last failure, at most
    ``cap``. A success clears the name's count. Kept in memory: a restart forgets it."""

    def __init__(self, free: int = 3, base: float = 1.0, cap: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.free, self.base, self.cap, self._clock = free, base, cap, clock
        self._failures: dict[str, _Failures] = {}
        self._lock = threading.Lock()

    def wait(self, *keys: str) -> float:
        """Seconds before another attempt for any of ``keys`` is allowed (0: now)."""
        now = self._clock()
        with self._lock:
            waits = [self._delay(f) - (now - f.last) for k in keys if (f := self._failures.get(k))]
        return max([0.0, *waits])

    def failed(self, *keys: str) -> None:
        now = self._clock()
        with self._lock:
            if len(self._failures) > 10_000:             # bounded memory under a flood of names
                self._failures.clear()
            for k in keys:
                f = self._failures.setdefault(k, _Failures())
                f.count, f.last = f.count + 1, now

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def _delay(self, f: _Failures) -> float:
        if f.count < self.free:
            return 0.0
        return float(min(self.cap, self.base * 2 ** (f.count - self.free)))


def client_address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def session_operator(request: Request, operator: Operator) -> None:
    """Log ``operator`` in: a fresh session (new CSRF token), nothing kept from before."""
    request.session.clear()
    request.session.update({"operator": operator.name, "role": operator.role,
                            "csrf": secrets.token_urlsafe(32)})


def describe(operator: Operator) -> dict[str, Any]:
    return {"name": operator.name, "role": operator.role, "title": ROLE_TITLES.get(operator.role, operator.role)}
