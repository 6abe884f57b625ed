"""Which SAS exception each terminal event raises: the record names the ledger really writes."""

from __future__ import annotations

import pytest

from drivers.sas.exceptions import ExceptionCode as X
from firmware.sas.events import exceptions_for

CASES = [
    ("event", {"event": "door_open", "door": "main"}, X.SLOT_DOOR_OPENED),
    ("event", {"event": "door_close", "door": "main"}, X.SLOT_DOOR_CLOSED),
    ("event", {"event": "door_open", "door": "cash_box", "while_power_off": True}, X.CASHBOX_DOOR_OPENED),
    ("event", {"event": "door_close", "door": "cash_box"}, X.CASHBOX_DOOR_CLOSED),
    ("event", {"event": "door_open", "door": "logic"}, X.CARD_CAGE_OPENED),
    ("event", {"event": "door_close", "door": "logic"}, X.CARD_CAGE_CLOSED),
    ("event", {"event": "power_up"}, X.AC_POWER_APPLIED),
    ("event", {"event": "power_down"}, X.AC_POWER_LOST),
    ("event", {"event": "ram_clear", "role": "technician", "reason": "r", "previous": {}}, X.MEMORY_ERROR_RESET),
    ("bill", {"cents": 100, "denom_cents": 100}, X.BILL_1_ACCEPTED),
    ("bill", {"cents": 500, "denom_cents": 500}, X.BILL_5_ACCEPTED),
    ("bill", {"cents": 2000, "denom_cents": 2000}, X.BILL_20_ACCEPTED),
    ("bill", {"cents": 10000, "denom_cents": 10000}, X.BILL_100_ACCEPTED),
    ("bill", {"cents": 250, "denom_cents": 250}, X.BILL_ACCEPTED),
    ("event", {"event": "bill_rejected", "reason": "x"}, X.BILL_REJECTED),
    ("event", {"event": "cabinet.tilt_raised", "tilt": "device_fault:bill_validator.jam"}, X.BILL_JAM),
    ("event", {"event": "cabinet.tilt_raised", "tilt": "device_fault:bill_validator.stacker_full"}, X.CASHBOX_FULL),
    ("event", {"event": "cabinet.tilt_raised", "tilt": "device_fault:bill_validator.stacker_open"},
     X.CASHBOX_REMOVED),
    ("event", {"event": "cabinet.tilt_cleared", "tilt": "device_fault:bill_validator.stacker_open"},
     X.CASHBOX_INSTALLED),
    ("event", {"event": "cabinet.transition", "trigger": "cashout", "source": "IDLE", "dest": "CASHOUT"},
     X.CASHOUT_BUTTON_PRESSED),
    ("ticket_out", {"cents": 500, "validation": "1", "cashable": True}, X.CASHOUT_TICKET_PRINTED),
    ("voucher", {"validation": "1", "state": "sas_inserted", "channel": "sas"}, X.TICKET_INSERTED),
    ("voucher", {"validation": "1", "state": "sas_returned", "channel": "sas", "status": 0x80},
     X.TICKET_TRANSFER_COMPLETE),
    ("voucher", {"validation": "1", "state": "redeem_returned", "channel": "sas"}, X.TICKET_TRANSFER_COMPLETE),
    ("event", {"event": "sas_validation_id_missing"}, X.VALIDATION_ID_NOT_CONFIGURED),
    ("ticket_in", {"cents": 500, "validation": "1", "cashable": True}, X.TICKET_TRANSFER_COMPLETE),
    ("event", {"event": "cabinet.transition", "trigger": "handpay"}, X.HANDPAY_PENDING),
    ("event", {"event": "cabinet.transition", "trigger": "handpay_key_off"}, X.HANDPAY_RESET),
    ("round.deal", {"round_id": "r"}, X.GAME_STARTED),
    ("round.complete", {"round_id": "r"}, X.GAME_ENDED),
    ("event", {"event": "printer_fault", "kind": "paper_out", "detail": ""}, X.PRINTER_PAPER_OUT),
    ("event", {"event": "printer_fault", "kind": "jam", "detail": ""}, X.PRINTER_CARRIAGE_JAMMED),
    ("event", {"event": "printer_paper_low", "low": True}, X.PRINTER_PAPER_LOW),
    ("event", {"event": "cabinet.tilt_raised", "tilt": "device_fault:printer.communication"},
     X.PRINTER_COMMUNICATION_ERROR),
    ("event", {"event": "cabinet.tilt_raised", "tilt": "device_disconnected:printer"}, X.PRINTER_POWER_OFF),
    ("event", {"event": "cabinet.tilt_cleared", "tilt": "device_disconnected:printer"}, X.PRINTER_POWER_ON),
    ("event", {"event": "cabinet.transition", "trigger": "service_key_on"}, X.OPERATOR_MENU_ENTERED),
    ("event", {"event": "cabinet.transition", "trigger": "service_key_off"}, X.OPERATOR_MENU_EXITED),
    ("event", {"event": "game_selected", "game": "holdem-war"}, X.GAME_SELECTED),
]


@pytest.mark.parametrize(("kind", "body", "code"), CASES, ids=[f"{c[2].name}" for c in CASES])
def test_each_event_raises_its_exception(kind, body, code):
    assert exceptions_for(kind, body) == (code,)


@pytest.mark.parametrize(("kind", "body"), [
    ("event", {"event": "printer_paper_low", "low": False}),
    ("event", {"event": "cabinet.tilt_cleared", "tilt": "device_fault:bill_validator.jam"}),
    ("event", {"event": "cabinet.transition", "trigger": "enable"}),
    # the way back into a handpay lockup at power-up: nobody pressed the cash-out button
    ("event", {"event": "cabinet.transition", "trigger": "cashout", "restored": True}),
    ("event", {"event": "service_entry", "role": "technician"}),
    ("voucher", {"validation": "1", "state": "issued"}),
    ("round.step", {"round_id": "r"}),
    ("setting", {"name": "sas.exceptions", "value": {}}),
])
def test_other_records_raise_none(kind, body):
    assert exceptions_for(kind, body) == ()
