"""A live table controller's own records in its critical memory (``firmware/table/records.py``):
meter-neutral ``tablectl.<kind>`` records keyed by a reference (a bet's answer by its bet id, a
betting window by its round id). The controller's rounds are the kernel's journal, tagged
``Ledger.round_tags = {"table": TABLE_ID}`` so that they move no credit meter (meters.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from firmware.ledger.errors import LedgerError


class ControllerBook:
    """The ledger's part for a table controller (:class:`~firmware.ledger.ledger.Ledger` inherits
    this; ``_commit`` is the ledger's)."""

    #: Fields every round record's body carries besides its journal entry: a table controller sets
    #: ``{"table": TABLE_ID}`` (its rounds then move no credit meter, meters.py); a terminal none.
    round_tags: Mapping[str, Any] = {}

    if TYPE_CHECKING:
        def _commit(self, kind: str, ref: str | None, body: dict[str, Any]) -> None: ...

    def controller_record(self, kind: str, ref: str, body: Mapping[str, Any]) -> None:
        """Commit ``tablectl.<kind>`` keyed by ``ref``; found again with ``records_for(ref)``."""
        if not kind or not ref:
            raise LedgerError(f"a table record needs a kind and a reference, not {kind!r}, {ref!r}")
        self._commit(f"tablectl.{kind}", ref, dict(body))
