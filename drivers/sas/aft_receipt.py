"""SAS AFT transaction receipts: long poll 0x75 (set AFT receipt data), the receipt data of a 0x72
request, and the receipt's lines.

* **0x75** (type M, answered ACK, or NACK for a body it refuses): data elements, each a code, a
  length and that many ASCII characters (at most 22); a length of 0 puts the element back to the
  machine's default. Codes: 00 location, 01 and 02 address lines, 10-13 in-house lines 1-4, 20-23
  debit lines 1-4. Layout, codes, the 22-character limit and NACK for an unknown code or a body
  cut short: the Aristocrat Monaco SAS client (``LP75SetAftReceiptDataParser`` and its test, whose
  frame, with its CRC, is a golden frame here; ``TransactionReceiptDataField``), quoting SAS 6.02
  table 8.11.1b. Refusing characters outside printable ASCII is this machine's choice (recall).
* **0x72 receipt data** (SAS 6.02 table 8.3f as Monaco's ``ReceiptField`` and parser give it):
  elements code, length, data; this machine prints 00 transfer source / destination (ASCII, at
  most 22), 10 patron name (ASCII, at most 22) and 11 patron account number (ASCII, at most 16), and
  checks the sizes of 01 date and time (7 BCD), 13 account balance, 42 fee, 43 total debit (5 BCD)
  and 41 debit card (2 BCD) without printing them.
* **The receipt**: the lines of the SAS receipt (Monaco's ``SasAftReceiptCreator`` lists SAS's
  24 lines: location, address, transfer description, source, date and time, asset number, patron,
  account, transaction ID, amount, in-house lines), without the blank spacer lines, for in-house
  transfers. The wording of the labels is this machine's own.
"""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Self


class ReceiptText(enum.IntEnum):
    """0x75 data codes: the receipt texts the host sets."""

    LOCATION = 0x00
    ADDRESS1 = 0x01
    ADDRESS2 = 0x02
    IN_HOUSE1 = 0x10
    IN_HOUSE2 = 0x11
    IN_HOUSE3 = 0x12
    IN_HOUSE4 = 0x13
    DEBIT1 = 0x20
    DEBIT2 = 0x21
    DEBIT3 = 0x22
    DEBIT4 = 0x23


#: The longest text of a 0x75 element (and of the 0x72 source and patron name).
MAX_RECEIPT_TEXT = 22
#: 0x72 receipt data codes (table 8.3f) and the sizes (bytes) each may have.
TRANSFER_FIELDS: dict[int, range] = {
    0x00: range(0, 23), 0x01: range(7, 8), 0x10: range(0, 23), 0x11: range(0, 17),
    0x13: range(5, 6), 0x41: range(2, 3), 0x42: range(5, 6), 0x43: range(5, 6),
}
#: The 0x72 receipt data printed: code -> name.
PRINTED_FIELDS = {0x00: "source", 0x10: "patron", 0x11: "account"}


def _printable(raw: bytes) -> bool:
    return all(0x20 <= b < 0x7F for b in raw)


def _elements(data: bytes) -> list[tuple[int, bytes]]:
    """code, length, data elements; ValueError when one is cut short."""
    out, at = [], 0
    while at < len(data):
        if at + 2 > len(data) or at + 2 + data[at + 1] > len(data):
            raise ValueError(f"receipt data element at byte {at} is cut short")
        out.append((data[at], data[at + 2 : at + 2 + data[at + 1]]))
        at += 2 + data[at + 1]
    return out


@dataclass(frozen=True, slots=True)
class AftReceiptData:
    """0x75 request: the texts the host sets, by :class:`ReceiptText` code ("" = the default)."""

    texts: tuple[tuple[int, str], ...]

    def __post_init__(self) -> None:
        for code, text in self.texts:
            if code not in ReceiptText.__members__.values():
                raise ValueError(f"0x75: unknown receipt data code 0x{code:02X}")
            if len(text) > MAX_RECEIPT_TEXT or not (text.isascii() and _printable(text.encode("ascii"))):
                raise ValueError(f"0x75: a receipt text is 0-{MAX_RECEIPT_TEXT} printable ASCII "
                                 f"characters, not {text!r}")

    def encode(self) -> bytes:
        return b"".join(bytes((code, len(text))) + text.encode("ascii") for code, text in self.texts)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        """ValueError for fewer than 2 bytes, an element cut short, an unknown code, a text too
        long or not printable ASCII."""
        if len(data) < 2:
            raise ValueError(f"0x75 carries at least one element, not {len(data)} byte(s)")
        texts = []
        for code, raw in _elements(data):
            if not _printable(raw):
                raise ValueError(f"0x75: receipt text {raw!r} is not printable ASCII")
            texts.append((code, raw.decode("ascii")))
        return cls(tuple(texts))


def transfer_receipt_fields(data: bytes) -> dict[str, str]:
    """The printed texts of a 0x72 request's receipt data (``source``, ``patron``, ``account``);
    ValueError when an element is cut short, of the wrong size or not printable text."""
    printed: dict[str, str] = {}
    for code, raw in _elements(data):
        sizes = TRANSFER_FIELDS.get(code)
        if sizes is not None and len(raw) not in sizes:
            raise ValueError(f"0x72 receipt data 0x{code:02X} of {len(raw)} bytes")
        if code in PRINTED_FIELDS:
            if not _printable(raw):
                raise ValueError(f"0x72 receipt data 0x{code:02X} is not printable ASCII")
            printed[PRINTED_FIELDS[code]] = raw.decode("ascii")
    return printed


@dataclass(frozen=True, slots=True)
class TransferReceipt:
    """What one receipt shows: the transfer (amount in cents) and the texts the host gave."""

    to_machine: bool
    cents: int
    transaction_id: str
    when: dt.datetime
    asset_number: int
    texts: Mapping[int, str]            #: 0x75 texts by code (missing: blank)
    fields: Mapping[str, str]           #: the 0x72 receipt data (transfer_receipt_fields)

    def lines(self) -> tuple[str, ...]:
        """The receipt, one line each (no line longer than 40 characters)."""
        text = self.texts.get
        amount = f"${self.cents // 100:,}.{self.cents % 100:02d}"
        account = self.fields.get("account", "")
        return (
            text(ReceiptText.LOCATION, ""), text(ReceiptText.ADDRESS1, ""), text(ReceiptText.ADDRESS2, ""),
            "",
            "TRANSFER TO GAME" if self.to_machine else "TRANSFER FROM GAME",
            self.fields.get("source", ""),
            f"{self.when:%m/%d/%Y %H:%M:%S}",
            f"ASSET # {self.asset_number}",
            self.fields.get("patron", ""),
            f"ACCT: {account}" if account else "",
            f"ID {self.transaction_id}",
            f"{'CASH IN' if self.to_machine else 'CASH OUT'} {amount}",
            "",
            *(text(code, "") for code in (ReceiptText.IN_HOUSE1, ReceiptText.IN_HOUSE2,
                                           ReceiptText.IN_HOUSE3, ReceiptText.IN_HOUSE4)),
        )
