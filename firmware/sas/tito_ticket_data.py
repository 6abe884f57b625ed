"""What the host says the tickets print and how validation behaves: 0x7B extended validation
status, 0x7C set extended ticket data, 0x7D set ticket data, each kept as a setting in critical
memory (``sas.tito.validation_status``, ``sas.tito.ticket_data``) and read by the cabinet when it
prints the next ticket (:meth:`TicketData.printed`). Field meanings are SAS 6.02 as recalled
(docs/protocols/sas.md, "TITO"): check them against the standard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from drivers.sas.messages import (
    ExtendedTicketData,
    ExtendedValidationStatus,
    ExtendedValidationStatusReply,
    Status,
    TicketData,
)
from firmware.ledger.ledger import Ledger

STATUS_SETTING = "sas.tito.validation_status"
DATA_SETTING = "sas.tito.ticket_data"
#: 0x7C data codes this machine prints (recall): location and the two address lines.
EXTENDED_CODES: dict[int, str] = {0x00: "location", 0x01: "address1", 0x02: "address2"}
#: The longest line a ticket prints (the 0x7D text fields are at most this long).
MAX_TEXT = 40
#: 0x7C / 0x7D reply flag: the data was taken (recall).
TAKEN = 0x01


@dataclass(frozen=True, slots=True)
class Printed:
    """What the host set for the next tickets: None = the terminal's own configuration."""

    location: str | None
    address: tuple[str, ...] | None
    expiry_days: int | None


class HostTicketData:
    """0x7B / 0x7C / 0x7D over critical memory for the machine of ``asset_number``."""

    def __init__(self, ledger: Ledger, asset_number: int) -> None:
        self._ledger = ledger
        self.asset_number = asset_number

    def _status(self) -> dict[str, Any]:
        return self._ledger.setting(STATUS_SETTING) or {"bits": 0, "cashable": 0, "restricted": 0}

    def _data(self) -> dict[str, Any]:
        return self._ledger.setting(DATA_SETTING) or {}

    def extended_status(self, data: bytes) -> bytes:
        """0x7B: change the status bits the mask selects and the default expirations (0: unchanged)."""
        request = ExtendedValidationStatus.decode(data)
        saved = self._status()
        new = {"bits": (saved["bits"] & ~request.control_mask) | (request.status_bits & request.control_mask),
               "cashable": request.cashable_expiration or saved["cashable"],
               "restricted": request.restricted_expiration or saved["restricted"]}
        if new != saved:
            self._ledger.store_setting(STATUS_SETTING, new)
        return ExtendedValidationStatusReply(self.asset_number, new["bits"], new["cashable"],
                                             new["restricted"]).encode()

    def set_extended(self, data: bytes) -> bytes:
        """0x7C: location and address lines by data code; an unknown code or text too long or not
        printable changes nothing (ValueError: no reply)."""
        elements = ExtendedTicketData.decode(data).elements
        update = {}
        for code, value in elements:
            if code not in EXTENDED_CODES:
                raise ValueError(f"0x7C data code 0x{code:02X}")
            update[EXTENDED_CODES[code]] = _text(value)
        self._ledger.store_setting(DATA_SETTING, {**self._data(), **update})
        return Status(TAKEN).encode()

    def set_ticket_data(self, data: bytes) -> bytes:
        """0x7D: host ID, expiration (days, 0: unchanged), location and address lines (empty:
        unchanged)."""
        request = TicketData.decode(data)
        update: dict[str, Any] = {"host_id": request.host_id}
        if request.expiration:
            update["expiry_days"] = request.expiration
        for name in ("location", "address1", "address2"):
            value = _text(getattr(request, name).encode("ascii"))
            if value:
                update[name] = value
        self._ledger.store_setting(DATA_SETTING, {**self._data(), **update})
        return Status(TAKEN).encode()

    def printed(self) -> Printed:
        """What the next ticket prints of what the host set."""
        data = self._data()
        lines = tuple(data[name] for name in ("address1", "address2") if data.get(name))
        expiry = data.get("expiry_days") or self._status()["cashable"] or None
        return Printed(data.get("location"), lines or None, expiry)


def _text(value: bytes) -> str:
    if len(value) > MAX_TEXT or not all(0x20 <= b < 0x7F for b in value):
        raise ValueError(f"ticket text of {len(value)} bytes, printable ASCII up to {MAX_TEXT}")
    return value.decode("ascii")
