"""Which SAS exceptions a terminal event raises: a pure function of one ledger record.

Every event the terminal records goes to critical memory first (``Ledger.event``, the money
records, the round journal, the cabinet's events as ``cabinet.<kind>``); the exception queue
(:mod:`firmware.sas.exceptions`) feeds each committed record through :func:`exceptions_for`, so
an exception exists exactly when its record does. The record names are those the ledger really
holds (``ledger.event(...)`` in firmware/cabinet, the record kinds of firmware/ledger).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.sas.exceptions import BILL_ACCEPTED_BY_DOLLARS
from drivers.sas.exceptions import ExceptionCode as X

#: Each door of the terminal (``firmware.ledger.meters.DOORS``): (opened, closed).
DOOR_EXCEPTIONS: dict[str, tuple[X, X]] = {
    "main": (X.SLOT_DOOR_OPENED, X.SLOT_DOOR_CLOSED),
    "cash_box": (X.CASHBOX_DOOR_OPENED, X.CASHBOX_DOOR_CLOSED),
    "logic": (X.CARD_CAGE_OPENED, X.CARD_CAGE_CLOSED),
}

#: Plain events (``Ledger.event(name)``) that always raise the same exception.
EVENT_EXCEPTIONS: dict[str, X] = {
    "power_up": X.AC_POWER_APPLIED,
    "power_down": X.AC_POWER_LOST,
    "ram_clear": X.MEMORY_ERROR_RESET,
    "bill_rejected": X.BILL_REJECTED,
    "game_selected": X.GAME_SELECTED,
    "sas_validation_id_missing": X.VALIDATION_ID_NOT_CONFIGURED,
    "sas_system_validation": X.SYSTEM_VALIDATION_REQUEST,
}

#: The printer's soft faults (``printer_fault`` events, by their ``kind``).
PRINTER_FAULTS: dict[str, X] = {"paper_out": X.PRINTER_PAPER_OUT, "jam": X.PRINTER_CARRIAGE_JAMMED}

#: Cabinet transitions (``cabinet.transition`` events, by their ``trigger``).
TRANSITIONS: dict[str, X] = {
    "cashout": X.CASHOUT_BUTTON_PRESSED,
    "handpay": X.HANDPAY_PENDING,
    "handpay_key_off": X.HANDPAY_RESET,
    # the audit (service) key opens the operator's menus and closes them
    "service_key_on": X.OPERATOR_MENU_ENTERED,
    "service_key_off": X.OPERATOR_MENU_EXITED,
}

#: Tilt conditions (``cabinet.tilt_raised`` / ``cabinet.tilt_cleared``, by the tilt's key):
#: (exception when raised, exception when cleared or None).
TILTS: dict[str, tuple[X, X | None]] = {
    "device_fault:bill_validator.jam": (X.BILL_JAM, None),
    "device_fault:bill_validator.stacker_full": (X.CASHBOX_FULL, None),
    "device_fault:bill_validator.stacker_open": (X.CASHBOX_REMOVED, X.CASHBOX_INSTALLED),
    "device_fault:bill_validator.failure": (X.BILL_ACCEPTOR_HARDWARE_FAILURE, None),
    "device_fault:printer.communication": (X.PRINTER_COMMUNICATION_ERROR, None),
    "device_fault:printer.failure": (X.PRINTER_COMMUNICATION_ERROR, None),
    "device_disconnected:printer": (X.PRINTER_POWER_OFF, X.PRINTER_POWER_ON),
}


def bill_exception(denom_cents: int) -> X:
    """The exception of a note accepted: its own code for the denominations SAS names, else 0x4F."""
    dollars, cents = divmod(denom_cents, 100)
    return BILL_ACCEPTED_BY_DOLLARS.get(dollars, X.BILL_ACCEPTED) if not cents else X.BILL_ACCEPTED


def exceptions_for(kind: str, body: Mapping[str, Any]) -> tuple[X, ...]:
    """The SAS exceptions one ledger record raises (none for most records)."""
    if kind == "bill":
        return (bill_exception(body["denom_cents"]),)
    if kind == "ticket_out":
        return (X.CASHOUT_TICKET_PRINTED,)
    if kind == "ticket_in":
        return (X.TICKET_TRANSFER_COMPLETE,)
    if kind == "voucher":
        return _voucher_exceptions(body)
    if kind in ("transfer_in", "transfer_out") and body.get("source") == "aft":
        return (X.AFT_TRANSFER_COMPLETE,)
    if kind == "round.deal":
        return (X.GAME_STARTED,)
    if kind == "round.complete":
        return (X.GAME_ENDED,)
    if kind != "event":
        return ()
    return _event_exceptions(body["event"], body)


def _voucher_exceptions(body: Mapping[str, Any]) -> tuple[X, ...]:
    """A ticket's redemption through the SAS host (firmware/sas/tito_redeem.py): inserted (0x67),
    refused or returned (0x68; a ticket credited raises 0x68 through its ``ticket_in``)."""
    state = body.get("state")
    if state == "sas_inserted":
        return (X.TICKET_INSERTED,)
    if state == "sas_returned" or (state == "redeem_returned" and body.get("channel") == "sas"):
        return (X.TICKET_TRANSFER_COMPLETE,)
    return ()


def _event_exceptions(event: str, body: Mapping[str, Any]) -> tuple[X, ...]:
    if event in ("door_open", "door_close") and body.get("door") in DOOR_EXCEPTIONS:
        opened, closed = DOOR_EXCEPTIONS[body["door"]]
        return (opened if event == "door_open" else closed,)
    if event in EVENT_EXCEPTIONS:
        return (EVENT_EXCEPTIONS[event],)
    if event == "printer_fault" and body.get("kind") in PRINTER_FAULTS:
        return (PRINTER_FAULTS[body["kind"]],)
    if event == "printer_paper_low" and body.get("low"):
        return (X.PRINTER_PAPER_LOW,)
    if event == "cabinet.transition" and body.get("trigger") in TRANSITIONS:
        if body.get("restored"):           # the way back into a lockup at power-up: nobody acted
            return ()
        return (TRANSITIONS[body["trigger"]],)
    if event in ("cabinet.tilt_raised", "cabinet.tilt_cleared") and body.get("tilt") in TILTS:
        raised, cleared = TILTS[body["tilt"]]
        code = raised if event == "cabinet.tilt_raised" else cleared
        return () if code is None else (code,)
    return ()
