"""SSP bar-code tickets (TITO vouchers), both ends: the bar-code inhibit register and the answer
to GET_BARCODE_DATA. Sans-I/O, shared by the driver and the simulator.

SET_BARCODE_INHIBIT (0x26) + one byte, GET_BARCODE_INHIBIT (0x25) answers OK + that byte::

    bit 0: currency (bank notes)   0 = enabled, 1 = inhibited
    bit 1: bar-code tickets        0 = enabled, 1 = inhibited
    bits 2-7: set to 1 (this product's reading)

A unit starts (and restarts) with 0xFE: notes enabled, tickets inhibited.

GET_BARCODE_DATA (0x27) answers OK + the last valid ticket's data::

    status (1) | length n (1) | n bytes of bar-code data (ASCII)
    status: 0x00 no valid data, 0x01 ticket in escrow, 0x02 ticket stacked, 0x03 ticket rejected

Poll events: BARCODE_TICKET_VALIDATED (0xE5, a ticket waits in escrow: ask GET_BARCODE_DATA) and
BARCODE_TICKET_ACK (0xD1, the ticket passed a safe point in the stacker), neither with data.

Sources: the command and event codes are in ITL's own ``ssp_defines.h`` and in the ``ssp`` crate
0.5.4 (docs.rs); the register bits, the 0xFE default, the answer's layout and the status values are
the ``ssp`` crate's (``BarcodeCurrencyInhibit``, ``GetBarcodeDataResponse``,
``BarcodeTicketStatus``). See ``docs/protocols/ssp.md``, "Bar-code tickets".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

_CURRENCY_INHIBITED = 0x01
_TICKETS_INHIBITED = 0x02
_UNUSED_BITS = 0xFC

#: The register at power-up and after a reset: notes enabled, tickets inhibited.
POWER_UP_INHIBIT = bytes((_UNUSED_BITS | _TICKETS_INHIBITED,))
#: The bar-code data a GET_BARCODE_DATA answer holds at most (the answer fits one SSP packet).
MAX_BARCODE = 250


class TicketStatus(enum.IntEnum):
    """The first byte of a GET_BARCODE_DATA answer."""

    NO_VALID_DATA = 0x00
    IN_ESCROW = 0x01
    STACKED = 0x02
    REJECTED = 0x03


def barcode_inhibit(*, notes: bool, tickets: bool) -> bytes:
    """SET_BARCODE_INHIBIT data accepting ``notes`` and/or ``tickets``."""
    value = (_UNUSED_BITS | (0 if notes else _CURRENCY_INHIBITED)
             | (0 if tickets else _TICKETS_INHIBITED))
    return bytes((value,))


def accepts_notes(register: bytes) -> bool:
    return not register[0] & _CURRENCY_INHIBITED


def accepts_tickets(register: bytes) -> bool:
    return not register[0] & _TICKETS_INHIBITED


@dataclass(frozen=True, slots=True)
class BarcodeData:
    """A GET_BARCODE_DATA answer (the data after OK)."""

    status: int
    data: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.status <= 0xFF:
            raise ValueError(f"a ticket status is one byte, not {self.status}")
        if len(self.data) > MAX_BARCODE:
            raise ValueError(f"bar-code data holds at most {MAX_BARCODE} bytes")

    @property
    def digits(self) -> str | None:
        """The validation number if the data is one (ASCII digits only), else None."""
        if self.data and all(0x30 <= b <= 0x39 for b in self.data):
            return self.data.decode("ascii")
        return None


def encode_barcode_data(answer: BarcodeData) -> bytes:
    """The device's GET_BARCODE_DATA answer after OK."""
    return bytes((answer.status, len(answer.data))) + answer.data


def parse_barcode_data(data: bytes) -> BarcodeData:
    """A GET_BARCODE_DATA answer after OK; ``ValueError`` if it is cut short. Bytes after the
    announced length are ignored (this product's reading, as the ``ssp`` crate reads it)."""
    if len(data) < 2:
        raise ValueError(f"a bar-code data answer is at least 2 bytes, not {len(data)}")
    n = data[1]
    if len(data) < 2 + n:
        raise ValueError(f"bar-code data announces {n} bytes and carries {len(data) - 2}")
    return BarcodeData(data[0], bytes(data[2:2 + n]))
