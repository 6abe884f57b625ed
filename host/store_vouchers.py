"""The host's voucher holds, on the caller's connection (the caller owns the transaction).

A voucher paid through the host is ``authorised`` for one terminal at a time (:func:`authorize`,
one conditional UPDATE) and given back (:func:`release`) when that terminal reports it returned
the ticket or abandoned the request. Both run inside the transaction that stores the report that
asks for them (``HostStore.record``), so a host that dies at any instant leaves the report and
its effect both stored or neither: the terminal's resend of a report not stored is then new, and
that of a stored one a duplicate whose effect is already there (docs/host-store.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.engine import Connection

from host.store_schema import voucher_terms, vouchers

#: voucher record states by which a terminal gives back a voucher the host authorised it to redeem
RELEASING = frozenset({"redeem_returned", "redeem_abandoned"})


@dataclass(frozen=True)
class Redemption:
    """The host's answer to "may this voucher be paid at this terminal?"."""

    approved: bool
    amount_cents: int   #: 0 when refused
    reason: str         #: "approved", or why not


def authorize(conn: Connection, validation: str, terminal: str, now: Callable[[], datetime]) -> Redemption:
    """``issued`` -> ``authorised`` held by ``terminal``, or already held by it (a retry, approved
    again); anything else refused with the reason (``HostStore.authorize_redemption``)."""
    v, terms = vouchers.c, voucher_terms.c
    host_only = (select(terms.validation)
                 .where(terms.validation == v.validation, terms.issued_by == v.issued_by,
                        terms.offline_redemption.is_(False))
                 .exists())
    claim = (update(vouchers)
             .where(v.validation == validation,
                    (v.issued_by == terminal) | host_only,
                    (v.state == "issued") | ((v.state == "authorised") & (v.held_by == terminal)))
             .values(state="authorised", held_by=terminal, authorised_at=now())
             .returning(v.amount_cents))
    for _ in range(3):
        amount = conn.execute(claim).scalar_one_or_none()
        if amount is not None:
            return Redemption(True, amount, "approved")
        row = conn.execute(select(v.state, v.held_by, v.issued_by)
                           .where(v.validation == validation)).first()
        if row is None:
            return Redemption(False, 0, "unknown voucher")
        if row.state == "issued" and row.issued_by != terminal and not conn.execute(
                select(host_only).select_from(vouchers).where(v.validation == validation)).scalar():
            return Redemption(False, 0, f"its issuer {row.issued_by} may pay it offline: "
                                        "redeemable there only")
        if row.state == "authorised":
            return Redemption(False, 0, f"being redeemed at {row.held_by}")
        if row.state == "redeemed":
            return Redemption(False, 0, "already redeemed")
        if row.state == "voided":
            return Redemption(False, 0, "voided")
        # "issued" again: its holder released it between the UPDATE and the SELECT
        # (PostgreSQL, READ COMMITTED: each statement sees the latest commits); claim again
    return Redemption(False, 0, "busy, try again")


def release(conn: Connection, validation: str, terminal: str) -> bool:
    """``authorised`` -> ``issued`` again, only if held by ``terminal``. True if it was released."""
    v = vouchers.c
    stmt = (update(vouchers)
            .where(v.validation == validation, v.state == "authorised", v.held_by == terminal)
            .values(state="issued", held_by=None, authorised_at=None))
    return conn.execute(stmt.returning(v.validation)).first() is not None
