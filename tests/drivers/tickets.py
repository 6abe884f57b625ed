"""Tickets for the printer tests: the hal print job, its readable validation number as the
firmware prints it (``firmware.cashless.validation.format_validation``)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from firmware.cashless.validation import format_validation
from hal.devices.ticket import Ticket, TicketKind


def ticket(venue: str, address: tuple[str, ...], machine: str, issued: dt.datetime,
           amount_cents: int, validation: str, sequence: int, expiry_days: int,
           kind: TicketKind = TicketKind.CASHABLE) -> Ticket:
    return Ticket(venue, address, machine, issued, amount_cents, validation,
                  format_validation(validation), sequence, expiry_days, kind)


def replace(base: Ticket, **changes: Any) -> Ticket:
    """``dataclasses.replace``, with the readable number following a new validation number."""
    if isinstance(changes.get("validation"), str):
        changes.setdefault("validation_text", format_validation(changes["validation"]))
    return dataclasses.replace(base, **changes)


#: The ticket most tests print.
VOUCHER = ticket("GOLDEN STAR CASINO", ("1 MAIN STREET", "RENO NV 89501"), "EGM-0042",
                 dt.datetime(2025, 3, 14, 13, 45, 9), 2050, "123456789012345678", 42, 30)
