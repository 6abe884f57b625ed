"""AFT transaction receipts: the host's receipt texts (long poll 0x75) and the receipt of each
transfer whose request asked for one (0x72 flag 7), printed once, with its status in critical memory.

* **0x75** keeps the texts in the setting ``sas.aft.receipt_data`` (an empty text puts the line
  back to the machine's default: its venue and address for those lines, blank for the others); a body that does not parse is answered NACK and changes
  nothing (``drivers.sas.aft_receipt``).
* **Status** of a transfer's receipt, the setting ``sas.aft.receipt.<transaction ID>`` written at
  each step: none yet (the transfer record alone) = pending (0x40); ``printing`` (0x20) before the
  receipt is sent; ``printed`` (0x00) when the printer confirmed it; ``not_printed`` (0xFF) with the
  reason (no printer, paper out, jam ...). The 0x72 replies and interrogations read it.
* **Once across a power cut**: a receipt still pending at power-up (the transfer committed, the
  receipt never sent) is queued then and printed at the first AFT poll; one that was printing (sent, the printer's answer lost with
  the power) is reported not printed, and not sent again, so that no transfer ever has two
  receipts (the host still has the transfer's record).
* Receipts print one at a time, oldest first, when the printer is free: a receipt waiting for a
  voucher is sent at the next AFT poll (0x72 or 0x74) after it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Protocol

from drivers.sas.aft import ReceiptStatus, TransferFlag, TransferType
from drivers.sas.aft_receipt import AftReceiptData, TransferReceipt, transfer_receipt_fields
from firmware.ledger.ledger import Ledger
from firmware.sas.aft_history import AftHistory
from firmware.sas.responder import PollRefused

DATA_SETTING = "sas.aft.receipt_data"
STATUS_SETTING = "sas.aft.receipt."
#: Status in critical memory -> what the 0x72 reply says.
STATUS_CODES = {"printing": ReceiptStatus.PRINTING, "printed": ReceiptStatus.PRINTED,
                "not_printed": ReceiptStatus.NONE}
#: Why a receipt sent before a power cut is not sent again.
LOST_IN_POWER_CUT = "power lost while printing: not printed again, so that no transfer has two receipts"


class ReceiptCabinet(Protocol):
    """What receipts need of the cabinet (implemented in ``firmware/cabinet/sas_aft.py``)."""

    def receipt_refusal(self) -> str | None:
        """Why no receipt can be printed now (no printer, paper out, ...), or None."""
        ...

    def printer_busy(self) -> bool:
        """The printer is printing something else: a receipt waits."""
        ...

    def receipt_texts(self) -> dict[int, str]:
        """The machine's own receipt texts by 0x75 code (its location, address), used until the
        host sets them."""
        ...

    def print_receipt(self, key: str, lines: tuple[str, ...], done: Callable[[str | None], None]) -> None:
        """Print ``lines``; call ``done(None)`` once printed, ``done(reason)`` if not (maybe at once)."""
        ...


def _wanted(body: Mapping[str, Any]) -> bool:
    return bool(body["flags"] & TransferFlag.RECEIPT_REQUEST)


class AftReceipts:
    """The receipts of ``ledger``'s AFT transfers, printed through ``cabinet``."""

    def __init__(self, ledger: Ledger, cabinet: ReceiptCabinet, history: AftHistory, asset_number: int) -> None:
        self._ledger = ledger
        self._cabinet = cabinet
        self._history = history
        self.asset_number = asset_number
        self._sending: str | None = None            #: the transaction whose receipt is printing
        self._queue: list[dict[str, Any]] = []      #: transfer bodies whose receipt waits, oldest first
        for body in reversed([b for b in history.bodies() if _wanted(b)]):
            saved = self._saved(body)
            if saved is None:
                self._queue.append(body)
            elif saved["status"] == "printing":
                self._store(body, "not_printed", LOST_IN_POWER_CUT)

    # --- 0x75 ----------------------------------------------------------------------------------
    def set_data(self, data: bytes) -> bytes:
        """0x75: keep the texts (ACK); NACK for a body that does not parse, nothing changed."""
        try:
            request = AftReceiptData.decode(data)
        except ValueError as exc:
            raise PollRefused(f"0x75: {exc}") from None
        texts = dict(self._ledger.setting(DATA_SETTING) or {})
        for code, text in request.texts:
            if text:
                texts[f"{code:02X}"] = text
            else:
                texts.pop(f"{code:02X}", None)
        self._ledger.store_setting(DATA_SETTING, texts)
        return b"\x00"

    def texts(self) -> dict[int, str]:
        """The receipt texts by 0x75 code: the host's, else the machine's own."""
        saved = self._ledger.setting(DATA_SETTING) or {}
        return {**self._cabinet.receipt_texts(), **{int(code, 16): text for code, text in saved.items()}}

    # --- each transfer's receipt ---------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why a transfer asking for a receipt is refused now (0x90), or None."""
        return self._cabinet.receipt_refusal()

    def status(self, body: Mapping[str, Any]) -> ReceiptStatus:
        """The receipt status of the transfer recorded with ``body``, from critical memory."""
        if not _wanted(body):
            return ReceiptStatus.NONE
        saved = self._saved(body)
        return ReceiptStatus.PENDING if saved is None else STATUS_CODES[saved["status"]]

    def reason(self, body: Mapping[str, Any]) -> str | None:
        """Why the transfer's receipt was not printed, if it was not."""
        saved = self._saved(body)
        return saved.get("reason") if saved else None

    def after_transfer(self, body: Mapping[str, Any]) -> None:
        """A transfer was committed: print its receipt if its request asked for one."""
        if _wanted(body):
            self._queue.append(dict(body))
        self.kick()

    def kick(self) -> None:
        """Send the oldest waiting receipt if the printer is free."""
        while self._queue and self._sending is None and not self._cabinet.printer_busy():
            body = self._queue[0]
            why = self._cabinet.receipt_refusal()
            if why is not None:
                self._queue.pop(0)
                self._store(body, "not_printed", why)
                continue
            self._store(body, "printing")
            self._sending = body["reference"]
            self._cabinet.print_receipt(f"AFT receipt {body['position']}", self.lines(body),
                                        partial(self._done, body))

    def lines(self, body: Mapping[str, Any]) -> tuple[str, ...]:
        """The receipt of the transfer recorded with ``body``."""
        date, clock = body["date"], body["time"]
        when = dt.datetime(date % 10_000, date // 1_000_000, date // 10_000 % 100,
                           clock // 10_000, clock // 100 % 100, clock % 100)
        return TransferReceipt(body["type"] == TransferType.IN_HOUSE_TO_MACHINE, body["cents"], body["reference"],
                               when, self.asset_number, self.texts(),
                               transfer_receipt_fields(bytes.fromhex(body["receipt_data"]))).lines()

    def _done(self, body: Mapping[str, Any], reason: str | None) -> None:
        self._sending = None
        if self._queue and self._queue[0]["reference"] == body["reference"]:
            self._queue.pop(0)
        self._store(body, "printed" if reason is None else "not_printed", reason)
        self.kick()

    def _store(self, body: Mapping[str, Any], status: str, reason: str | None = None) -> None:
        value = {"status": status, "position": body["position"], "date": body["date"], "time": body["time"]}
        self._ledger.store_setting(STATUS_SETTING + body["reference"],
                                   value if reason is None else {**value, "reason": reason})

    def _saved(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        saved = self._ledger.setting(STATUS_SETTING + body["reference"])
        same = saved is not None and all(saved[k] == body[k] for k in ("position", "date", "time"))
        return saved if same else None
