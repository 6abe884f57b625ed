"""What the lab suite's money, voucher and communication tests read off the terminal under test.

Small readers over a :class:`~firmware.hil.target.Target` (its status, service meters, events and
tickets), a bounded wait, and the configuration the terminal runs (its note table, venue, terminal
id). Everything here reads the terminal itself, never a simulator's bookkeeping.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from firmware.config import Config, load_config
from firmware.hil.errors import TargetError
from firmware.hil.target import Target

T = TypeVar("T")


def config_of(cabinet: Target) -> Config:
    """The configuration the terminal under test was started with (its ``config_path``)."""
    return load_config(cabinet.config_path)


def until(check: Callable[[], T | None], *, timeout: float = 30.0, what: str = "the condition") -> T:
    """``check()`` again (every 0.1 s) until it returns something true; that value.
    TargetError naming ``what`` after ``timeout`` seconds (a check that raises TargetError counts
    as not yet)."""
    deadline = time.monotonic() + timeout
    last: object = None
    while True:
        try:
            value = check()
        except TargetError as exc:
            last = exc
        else:
            if value:
                return value
            last = value
        if time.monotonic() >= deadline:
            raise TargetError(f"{what}: not so within {timeout:g} s (last seen: {last!r})")
        time.sleep(0.1)


def meter_values(cabinet: Target) -> dict[str, Any]:
    """The service ``meters`` answer flattened: every meter, ``credits`` (cents) and, for each
    note value, ``bills.<cents>`` (notes stacked of that value)."""
    answer = cabinet.meters()
    meters = dict(answer["meters"])
    out: dict[str, Any] = {k: v for k, v in meters.items() if not isinstance(v, dict)}
    for cents, count in (meters.get("bills_in_by_denom") or {}).items():
        out[f"bills.{cents}"] = count
    out["credits"] = answer["credits"]                 # cents
    return out


def delta(after: dict[str, Any], before: dict[str, Any], name: str) -> int:
    """How much meter ``name`` moved (a meter not shown yet counts as 0)."""
    return int(after.get(name, 0)) - int(before.get(name, 0))


def last_seq(cabinet: Target) -> int:
    """The newest event's sequence number (0: none)."""
    events = cabinet.events(1)
    return int(events[0]["seq"]) if events else 0


def events_since(cabinet: Target, seq: int, event: str | None = None, last: int = 200) -> list[dict[str, Any]]:
    """The events logged after sequence ``seq`` (oldest first), only ``event`` ones if given."""
    found = [e for e in cabinet.events(last) if int(e.get("seq", 0)) > seq]
    return [e for e in reversed(found) if event is None or e.get("event") == event]


def tickets(cabinet: Target, last: int = 10) -> list[dict[str, Any]]:
    """The service ``tickets`` answer's vouchers, newest first."""
    vouchers: list[dict[str, Any]] = cabinet.service("tickets", str(last))["vouchers"]
    return vouchers


def tilt_names(status: dict[str, Any]) -> list[str]:
    return [str(t.get("tilt")) for t in status.get("tilts") or []]


def settle(cabinet: Target, *, timeout: float = 30.0) -> dict[str, Any]:
    """Until the cabinet is IDLE with nothing printing, no round open and the validator's escrow
    empty (two equal meter readings 0.3 s apart): the status then."""
    def quiet() -> dict[str, Any] | None:
        snap = cabinet.status()
        if snap.get("state") != "IDLE" or snap.get("printing") or snap.get("round"):
            return None
        first = meter_values(cabinet)
        time.sleep(0.3)
        return snap if meter_values(cabinet) == first else None

    return until(quiet, timeout=timeout, what="cabinet idle and quiet")


def cash_out_all(cabinet: Target) -> str | None:
    """Cash the credit meter out (a voucher) so the next test starts with none; its validation
    number, or None when there were no credits."""
    snap = settle(cabinet)
    if not snap.get("credits_cents"):
        return None
    cabinet.cashout()
    def printed() -> dict[str, Any] | None:
        snap = cabinet.status()
        return snap if snap["state"] == "IDLE" and not snap.get("printing") else None

    done = until(printed, timeout=60, what="the cash-out voucher printed")
    ticket = done.get("last_ticket")
    return str(ticket) if ticket else None


def backdated_voucher(state_dir: Path, cfg: Config, cents: int, *, days_ago: int) -> str:
    """With the terminal OFF: issue and print a voucher of ``cents`` from its credits in its own
    critical memory (``state_dir``), through its own voucher book whose clock reads ``days_ago``
    days back: what a cash-out that long ago would have left. Its validation number."""
    from firmware.cashless.vouchers import VoucherBook
    from firmware.ledger.ledger import Ledger

    then = dt.datetime.now(dt.UTC) - dt.timedelta(days=days_ago)
    with Ledger.open(state_dir, denomination=cfg.terminal.denomination) as ledger:
        book = VoucherBook(ledger, terminal_id=cfg.terminal.id, expiry_days=cfg.money.voucher_expiry_days,
                           offline_redemption=cfg.money.offline_redemption, clock=lambda: then)
        issued = book.issue(cents)
        book.printed(issued.validation)
    return issued.validation


def fresh(cabinet: Target, record: Any) -> dict[str, Any]:
    """A test's start: the cabinet IDLE with no credits, whatever an earlier test left (a handpay
    lockup is paid by the attendant, credits are cashed out; each noted in the report). The status then."""
    snap = cabinet.status()
    if snap.get("state") == "HANDPAY":
        record.note(f"the cabinet was in a handpay lockup at the start ({snap.get('handpay')}): paid by the attendant")
        cabinet.control("attendant_handpay", {})
        until(lambda: cabinet.status()["state"] == "IDLE", timeout=30, what="the cabinet IDLE after the handpay")
    if settle(cabinet).get("credits_cents"):
        record.note(f"{cabinet.status()['credits_cents']} cents on the credit meter at the start: cashed out")
        cash_out_all(cabinet)
    return settle(cabinet)
