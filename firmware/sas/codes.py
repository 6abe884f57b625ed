"""SAS code tables the machine reports: denomination codes (0x1F, wager types) and bill codes
(0x48, the bill accepted event); docs/protocols/sas.md gives their sources."""

from __future__ import annotations

#: SAS denomination codes (0x1F's accounting denomination), by cents; SAS 6.02 table C-4 as
#: recalled (docs/protocols/sas.md): check against the standard.
DENOMINATION_CODES: dict[int, int] = {
    1: 0x01, 5: 0x02, 10: 0x03, 25: 0x04, 50: 0x05, 100: 0x06, 500: 0x07, 1000: 0x08, 2000: 0x09,
    10000: 0x0A, 20: 0x0B, 200: 0x0C, 250: 0x0D,
}

#: SAS bill denomination codes (0x48), by cents; recalled like the table above.
BILL_CODES: dict[int, int] = {
    100: 0x00, 500: 0x01, 1000: 0x02, 2000: 0x03, 5000: 0x04, 10000: 0x05, 50000: 0x06,
    100000: 0x07, 20000: 0x08,
}

#: The bill code of a note no code names.
UNKNOWN_BILL = 0xFF


def bill_code(cents: int) -> int:
    """The bill code of a note of ``cents`` (:data:`UNKNOWN_BILL` for a note the table lacks)."""
    return BILL_CODES.get(cents, UNKNOWN_BILL)
