"""The AFT transaction history, read from critical memory.

Every AFT transfer that moved money is one ledger record (``transfer_in`` / ``transfer_out``, its
reference the transaction ID), committed with its meter and credit change; its body keeps what the
0x72 reply reports (status, amounts, flags, date, the cumulative meter after it, its history buffer
position, the receipt data the host sent). The history buffer of SAS is the newest
:data:`~drivers.sas.aft.MAX_BUFFER_INDEX` of those records: nothing else is stored, so the buffer
after a power cut is exactly the one before it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from drivers.sas.aft import MAX_BUFFER_INDEX, ReceiptStatus
from drivers.sas.messages import AftTransferReply
from firmware.ledger.ledger import Ledger

#: The record kinds of transfers (every transfer the terminal makes is an AFT transfer).
KINDS = ("transfer_in", "transfer_out")


def sas_date(when: dt.datetime) -> tuple[int, int]:
    """(MMDDYYYY, HHMMSS) as SAS sends a date and a time."""
    return (when.month * 1_000_000 + when.day * 10_000 + when.year,
            when.hour * 10_000 + when.minute * 100 + when.second)


def reply_of(body: Mapping[str, Any], receipt: int = ReceiptStatus.NONE) -> AftTransferReply:
    """The 0x72 reply that reports the transfer recorded with ``body`` (``receipt``: its receipt
    status)."""
    return AftTransferReply(
        body["position"], body["status"], receipt, body["type"], body["cents"], 0, 0,
        body["flags"], body["asset"], body["reference"], body["date"], body["time"], body["expiration"],
        body["pool"], body["cumulative"], 0, 0)


class AftHistory:
    """The history buffer of ``ledger``'s AFT transfers (positions 1 to ``size``, then round again)."""

    def __init__(self, ledger: Ledger, size: int = MAX_BUFFER_INDEX) -> None:
        self._ledger = ledger
        self.size = size

    def next_position(self) -> int:
        """The buffer position of the next transfer."""
        done = sum(self._ledger.kind_counts.get(kind, 0) for kind in KINDS)
        return done % self.size + 1

    def _window(self) -> list[int]:
        return self._ledger.newest_of(KINDS, self.size)

    def newest(self) -> dict[str, Any] | None:
        """The body of the newest transfer, None before the first."""
        seqs = self._ledger.newest_of(KINDS, 1)
        return self._body(seqs[0]) if seqs else None

    def entry(self, index: int) -> dict[str, Any] | None:
        """The transfer at ``index``: 0x01-0x7F an absolute buffer position, 0x81-0xFF relative
        (0xFF the newest, 0xFE the one before, ...); None when the buffer holds none there."""
        newest = self.newest()
        if newest is None or index == 0 or index == 0x80 or (index < 0x80 and index > self.size):
            return None
        back = 0xFF - index if index > 0x80 else (newest["position"] - index) % self.size
        window = self._window()
        return self._body(window[-1 - back]) if back < len(window) else None

    def bodies(self) -> list[dict[str, Any]]:
        """The bodies of the transfers in the buffer, newest first."""
        return [self._body(seq) for seq in reversed(self._window())]

    def find(self, transaction_id: str) -> dict[str, Any] | None:
        """The transfer with this transaction ID still in the buffer, else None."""
        window = self._window()
        for record in reversed(self._ledger.records_for(transaction_id)):
            if record["kind"] in KINDS and window and record["seq"] >= window[0]:
                return dict(record["body"])
        return None

    def _body(self, seq: int) -> dict[str, Any]:
        return dict(self._ledger.log_record(seq)["body"])
