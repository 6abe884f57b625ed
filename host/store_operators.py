"""The floor page's operators and what they did, in the host database (docs/floor-web.md).

:class:`Operators` keeps the ``operators`` table (name, role, argon2id password hash, disabled) and
appends to ``operator_log``. Passwords are hashed with argon2-cffi's :class:`PasswordHasher`
(argon2id, its RFC 9106 defaults); the password itself is never stored or logged.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from host.store import HostStore
from host.store_errors import HostStoreError
from host.store_queries import iso
from host.store_schema import OPERATOR_ROLES, TERMINAL_ID_MAX, TYPE_MAX, operator_log, operators

log = logging.getLogger(__name__)

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
PASSWORD_MIN = 10
PASSWORD_MAX = 1024
DETAIL_MAX = 2000

_hasher = PasswordHasher()
#: verified against when the name is unknown, so that a wrong name costs as long as a wrong password
_DUMMY_HASH = _hasher.hash("not a password of anyone")


@dataclass(frozen=True)
class Operator:
    name: str
    role: str
    disabled: bool
    created_at: str


def check_name(name: object) -> str:
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        raise HostStoreError(f"operator name {name!r}: 1-32 letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit")
    return name


def check_role(role: object) -> str:
    if role not in OPERATOR_ROLES:
        raise HostStoreError(f"operator role {role!r}: one of {', '.join(OPERATOR_ROLES)}")
    return str(role)


def check_password(password: object) -> str:
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise HostStoreError(f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters")
    return password


class Operators:
    """The operators of one host store (the store's own transactions)."""

    def __init__(self, store: HostStore, clock: Callable[[], datetime] | None = None) -> None:
        self._store = store
        self._clock = clock or (lambda: datetime.now(UTC))

    def add(self, name: str, role: str, password: str) -> Operator:
        """A new operator; :class:`HostStoreError` if the name is taken or anything is invalid."""
        check_name(name)
        check_role(role)
        hashed = _hasher.hash(check_password(password))
        now = self._clock()

        def work(conn: Connection) -> None:
            if conn.execute(select(operators.c.name).where(operators.c.name == name)).first():
                raise HostStoreError(f"operator {name} exists already")
            conn.execute(operators.insert().values(name=name, role=role, password_hash=hashed,
                                                   created_at=now, disabled=False))

        self._store.transaction(work, write=True)
        log.info("operator %s added as %s", name, role)
        return Operator(name, role, False, iso(now) or "")

    def set_disabled(self, name: str, disabled: bool) -> None:
        """Disable (or enable again) an operator: a disabled one cannot log in, and their open
        sessions stop working at their next request."""
        check_name(name)
        stmt = (update(operators).where(operators.c.name == name).values(disabled=disabled)
                .returning(operators.c.name))
        if self._store.transaction(lambda c: c.execute(stmt).first(), write=True) is None:
            raise HostStoreError(f"no operator {name}")

    def get(self, name: str) -> Operator | None:
        if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
            return None
        o = operators.c
        row = self._store.transaction(lambda c: c.execute(
            select(o.name, o.role, o.disabled, o.created_at).where(o.name == name)).first())
        return None if row is None else Operator(row.name, row.role, bool(row.disabled), iso(row.created_at) or "")

    def all(self) -> list[Operator]:
        o = operators.c
        rows = self._store.transaction(lambda c: c.execute(
            select(o.name, o.role, o.disabled, o.created_at).order_by(o.name)).all())
        return [Operator(r.name, r.role, bool(r.disabled), iso(r.created_at) or "") for r in rows]

    def authenticate(self, name: str, password: str) -> Operator | None:
        """The operator if ``password`` is theirs and they are not disabled, else None (a wrong name
        takes as long as a wrong password)."""
        found = None
        if isinstance(name, str) and NAME_RE.fullmatch(name) is not None:
            o = operators.c
            found = self._store.transaction(lambda c: c.execute(
                select(o.name, o.role, o.disabled, o.created_at, o.password_hash)
                .where(o.name == name)).first())
        try:
            _hasher.verify(found.password_hash if found else _DUMMY_HASH, str(password)[:PASSWORD_MAX])
        except (VerificationError, InvalidHashError):
            return None
        if found is None or found.disabled:
            return None
        return Operator(found.name, found.role, False, iso(found.created_at) or "")

    # --- the operator log ---------------------------------------------------------------------------

    def record(self, operator: str, role: str | None, action: str, terminal: str | None,
               detail: str, result: str) -> None:
        """Append one line to the operator log."""
        row = {"at": self._clock(), "operator": str(operator)[:TERMINAL_ID_MAX], "role": role,
               "action": action[:TYPE_MAX], "terminal": None if terminal is None else str(terminal)[:TERMINAL_ID_MAX],
               "detail": str(detail)[:DETAIL_MAX], "result": str(result)[:TYPE_MAX]}
        self._store.transaction(lambda c: c.execute(operator_log.insert().values(**row)), write=True)

    def log(self, *, terminal: str | None = None, last: int = 200) -> list[dict[str, Any]]:
        """The operator log, newest first (only ``terminal``'s lines if given)."""
        g = operator_log.c
        q = select(g.id, g.at, g.operator, g.role, g.action, g.terminal, g.detail, g.result)
        if terminal is not None:
            q = q.where(g.terminal == terminal)
        stmt = q.order_by(g.id.desc()).limit(max(1, int(last)))
        rows = self._store.transaction(lambda c: c.execute(stmt).all())
        return [{**r._mapping, "at": iso(r.at)} for r in rows]
