"""One service session at a time: logins by role and PIN, lock-outs after wrong PINs, the idle
time-out, logout. Every login, refusal, logout and time-out is logged.

A login replaces the session before it (both logged); a session ends after ``session_timeout_s``
without a request. :data:`LOCKOUT_ATTEMPTS` wrong PINs in a row lock the role for :data:`LOCKOUT_S`
seconds (``service_lockout``); a login with a documented development PIN works and is logged
(``service_default_pin``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from firmware.cabinet.service.audit import entry_refused, log_action, refuse
from firmware.cabinet.service.errors import ServiceError
from firmware.cabinet.service.pins import ROLES, is_development_pin, parse_pin_hash, verify_pin
from firmware.cabinet.service.table import allowed

#: Wrong PINs in a row that lock a role, and for how long.
LOCKOUT_ATTEMPTS = 5
LOCKOUT_S = 60.0


@dataclass(slots=True)
class Session:
    role: str
    since: float
    last: float


class Sessions:
    """The session of one service API. ``pins``: role -> PIN hash (a role with none cannot log in);
    ``clock`` times sessions and lock-outs; ``on_end(session)`` runs before a session ends (the API
    ends the demo mode there)."""

    def __init__(self, ledger: Any, *, pins: Mapping[str, str], clock: Callable[[], float],
                 session_timeout_s: float, lockout_attempts: int, lockout_s: float,
                 on_end: Callable[[Session], None]) -> None:
        unknown = sorted(set(pins) - set(ROLES))
        if unknown:
            raise ServiceError(f"PINs for unknown role(s) {', '.join(unknown)}; roles are {', '.join(ROLES)}")
        for role, encoded in pins.items():
            try:
                parse_pin_hash(encoded)
            except ServiceError:
                raise ServiceError(f"the {role} PIN is not a PIN hash "
                                   "(pbkdf2_sha256$ITERATIONS$SALT_HEX$HASH_HEX)") from None
        if session_timeout_s <= 0 or lockout_s <= 0 or lockout_attempts < 1:
            raise ServiceError("session_timeout_s and lockout_s are positive, lockout_attempts at least 1")
        self.ledger = ledger
        self._pins = dict(pins)
        self.clock = clock
        self.session_timeout_s = session_timeout_s
        self.lockout_attempts = lockout_attempts
        self.lockout_s = lockout_s
        self._on_end = on_end
        self.session: Session | None = None
        self.ended: str | None = None               #: why the last session ended (for the next refusal)
        self._failures: dict[str, int] = {}
        self._locked_until: dict[str, float] = {}

    @property
    def role(self) -> str | None:
        """The role of the session, or None."""
        return self.session.role if self.session else None

    def login(self, role: str, pin: str) -> dict[str, Any]:
        """Open a session for ``role`` (replacing any other), or refuse and log why."""
        now = self.clock()
        if role not in ROLES:
            refuse(self.ledger, None, "login", f"unknown role {role[:20]!r}; roles are {', '.join(ROLES)}")
        self._check_lock(role, now)
        encoded = self._pins.get(role)
        if encoded is None:
            entry_refused(self.ledger, role, f"no PIN is configured for the {role} role ([service.pins])")
        if not verify_pin(pin, encoded):
            self._wrong_pin(role, now)
        self._failures.pop(role, None)
        default = is_development_pin(role, pin)
        if self.session is not None:
            self._end(f"replaced by a {role} login", action="logout")
        if default:
            self.ledger.event("service_default_pin", role=role)
        self.ledger.event("service_entry", role=role, result="ok", detail="login"
                          + (" with the development PIN" if default else ""))
        self.session = Session(role, now, now)
        self.ended = None
        answer: dict[str, Any] = {"role": role, "timeout_s": self.session_timeout_s,
                                  "allowed": [a.name for a in allowed(role)]}
        if default:
            answer["warning"] = f"the {role} PIN is the development default: change it ([service.pins])"
        return answer

    def _check_lock(self, role: str, now: float) -> None:
        """Refuse a locked role; a lock that has run out is lifted (and the count starts again)."""
        until = self._locked_until.get(role)
        if until is None:
            return
        if now < until:
            entry_refused(self.ledger, role, f"the {role} role is locked for {until - now:.0f} more s "
                                             f"after {self.lockout_attempts} wrong PINs")
        del self._locked_until[role]
        self._failures.pop(role, None)

    def _wrong_pin(self, role: str, now: float) -> NoReturn:
        count = self._failures.get(role, 0) + 1
        self._failures[role] = count
        if count >= self.lockout_attempts:
            self._locked_until[role] = now + self.lockout_s
            self._failures.pop(role, None)
            self.ledger.event("service_lockout", role=role, attempts=count, seconds=self.lockout_s)
            entry_refused(self.ledger, role, f"wrong PIN; the {role} role is locked for {self.lockout_s:g} s "
                                             f"after {count} wrong PINs in a row")
        entry_refused(self.ledger, role, f"wrong PIN ({self.lockout_attempts - count} more before the "
                                         f"{role} role locks)")

    def logout(self) -> dict[str, Any]:
        if self.session is None:
            refuse(self.ledger, None, "logout", "no one is logged in")
        role = self.session.role
        self._end("logout", action="logout")
        return {"logged_out": role}

    def expire(self) -> None:
        """End the session if it has been idle for ``session_timeout_s`` (logged)."""
        session = self.session
        if session is not None and self.clock() - session.last >= self.session_timeout_s:
            self._end(f"idle for {self.session_timeout_s:g} s", action="timeout")
            self.ended = f"the {session.role} session timed out"

    def info(self) -> dict[str, Any]:
        """The session: its role, how long it has lasted and been idle, its time-out."""
        session = self.session
        if session is None:
            return {"role": None, "ended": self.ended}
        now = self.clock()
        return {"role": session.role, "for_s": round(now - session.since, 1),
                "idle_s": round(now - session.last, 1), "timeout_s": self.session_timeout_s}

    def touch(self) -> None:
        """A request of the session's role: the idle time starts again."""
        assert self.session is not None
        self.session.last = self.clock()

    def _end(self, detail: str, *, action: str) -> None:
        session = self.session
        assert session is not None
        self._on_end(session)
        self.session = None
        log_action(self.ledger, session.role, action, "ok", detail)
