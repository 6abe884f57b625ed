"""Secure-enhanced validation: the validation ID and sequence (0x4C), the numbers printed on the
cash-out tickets, and the validation records the host reads back (0x4D).

Critical memory holds everything (docs/protocols/sas.md, "TITO"):

- the setting ``sas.tito.validation_id``: the ID the host set, the last sequence used, and what the
  host last sent (a 0x4C repeating it does not move the sequence back, SAS 6.02 section 15.6);
- each cash-out voucher is issued by the voucher book with a number from
  :func:`~drivers.sas.validation.secure_enhanced_number` and the ID and sequence in its ISSUED
  record, committed in one batch with the setting's new sequence, so a number is never used twice;
- the validation records of 0x4D are the printed tickets themselves (``ticket_out`` and the
  voucher's ISSUED record); the setting ``sas.tito.validation_read`` keeps the last one the host
  read with function code 0x00.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from drivers.sas.messages import EnhancedValidation, EnhancedValidationRequest, ValidationId
from drivers.sas.validation import MAX_24_BITS, secure_enhanced_number
from firmware.cashless.errors import VoucherStateError
from firmware.cashless.vouchers import IssuedVoucher, VoucherBook
from firmware.ledger.ledger import Ledger

ID_SETTING = "sas.tito.validation_id"
READ_SETTING = "sas.tito.validation_read"
#: The ledger event that raises exception 0x3F (a cash-out without a validation ID).
NOT_CONFIGURED_EVENT = "sas_validation_id_missing"
#: The buffer of validation records 0x4D reads (SAS: 31, indices 1-31).
BUFFER_SIZE = 31
#: 0x4D function codes.
CURRENT, LOOK_AHEAD = 0x00, 0xFF
#: 0x4D validation type of a cashable ticket printed at cash-out (recall: 0x01 restricted).
CASHABLE_TICKET = 0x00
#: The expiration field of a ticket that never expires: 9999 days (recall).
NEVER = 9999


class SecureEnhanced:
    """Secure-enhanced validation of one machine over its ledger and voucher book."""

    def __init__(self, ledger: Ledger, book: VoucherBook) -> None:
        self._ledger = ledger
        self._book = book

    def _saved(self) -> dict[str, Any]:
        return self._ledger.setting(ID_SETTING) or {"machine_id": 0, "sequence": 0, "host": [0, 0]}

    @property
    def configured(self) -> bool:
        return bool(self._saved()["machine_id"])

    # --- 0x4C --------------------------------------------------------------------------------
    def set_validation_id(self, data: bytes) -> bytes:
        """0x4C: set the ID and starting sequence (an ID of 0 only reads them); the reply gives the
        ID and the sequence in use."""
        request = ValidationId.decode(data)
        saved = self._saved()
        host = [request.machine_id, request.sequence]
        if request.machine_id and host != saved["host"]:
            saved = {"machine_id": request.machine_id, "sequence": request.sequence, "host": host}
            self._ledger.store_setting(ID_SETTING, saved)
        return ValidationId(saved["machine_id"], saved["sequence"]).encode()

    # --- the cash-out's voucher ----------------------------------------------------------------
    def cannot_issue(self) -> str | None:
        """Why no ticket can be numbered now (no validation ID: exception 0x3F is recorded), or None."""
        if self.configured:
            return None
        self._ledger.event(NOT_CONFIGURED_EVENT)
        return "no SAS validation ID (long poll 0x4C)"

    def issue(self, amount_cents: int) -> IssuedVoucher:
        """Issue the cash-out voucher with the next secure-enhanced number (the ISSUED record and
        the new sequence in one commit). A number that exists already is skipped."""
        saved = self._saved()
        if not saved["machine_id"]:
            raise VoucherStateError("no SAS validation ID (long poll 0x4C)")
        sequence = saved["sequence"]
        while True:
            sequence = sequence + 1 if sequence < MAX_24_BITS else 1
            number = secure_enhanced_number(saved["machine_id"], sequence)
            if not self._ledger.records_for(number):
                break
        with self._ledger.batch():
            voucher = self._book.issue(amount_cents, validation=number,
                                       sas_validation_id=saved["machine_id"], sas_sequence=sequence)
            self._ledger.store_setting(ID_SETTING, {**saved, "sequence": sequence})
        return voucher

    # --- 0x4D --------------------------------------------------------------------------------
    def _printed(self) -> list[tuple[int, int, dict[str, Any]]]:
        """(ledger seq of its ``ticket_out``, sequence, ISSUED body) of the newest printed
        secure-enhanced tickets, oldest first."""
        out = []
        for seq in self._ledger.newest_of(["ticket_out"], BUFFER_SIZE):
            validation = self._ledger.log_record(seq)["body"]["validation"]
            for record in self._ledger.records_for(validation):
                body = record["body"]
                if record["kind"] == "voucher" and body["state"] == "issued" and "sas_sequence" in body:
                    out.append((seq, body["sas_sequence"], body))
        return out

    def enhanced_validation(self, data: bytes) -> bytes:
        """0x4D: the oldest record not read yet (0x00 marks it read, 0xFF only looks), or the one at
        a buffer index (0x01-0x1F: the sequence's slot, (sequence - 1) mod 31 + 1); all zeros if none."""
        code = EnhancedValidationRequest.decode(data).function_code
        printed = self._printed()
        if code in (CURRENT, LOOK_AHEAD):
            read = (self._ledger.setting(READ_SETTING) or {"seq": 0})["seq"]
            unread = [(seq, sequence, body) for seq, sequence, body in printed if seq > read]
            if not unread:
                return _EMPTY
            seq, sequence, body = unread[0]
            if code == CURRENT:
                self._ledger.store_setting(READ_SETTING, {"seq": seq})
            return _record(sequence, body).encode()
        if not 1 <= code <= BUFFER_SIZE:
            raise ValueError(f"0x4D function code 0x{code:02X}")
        slot = [(sequence, body) for _, sequence, body in printed if _index(sequence) == code]
        return _record(*slot[-1]).encode() if slot else _EMPTY


_EMPTY = bytes(31)


def _index(sequence: int) -> int:
    return (sequence - 1) % BUFFER_SIZE + 1


def _record(sequence: int, body: dict[str, Any]) -> EnhancedValidation:
    issued = dt.datetime.fromisoformat(body["issued"]).astimezone()
    validation: str = body["validation"]
    return EnhancedValidation(
        validation_type=CASHABLE_TICKET, index=_index(sequence),
        date=issued.month * 1_000_000 + issued.day * 10_000 + issued.year,
        time=issued.hour * 10_000 + issued.minute * 100 + issued.second,
        validation_number=int(validation[2:]), amount=body["amount_cents"],
        ticket_number=body["sequence"] % 10_000, validation_system_id=int(validation[:2]),
        expiration=body["expiry_days"] or NEVER, pool_id=0)
