"""A ticket to print: everything a ticket printer puts on the paper, validated, in plain values.

The firmware builds it from its voucher (``firmware.cashless.ticket``: the validation number's
printed form is the firmware's); a printer backend lays it out in its own template (the TCL one:
``drivers.tcl.voucher``) and its simulator reads one back from the paper.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from dataclasses import dataclass

#: The largest amount a ticket carries: $999,999.99 (what its amount in words can say).
MAX_TICKET_CENTS = 99_999_999
#: The digits of a validation number (printed readable and as a barcode).
VALIDATION_DIGITS = 18
_TEXT = re.compile(r"[ -\]_-{}~]*")     # printable ASCII without '^' and '|'


class TicketKind(enum.Enum):
    """What the ticket is worth to the player; the value is the line printed on it."""

    CASHABLE = "CASHOUT TICKET"
    RESTRICTED = "PLAYABLE ONLY"               #: restricted promotional credits
    NON_CASHABLE = "NON-CASHABLE PROMO"
    TEST = "TEST TICKET - VOID"                #: the service menu's printer test: worth nothing


def _text(value: str, what: str, longest: int, *, empty: bool = False) -> None:
    if not isinstance(value, str) or not _TEXT.fullmatch(value):
        raise ValueError(f"a voucher's {what} is printable ASCII without '^' or '|', not {value!r}")
    if len(value) > longest or (not empty and not value.strip()):
        raise ValueError(f"a voucher's {what} is 1..{longest} characters, not {value!r}")


@dataclass(frozen=True, slots=True)
class Ticket:
    """One TITO voucher as printed: every field on the paper."""

    venue: str
    address: tuple[str, ...]
    machine: str
    issued: dt.datetime                   #: local time of the cabinet, whole seconds
    amount_cents: int
    validation: str                       #: 18 digits, barcoded
    validation_text: str                  #: the same digits as printed readable (the firmware's format)
    sequence: int                         #: ticket number, 0..9999
    expiry_days: int                      #: 0: never expires
    kind: TicketKind = TicketKind.CASHABLE

    def __post_init__(self) -> None:
        _text(self.venue, "venue", 40)
        if not isinstance(self.address, tuple) or len(self.address) > 2:
            raise ValueError(f"a voucher has at most 2 address lines, not {self.address!r}")
        for line in self.address:
            _text(line, "address line", 40)
        _text(self.machine, "machine number", 20)
        if not isinstance(self.issued, dt.datetime) or self.issued.microsecond:
            raise ValueError(f"issued is a datetime in whole seconds, not {self.issued!r}")
        if (isinstance(self.amount_cents, bool) or not isinstance(self.amount_cents, int)
                or not 1 <= self.amount_cents <= MAX_TICKET_CENTS):
            raise ValueError(f"a voucher is worth 1..{MAX_TICKET_CENTS} cents, not {self.amount_cents!r}")
        if not (isinstance(self.validation, str) and self.validation.isascii()
                and self.validation.isdigit() and len(self.validation) == VALIDATION_DIGITS):
            raise ValueError(f"a validation number is {VALIDATION_DIGITS} digits, "
                             f"not {self.validation!r}")
        _text(self.validation_text, "printed validation number", 30)
        if "".join(c for c in self.validation_text if c.isdigit()) != self.validation:
            raise ValueError(f"the printed validation number {self.validation_text!r} is not "
                             f"{self.validation}")
        for name in ("sequence", "expiry_days"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9999:
                raise ValueError(f"a voucher's {name} is 0..9999, not {value!r}")
        if not isinstance(self.kind, TicketKind):
            raise ValueError(f"a voucher kind is a TicketKind, not {self.kind!r}")


#: The most lines a receipt has, and the longest line.
MAX_RECEIPT_LINES = 20
MAX_RECEIPT_LINE = 40


@dataclass(frozen=True, slots=True)
class Receipt:
    """A text receipt (not a voucher: no value, no validation number), such as the SAS AFT
    transaction receipt: ``key`` names it in the printer's events (``TicketPrinted.validation``),
    ``lines`` are printed one under the other, blank ones as space."""

    key: str
    lines: tuple[str, ...]

    def __post_init__(self) -> None:
        _text(self.key, "receipt key", 40)
        if self.key.isdigit():
            raise ValueError(f"a receipt key is not a number (vouchers have those), not {self.key!r}")
        if not isinstance(self.lines, tuple) or not 1 <= len(self.lines) <= MAX_RECEIPT_LINES:
            raise ValueError(f"a receipt has 1..{MAX_RECEIPT_LINES} lines, not {self.lines!r}")
        for line in self.lines:
            _text(line, "receipt line", MAX_RECEIPT_LINE, empty=True)


__all__ = ["MAX_RECEIPT_LINE", "MAX_RECEIPT_LINES", "MAX_TICKET_CENTS", "VALIDATION_DIGITS", "Receipt", "Ticket",
           "TicketKind"]
