"""SAS code tables the machine reports: denomination codes (0x1F, wager types) and bill codes
(0x48, the bill accepted event); docs/protocols/sas.md gives their sources."""

from __future__ import annotations

#: SAS denomination codes (0x1F's accounting denomination), by cents; SAS 6.02 table C-4 as
#: recalled (docs/protocols/sas.md): check against the standard.
DENOMINATION_CODES: dict[int, int] = {
    1: 0x01, 5: 0x02, 10: 0x03, 25: 0x04, 50: 0x05, 100: 0x06, 500: 0x07, 1000: 0x08, 2000: 0x09,
    10000: 0x0A, 20: 0x0B, 200: 0x0C, 250: 0x0D,
}

#: SAS bill denomination codes (0x48, the bill accepted event 4F), by cents: the order the
#: Aristocrat Monaco SAS client gives (its ``Utilities`` bill table and its LP48 test: $10 is code
#: 03), docs/protocols/sas.md. Codes 00-0A are confirmed by that order; 0B ($1,000) follows it.
BILL_CODES: dict[int, int] = {
    100: 0x00, 200: 0x01, 500: 0x02, 1000: 0x03, 2000: 0x04, 2500: 0x05, 5000: 0x06, 10000: 0x07,
    20000: 0x08, 25000: 0x09, 50000: 0x0A, 100000: 0x0B,
}

#: The bill code of a note no code names.
UNKNOWN_BILL = 0xFF


def bill_code(cents: int) -> int:
    """The bill code of a note of ``cents`` (:data:`UNKNOWN_BILL` for a note the table lacks)."""
    return BILL_CODES.get(cents, UNKNOWN_BILL)
