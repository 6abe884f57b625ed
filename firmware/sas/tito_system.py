"""System validation: the host gives each cash-out ticket its number (0x57, 0x58, exception 0x57).

SAS 6.02 sections 15.7-15.9 (docs/protocols/sas.md, "TITO"): when the machine is ready to print a
cash-out ticket it raises exception 0x57 (system validation request); the host reads the amount
with 0x57 and sends the number with 0x58. A validation system ID of 00 denies the validation, and
so does a host that has not answered within ten seconds: the machine then pays another way (here:
a handpay, as when the printer cannot print).

Critical memory: the request is the ``sas_system_validation`` event (which raises 0x57) and the
setting ``sas.tito.system_validation`` holding its amount, in one commit; the ticket the host
numbered is issued by the voucher book with that number in the same commit that clears the
request. After a power cut the cash-out is not under way any more (the credits are on the meter),
so :meth:`SystemValidation.settle_after_power_loss` clears a request left pending.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from drivers.sas.messages import PendingCashout, Status, ValidationNumber
from firmware.cashless.errors import VoucherError
from firmware.cashless.vouchers import IssuedVoucher, VoucherBook
from firmware.ledger.ledger import Ledger

SETTING = "sas.tito.system_validation"
#: The ledger event that raises exception 0x57.
REQUEST_EVENT = "sas_system_validation"
#: How long the machine waits for the host's number (SAS 6.02 section 15.8: ten seconds).
TIMEOUT_S = 10.0
#: 0x57 cashout types (00 cashable ticket, 01 restricted, 80 not waiting for a number).
CASHABLE, NOT_WAITING = 0x00, 0x80
#: 0x58 reply statuses (as the Aristocrat Monaco client names them).
ACKNOWLEDGED, NOT_IN_CASHOUT, REJECTED = 0x00, 0x80, 0x81


class CashoutPrinter(Protocol):
    """What system validation needs of the cash-out (``firmware/cabinet/sas_tito.py``)."""

    def print_voucher(self, voucher: IssuedVoucher) -> None:
        """Print the voucher the host numbered (it is ISSUED in critical memory)."""
        ...

    def validation_denied(self, reason: str) -> None:
        """No number: pay the cash-out another way."""
        ...


class SystemValidation:
    """System validation of one machine over its ledger and voucher book."""

    def __init__(self, ledger: Ledger, book: VoucherBook, printer: CashoutPrinter, *,
                 clock: Callable[[], float]) -> None:
        self._ledger = ledger
        self._book = book
        self.printer = printer
        self._clock = clock
        self._since: float | None = None

    def pending_cents(self) -> int | None:
        """The amount of the cash-out waiting for its number, None if none is."""
        saved = self._ledger.setting(SETTING) or {}
        amount: int | None = saved.get("amount_cents")
        return amount

    # --- the cash-out's side ---------------------------------------------------------------------
    def request(self, amount_cents: int) -> None:
        """Ask the host for the number of a ticket for ``amount_cents`` (exception 0x57); a
        request already pending is not asked again."""
        if self.pending_cents() is not None:
            return
        with self._ledger.batch():
            self._ledger.event(REQUEST_EVENT, amount_cents=amount_cents)
            self._ledger.store_setting(SETTING, {"amount_cents": amount_cents})
        self._since = self._clock()

    def tick(self, now: float) -> None:
        """The host has ten seconds to give the number: then the validation is denied."""
        if self._since is not None and now - self._since >= TIMEOUT_S and self.pending_cents() is not None:
            self._deny("no validation number from the SAS host within ten seconds")

    def settle_after_power_loss(self) -> None:
        """At power-up no cash-out is under way: a request left pending is cleared."""
        if self.pending_cents() is not None:
            self._ledger.store_setting(SETTING, {})

    def _deny(self, reason: str) -> None:
        self._ledger.store_setting(SETTING, {})
        self._since = None
        self.printer.validation_denied(reason)

    # --- the long polls ---------------------------------------------------------------------------
    def pending_cashout(self, _data: bytes) -> bytes:
        """0x57: the cash-out waiting for its number, or "not waiting"."""
        amount = self.pending_cents()
        if amount is None:
            return PendingCashout(NOT_WAITING, 0).encode()
        return PendingCashout(CASHABLE, amount).encode()

    def receive_number(self, data: bytes) -> bytes:
        """0x58: the host's number (system ID 00: denied). A number used before is rejected and the
        machine keeps waiting for another."""
        request = ValidationNumber.decode(data)
        amount = self.pending_cents()
        if amount is None:
            return Status(NOT_IN_CASHOUT).encode()
        if request.validation_system_id == 0:
            self._deny("the SAS host denied the validation")
            return Status(ACKNOWLEDGED).encode()
        validation = f"{request.validation_system_id:02d}{request.validation_number:016d}"
        if self._ledger.records_for(validation):
            return Status(REJECTED).encode()
        try:
            with self._ledger.batch():
                voucher = self._book.issue(amount, validation=validation,
                                           sas_system_id=request.validation_system_id)
                self._ledger.store_setting(SETTING, {})
        except VoucherError as exc:
            self._deny(f"the host's number could not be used: {exc}")
            return Status(REJECTED).encode()
        self._since = None
        self.printer.print_voucher(voucher)
        return Status(ACKNOWLEDGED).encode()
