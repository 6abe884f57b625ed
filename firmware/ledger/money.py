"""Money in and out of the credit meter, as the :class:`~firmware.ledger.ledger.Ledger` commits it:
notes, vouchers, handpays and transfers, each one record with its meter changes. Nothing is paid out
while a round is in progress or a live table's bet is open (its stake is held for the table)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from firmware.ledger.errors import LedgerError, LedgerStateError

#: The kinds that take credits off the meter to pay them out.
PAYOUTS = ("ticket_out", "handpay", "transfer_out")


class MoneyBook:
    """The money records (the ledger inherits this; ``_commit`` and the state are the ledger's)."""

    denom_cents: int
    open_round: Any
    table_bets: dict[str, dict[str, Any]]

    if TYPE_CHECKING:
        def _commit(self, kind: str, ref: str | None, body: dict[str, Any]) -> None: ...

    def _money(self, kind: str, cents: int, body: dict[str, Any]) -> None:
        if not isinstance(cents, int) or isinstance(cents, bool) or cents <= 0:
            raise LedgerError(f"{kind}: amount must be a positive whole number of cents, not {cents!r}")
        if cents % self.denom_cents:
            raise LedgerError(f"{kind}: {cents} cents is not a whole number of {self.denom_cents}-cent credits")
        if kind in PAYOUTS and self.open_round is not None:
            raise LedgerStateError(f"{kind} is not allowed while a round is in progress")
        if kind in PAYOUTS and self.table_bets:
            raise LedgerStateError(f"{kind} is not allowed while a table bet is open")
        self._commit(kind, body.get("validation", body.get("reference")), {"cents": cents, **body})

    def bill_in(self, cents: int, *, denom_cents: int | None = None) -> None:
        """A note stacked by the validator (counted only once stacked)."""
        self._money("bill", cents, {"denom_cents": denom_cents or cents})

    def ticket_in(self, cents: int, validation: str, *, cashable: bool = True) -> None:
        self._money("ticket_in", cents, {"validation": validation, "cashable": cashable})

    def ticket_out(self, cents: int, validation: str, *, cashable: bool = True) -> None:
        """A voucher the printer confirmed printed: the credits leave the meter."""
        self._money("ticket_out", cents, {"validation": validation, "cashable": cashable})

    def handpay(self, cents: int, *, attendant: str = "") -> None:
        """Cancelled credits paid by an attendant."""
        self._money("handpay", cents, {"attendant": attendant})

    def transfer_in(self, cents: int, reference: str, **data: Any) -> None:
        """Funds transferred to the credit meter (``ref`` = ``reference``, e.g. an AFT transaction
        ID; ``data``: what the transfer's protocol keeps with it, in the same record)."""
        self._money("transfer_in", cents, _transfer_body(reference, data))

    def transfer_out(self, cents: int, reference: str, **data: Any) -> None:
        """Funds transferred from the credit meter to the host (as :meth:`transfer_in`)."""
        self._money("transfer_out", cents, _transfer_body(reference, data))


def _transfer_body(reference: str, data: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(reference, str) or not reference:
        raise LedgerError(f"a transfer needs a reference, not {reference!r}")
    if "cents" in data:
        raise LedgerError("a transfer's amount is its cents argument, not part of its data")
    return {**data, "reference": reference}
