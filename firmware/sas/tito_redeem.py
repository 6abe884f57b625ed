"""Ticket redemption through a SAS host: exception 0x67, long polls 0x70 and 0x71, exception 0x68.

A ticket inserted waits in the validator's escrow while the host decides (SAS 6.02 section 15.12,
the cycle as docs/protocols/sas.md gives it):

1. inserted: a ``voucher`` record ``sas_inserted`` (ref = its number) raises 0x67, and the setting
   ``sas.tito.redemption`` names it as the current cycle, both in one commit;
2. the host reads it with 0x70 and gives its verdict with 0x71;
3. authorised: the voucher book commits REDEEM_PENDING (``channel`` "sas") before the validator is
   told to stack; stacked, the book's ``ticket_in`` credits it once and raises 0x68; refused (by the
   host or here): a ``sas_returned`` record with the status raises 0x68 and the ticket goes back;
4. the host asks the outcome with 0x71 transfer code 0xFF.

The cycle's state is never kept anywhere but those records: :meth:`TicketRedemption.cycle` folds
the current ticket's records from its last ``sas_inserted``, so a power cut at any step leaves the
state they say. What is only in memory is which ticket the validator holds now (:attr:`escrow`):
after a power cut the validator has given it back, so a late verdict finds no ticket and credits
nothing (0xC0), and :meth:`settle_after_power_loss` records the end of a cycle left waiting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from drivers.sas.messages import RedeemTicket, TicketValidationData
from drivers.sas.validation import (
    AUTHORISING,
    RedemptionStatus,
    TicketStatus,
    TransferCode,
    validation_to_bcd,
)
from firmware.cashless.errors import VoucherError, VoucherRefused, VoucherStateError
from firmware.cashless.validation import parse_validation
from firmware.cashless.vouchers import MAX_CENTS, VoucherBook
from firmware.ledger.ledger import Ledger

St = RedemptionStatus

#: The setting that names the current redemption cycle's ticket.
SETTING = "sas.tito.redemption"
#: The voucher record states of a SAS redemption cycle (and the channel of the book's records).
INSERTED = "sas_inserted"
RETURNED = "sas_returned"
CHANNEL = "sas"

#: The final status of a redemption, by the transfer code that authorised it: the same number
#: (00 cashable, 01 restricted, 02 nonrestricted, in both tables).
REDEEMED: dict[int, RedemptionStatus] = {int(code): St(int(code)) for code in AUTHORISING}

#: The status of a verdict the voucher book refuses, by its reason (docs/protocols/sas.md).
REFUSALS: dict[str, RedemptionStatus] = {
    "already_redeemed": St.REJECTED_BY_HOST, "void": St.REJECTED_BY_HOST, "expired": St.REJECTED_BY_HOST,
    "offline": St.REJECTED_BY_HOST, "pending": St.UNABLE_TO_ACCEPT, "unknown": St.REJECTED_BY_HOST,
}


class TicketCabinet(Protocol):
    """What a redemption needs of the cabinet (``firmware/cabinet/sas_tito.py``)."""

    def can_take(self, cents: int) -> str | None:
        """Why ``cents`` more cannot be credited now, or None."""
        ...

    def stack_ticket(self, validation: str) -> None:
        """The voucher book committed REDEEM_PENDING: stack the ticket in escrow (or, if that
        cannot be done, cancel the redemption with ``VoucherBook.cancel_redeem``)."""
        ...

    def return_ticket(self, validation: str, reason: str) -> None:
        """Give the ticket in escrow back to the player."""
        ...


@dataclass(frozen=True, slots=True)
class Cycle:
    """The current redemption cycle as critical memory says it stands."""

    validation: str
    status: RedemptionStatus
    amount_cents: int = 0


class _Approval:
    """The SAS host's verdict as the voucher book's ``Host``: the amount it authorised."""

    def __init__(self, amount_cents: int) -> None:
        self.amount_cents = amount_cents

    def validate(self, validation: str) -> int | None:
        return self.amount_cents


def fold(records: list[dict[str, Any]]) -> Cycle | None:
    """The cycle the records of one ticket (oldest first) leave, from its last ``sas_inserted``."""
    starts = [i for i, r in enumerate(records) if r["kind"] == "voucher" and r["body"]["state"] == INSERTED]
    if not starts:
        return None
    first = records[starts[-1]]["body"]
    cycle = Cycle(first["validation"], St.WAITING_FOR_71)
    code = TransferCode.VALID_CASHABLE
    for record in records[starts[-1] + 1 :]:
        body = record["body"]
        if record["kind"] == "ticket_in":
            cycle = Cycle(cycle.validation, REDEEMED[code], body["cents"])
        elif record["kind"] != "voucher":
            continue
        elif body["state"] == "redeem_pending":
            code = TransferCode(body.get("sas_transfer_code", TransferCode.VALID_CASHABLE))
            cycle = Cycle(cycle.validation, St.PENDING, body["amount_cents"])
        elif body["state"] == "redeem_returned":
            cycle = Cycle(cycle.validation, St.UNABLE_TO_ACCEPT)
        elif body["state"] == RETURNED:
            cycle = Cycle(cycle.validation, St(body["status"]))
    return cycle


class TicketRedemption:
    """The redemption cycle of the ticket in the validator's escrow, over critical memory."""

    def __init__(self, ledger: Ledger, book: VoucherBook, cabinet: TicketCabinet) -> None:
        self._ledger = ledger
        self._book = book
        self.cabinet = cabinet
        #: the ticket the validator holds now for the host's verdict (None after a power cut)
        self.escrow: str | None = None

    def cycle(self) -> Cycle | None:
        """The current (or last) cycle, None if the host never saw a ticket."""
        saved = self._ledger.setting(SETTING)
        return None if saved is None else fold(self._ledger.records_for(saved["validation"]))

    # --- the cabinet's side -------------------------------------------------------------------
    def ticket_escrowed(self, barcode: str) -> None:
        """A ticket is in escrow: record it (0x67) for the host. Raises :class:`VoucherError` when
        it cannot wait for the host (not a validation number, another cycle in progress)."""
        validation = parse_validation(barcode)
        if self.escrow is not None:
            raise VoucherStateError("another ticket is waiting for the host")
        cycle = self.cycle()
        if cycle is not None and cycle.status is St.PENDING:
            raise VoucherStateError("a ticket redemption is still pending")
        with self._ledger.batch():
            self._ledger.voucher_record(validation, INSERTED, channel=CHANNEL)
            self._ledger.store_setting(SETTING, {"validation": validation})
        self.escrow = validation

    def ticket_stacked(self, barcode: str) -> None:
        """The validator stacked the ticket (the book committed its ``ticket_in``)."""
        if self.escrow == barcode:
            self.escrow = None

    def ticket_returned(self) -> None:
        """The validator gave the ticket back before the host's verdict went ahead."""
        validation, self.escrow = self.escrow, None
        cycle = self.cycle()
        if validation is not None and cycle is not None and cycle.status is St.WAITING_FOR_71:
            self._end(validation, St.VALIDATOR_FAILURE)

    def settle_after_power_loss(self) -> None:
        """At power-up (the validator has returned what it held): a cycle left waiting for the
        host ends as "unable to accept" (0x68 raised; a pending one the cabinet's money-in settles)."""
        cycle = self.cycle()
        if cycle is not None and cycle.status is St.WAITING_FOR_71 and self.escrow is None:
            self._end(cycle.validation, St.UNABLE_TO_ACCEPT)

    def _end(self, validation: str, status: RedemptionStatus) -> None:
        self._ledger.voucher_record(validation, RETURNED, channel=CHANNEL, status=int(status))

    # --- the long polls -----------------------------------------------------------------------
    def send_validation_data(self, _data: bytes) -> bytes:
        """0x70: the ticket in escrow, or "no ticket" (the amount is not known before the host's)."""
        cycle = self.cycle()
        if self.escrow is None or cycle is None or cycle.validation != self.escrow:
            return TicketValidationData(TicketStatus.NO_TICKET).encode()
        return TicketValidationData(TicketStatus.IN_ESCROW, 0, 0, validation_to_bcd(self.escrow)).encode()

    def redeem(self, data: bytes) -> bytes:
        """0x71: the host's verdict (or its status query); the cycle's status after it."""
        request = RedeemTicket.decode(data) if _amount_is_bcd(data) else None
        cycle = self.cycle()
        if request is None:                                  # an amount in no BCD: changes nothing
            return _reply(cycle, St.NOT_A_VALID_AMOUNT) if cycle else _short(St.NOT_A_VALID_AMOUNT)
        if request.transfer_code == TransferCode.STATUS_QUERY:
            return _reply(cycle) if cycle else _short(St.NO_VALIDATION_INFO)
        if cycle is None or self.escrow != cycle.validation:
            return _short(St.NOT_COMPATIBLE)
        if request.parsing_code != 0 or request.validation_data != validation_to_bcd(cycle.validation):
            return _reply(cycle, St.VALIDATION_DOES_NOT_MATCH)
        if cycle.status is not St.WAITING_FOR_71:
            return _reply(cycle)                             # decided already: its status
        if request.transfer_code not in AUTHORISING:
            return self._refuse(cycle.validation, St.REJECTED_BY_HOST, "refused by the host")
        amount = request.amount
        if not 0 < amount <= MAX_CENTS:
            return _reply(cycle, St.NOT_A_VALID_AMOUNT)
        if amount % self._ledger.denom_cents:
            return _reply(cycle, St.NOT_A_MULTIPLE_OF_DENOMINATION)
        return self._authorised(cycle.validation, TransferCode(request.transfer_code), amount)

    def _authorised(self, validation: str, code: TransferCode, amount: int) -> bytes:
        why = self.cabinet.can_take(amount)
        if why is not None:
            status = St.EXCEEDS_CREDIT_LIMIT if self.cabinet.can_take(0) is None else St.UNABLE_TO_ACCEPT
            return self._refuse(validation, status, why)
        try:
            self._book.begin_redeem(validation, host=_Approval(amount),
                                    cashable=code is TransferCode.VALID_CASHABLE,
                                    channel=CHANNEL, sas_transfer_code=int(code))
        except VoucherRefused as exc:
            status = REFUSALS[exc.reason_code]
            if exc.reason_code == "unknown" and self._book.state(validation) is not None:
                status = St.AMOUNT_DOES_NOT_MATCH_TICKET        # our own voucher, another amount
            return self._refuse(validation, status, exc.message)
        except VoucherError as exc:
            return self._refuse(validation, St.UNABLE_TO_ACCEPT, str(exc))
        self.cabinet.stack_ticket(validation)
        cycle = self.cycle()
        if cycle is None or cycle.status is not St.PENDING:   # the cabinet could not stack it
            self.escrow = None
        return _reply(cycle)

    def _refuse(self, validation: str, status: RedemptionStatus, reason: str) -> bytes:
        self._end(validation, status)
        self.escrow = None
        self.cabinet.return_ticket(validation, reason)
        return _reply(self.cycle())


def _amount_is_bcd(data: bytes) -> bool:
    return len(data) < 6 or data[1:6].hex().isdigit()


def _short(status: RedemptionStatus) -> bytes:
    return TicketValidationData(status).encode()


def _reply(cycle: Cycle | None, status: RedemptionStatus | None = None) -> bytes:
    assert cycle is not None
    return TicketValidationData(status if status is not None else cycle.status, cycle.amount_cents, 0,
                                validation_to_bcd(cycle.validation)).encode()
