"""SAS AFT (advanced funds transfer) codes: long polls 0x72 and 0x74.

The codes are those of SAS 6.02 chapter 8 as the Aristocrat Monaco platform's SAS client lists them
in its comments and enums (public on GitHub: ``Aristocrat.Sas.Client.Aft.LP72AftTransferFundsParser``,
``LP74AftGameLockAndStatusRequestParser``, ``LongPollDataClasses.AftTransferCode``); the source of each
is in docs/protocols/sas.md, "AFT". Only codes, no code, were taken.
"""

from __future__ import annotations

import enum


class TransferCode(enum.IntEnum):
    """0x72 request, first byte."""

    FULL_ONLY = 0x00                  #: transfer request, full transfer only
    PARTIAL_ALLOWED = 0x01            #: transfer request, partial transfer allowed
    CANCEL = 0x80                     #: cancel transfer request
    INTERROGATE_STATUS_ONLY = 0xFE    #: interrogation request, status only
    INTERROGATE = 0xFF                #: interrogation request


#: The transfer codes of the two-byte interrogation form of 0x72 (transfer code, transaction index).
INTERROGATIONS = frozenset({TransferCode.INTERROGATE, TransferCode.INTERROGATE_STATUS_ONLY})


class TransferType(enum.IntEnum):
    IN_HOUSE_TO_MACHINE = 0x00
    BONUS_COIN_OUT = 0x10
    BONUS_JACKPOT = 0x11
    IN_HOUSE_TO_TICKET = 0x20
    DEBIT_TO_MACHINE = 0x40
    DEBIT_TO_TICKET = 0x60
    IN_HOUSE_TO_HOST = 0x80
    WIN_TO_HOST = 0x90


class TransferStatus(enum.IntEnum):
    """0x72 reply: the gaming machine's transfer status."""

    FULL_SUCCESS = 0x00
    PARTIAL_SUCCESS = 0x01
    PENDING = 0x40
    CANCELLED_BY_HOST = 0x80
    ID_NOT_UNIQUE = 0x81
    NOT_A_VALID_FUNCTION = 0x82
    NOT_A_VALID_AMOUNT = 0x83          #: or expiration (not BCD, ...)
    EXCEEDS_LIMIT = 0x84
    NOT_A_MULTIPLE_OF_DENOMINATION = 0x85
    NO_PARTIAL_TO_HOST = 0x86
    UNABLE_NOW = 0x87                  #: tilt, disabled, game in progress, ...
    NOT_REGISTERED = 0x88
    REGISTRATION_KEY_MISMATCH = 0x89
    NO_POS_ID = 0x8A
    NO_WON_CREDITS = 0x8B
    NO_DENOMINATION = 0x8C
    EXPIRATION_NOT_VALID = 0x8D
    TICKET_DEVICE_UNAVAILABLE = 0x8E
    RESTRICTED_POOL_MISMATCH = 0x8F
    RECEIPT_UNAVAILABLE = 0x90
    RECEIPT_DATA_INSUFFICIENT = 0x91
    RECEIPT_NOT_ALLOWED = 0x92
    ASSET_NUMBER_MISMATCH = 0x93
    NOT_LOCKED = 0x94
    TRANSACTION_ID_NOT_VALID = 0x95
    UNEXPECTED_ERROR = 0x9F
    NOT_COMPATIBLE = 0xC0              #: with the transfer in progress
    UNSUPPORTED_TRANSFER_CODE = 0xC1
    NO_INFORMATION = 0xFF              #: no transfer information available


#: Statuses of a transfer that moved money (the others changed nothing).
SUCCESSFUL = frozenset({TransferStatus.FULL_SUCCESS, TransferStatus.PARTIAL_SUCCESS})


class ReceiptStatus(enum.IntEnum):
    PRINTED = 0x00
    PRINTING = 0x20
    PENDING = 0x40
    NONE = 0xFF                        #: no receipt requested, or not printed


class TransferFlag(enum.IntFlag):
    """0x72 request: transfer flags."""

    HOST_CASHOUT_ENABLE_CONTROL = 0x01
    HOST_CASHOUT_ENABLE = 0x02
    HOST_CASHOUT_MODE_HARD = 0x04
    CASHOUT_REQUEST = 0x08
    LOCK_AFTER_TRANSFER = 0x10
    CUSTOM_TICKET_DATA = 0x20
    ONLY_IF_LOCKED = 0x40
    RECEIPT_REQUEST = 0x80


class LockCode(enum.IntEnum):
    """0x74 request: lock code."""

    REQUEST = 0x00
    CANCEL = 0x80
    INTERROGATE = 0xFF


class LockStatus(enum.IntEnum):
    """0x74 reply: game lock status."""

    LOCKED = 0x00
    PENDING = 0x40
    NOT_LOCKED = 0xFF


class Available(enum.IntFlag):
    """0x74 request (transfer condition) and reply (available transfers)."""

    TO_MACHINE = 0x01
    FROM_MACHINE = 0x02
    TO_PRINTER = 0x04
    WIN_PENDING_TO_HOST = 0x08         #: reply only (in the request, bit 3 is "bonus award OK")
    BONUS_TO_MACHINE = 0x10


class AftStatusBit(enum.IntFlag):
    """0x74 reply: AFT status."""

    RECEIPT_PRINTER = 0x01
    PARTIAL_TO_HOST = 0x02
    CUSTOM_TICKET_DATA = 0x04
    REGISTERED = 0x08
    IN_HOUSE_ENABLED = 0x10
    BONUS_ENABLED = 0x20
    DEBIT_ENABLED = 0x40
    ANY_ENABLED = 0x80


#: Transaction IDs are 1-20 ASCII characters.
MAX_TRANSACTION_ID = 20
#: The highest history buffer position (0x01-0x7F absolute; 0x81-0xFF relative, 0xFF the newest).
MAX_BUFFER_INDEX = 0x7F
