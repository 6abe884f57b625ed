"""SAS exception codes: the one-byte answers to a general poll (0x00 means no activity).

Names follow the public code lists (``docs/protocols/sas.md`` gives the sources). SAS 6.02 ranks
some exceptions above others in the gaming machine's queue; that ranking belongs to the queue
(``firmware/sas/exceptions.py``), not to the codec.
"""

from __future__ import annotations

import enum


class ExceptionCode(enum.IntEnum):
    """General poll exception codes."""

    NO_ACTIVITY = 0x00
    SLOT_DOOR_OPENED = 0x11
    SLOT_DOOR_CLOSED = 0x12
    DROP_DOOR_OPENED = 0x13
    DROP_DOOR_CLOSED = 0x14
    CARD_CAGE_OPENED = 0x15
    CARD_CAGE_CLOSED = 0x16
    AC_POWER_APPLIED = 0x17
    AC_POWER_LOST = 0x18
    CASHBOX_DOOR_OPENED = 0x19
    CASHBOX_DOOR_CLOSED = 0x1A
    CASHBOX_REMOVED = 0x1B
    CASHBOX_INSTALLED = 0x1C
    BELLY_DOOR_OPENED = 0x1D
    BELLY_DOOR_CLOSED = 0x1E
    GENERAL_TILT = 0x20
    CASHBOX_FULL = 0x27
    BILL_JAM = 0x28
    BILL_ACCEPTOR_HARDWARE_FAILURE = 0x29
    BILL_REJECTED = 0x2B
    CASHBOX_NEAR_FULL = 0x2E
    MEMORY_ERROR_RESET = 0x3A
    OPERATOR_CHANGED_OPTIONS = 0x3C
    CASHOUT_TICKET_PRINTED = 0x3D
    HANDPAY_VALIDATED = 0x3E
    VALIDATION_ID_NOT_CONFIGURED = 0x3F
    BILL_1_ACCEPTED = 0x47
    BILL_5_ACCEPTED = 0x48
    BILL_10_ACCEPTED = 0x49
    BILL_20_ACCEPTED = 0x4A
    BILL_50_ACCEPTED = 0x4B
    BILL_100_ACCEPTED = 0x4C
    BILL_2_ACCEPTED = 0x4D
    BILL_500_ACCEPTED = 0x4E
    BILL_ACCEPTED = 0x4F
    BILL_200_ACCEPTED = 0x50
    HANDPAY_PENDING = 0x51
    HANDPAY_RESET = 0x52
    SYSTEM_VALIDATION_REQUEST = 0x57
    PRINTER_COMMUNICATION_ERROR = 0x60
    PRINTER_PAPER_OUT = 0x61
    CASHOUT_BUTTON_PRESSED = 0x66
    TICKET_INSERTED = 0x67
    TICKET_TRANSFER_COMPLETE = 0x68
    AFT_TRANSFER_COMPLETE = 0x69
    GAME_LOCKED = 0x6F
    EXCEPTION_BUFFER_OVERFLOW = 0x70
    PRINTER_PAPER_LOW = 0x74
    PRINTER_POWER_OFF = 0x75
    PRINTER_POWER_ON = 0x76
    PRINTER_CARRIAGE_JAMMED = 0x78
    SOFT_METERS_RESET = 0x7A
    GAME_STARTED = 0x7E
    GAME_ENDED = 0x7F
    OPERATOR_MENU_ENTERED = 0x84
    OPERATOR_MENU_EXITED = 0x85
    GAME_SELECTED = 0x8C


#: The exception for a bill accepted, by its value in whole dollars (non-RTE mode).
BILL_ACCEPTED_BY_DOLLARS: dict[int, ExceptionCode] = {
    1: ExceptionCode.BILL_1_ACCEPTED, 2: ExceptionCode.BILL_2_ACCEPTED, 5: ExceptionCode.BILL_5_ACCEPTED,
    10: ExceptionCode.BILL_10_ACCEPTED, 20: ExceptionCode.BILL_20_ACCEPTED,
    50: ExceptionCode.BILL_50_ACCEPTED, 100: ExceptionCode.BILL_100_ACCEPTED,
    200: ExceptionCode.BILL_200_ACCEPTED, 500: ExceptionCode.BILL_500_ACCEPTED,
}


def exception_name(code: int) -> str:
    try:
        return ExceptionCode(code).name
    except ValueError:
        return f"0x{code:02X}"
