"""SAS ticket validation, shared by the machine and the host tool: the secure-enhanced validation
number, and the codes of the ticket redemption polls 0x70 / 0x71 (docs/protocols/sas.md, "TITO").

Secure-enhanced validation (SAS 6.02 section 15.15): the host gives the machine a 3-byte validation
ID and a 3-byte sequence number (long poll 0x4C); the machine adds one to the sequence for each
ticket and derives the ticket's 16 digits from the ID and that sequence alone, so the host can
compute the same number. The steps, as described by the public script ``sas_validate.py`` of
github.com/Kopachris/Kopachris (written from the standard; this is our own rendering of them):

1. six bytes ``a``: the sequence, then the ID, each least significant byte first;
2. ``b0 = a0``, ``b1 = a1``, ``b2 = a2 ^ a0``, ``b3 = a3 ^ a1``, ``b4 = a4 ^ a0``, ``b5 = a5 ^ a1``;
3. the SAS CRC (CRC-16/KERMIT from 0) of each pair (b0 b1), (b2 b3), (b4 b5), each stored low byte
   first: six bytes ``c``;
4. two 24-bit numbers, least significant byte first: ``n0`` from c3 c4 c5 and ``n1`` from c0 c1 c2;
   each written as 8 decimal digits (both are below 2**24, so the first digit is 0 or 1);
5. the first digit of each 8-digit group gets ``(sum of that group's digits mod 5) * 2`` added
   (bitwise or, the digit being 0 or 1): a check on the group;
6. the 16 digits are ``n0``'s group then ``n1``'s, and the printed 18-digit number is the
   validation system ID ``00`` followed by them.

Not checked against the standard's own worked example (which we do not have): a host that computes
other numbers will not find our tickets; see docs/protocols/sas.md.
"""

from __future__ import annotations

import enum

from drivers.sas.crc import sas_crc

#: The system ID that opens a secure-enhanced validation number (the first two of its 18 digits).
SECURE_ENHANCED_SYSTEM_ID = "00"
MAX_24_BITS = (1 << 24) - 1


def _check_group(number: int) -> str:
    digits = [int(d) for d in f"{number:08d}"]
    digits[0] |= (sum(digits) % 5) << 1
    return "".join(str(d) for d in digits)


def secure_enhanced_number(validation_id: int, sequence: int) -> str:
    """The 18-digit validation number (system ID 00) of ticket ``sequence`` of machine ``validation_id``."""
    for name, value in (("validation ID", validation_id), ("sequence number", sequence)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_24_BITS:
            raise ValueError(f"a {name} is 0..{MAX_24_BITS}, not {value!r}")
    a = sequence.to_bytes(3, "little") + validation_id.to_bytes(3, "little")
    b = bytes((a[0], a[1], a[2] ^ a[0], a[3] ^ a[1], a[4] ^ a[0], a[5] ^ a[1]))
    c = b"".join(sas_crc(b[i : i + 2]).to_bytes(2, "little") for i in (0, 2, 4))
    n0, n1 = int.from_bytes(c[3:6], "little"), int.from_bytes(c[0:3], "little")
    return SECURE_ENHANCED_SYSTEM_ID + _check_group(n0) + _check_group(n1)


def validation_to_bcd(validation: str) -> bytes:
    """The 18 digits of a validation number as the 9 BCD bytes of 0x70 / 0x71 (parsing code 0)."""
    if len(validation) != 18 or not validation.isdigit() or not validation.isascii():
        raise ValueError(f"a validation number is 18 digits, not {validation!r}")
    return bytes.fromhex(validation)


def validation_from_bcd(data: bytes) -> str:
    """The 18 digits of 9 BCD bytes; ValueError if they are not 9 bytes of decimal digits."""
    text = data.hex()
    if len(data) != 9 or not text.isdigit():
        raise ValueError(f"validation data is 9 BCD bytes, not {text!r}")
    return text


class TicketStatus(enum.IntEnum):
    """0x70 reply: whether a ticket waits in the validator's escrow."""

    IN_ESCROW = 0x00
    NO_TICKET = 0xFF


class TransferCode(enum.IntEnum):
    """0x71 request: the host's verdict on the ticket (0x80 and above: rejected, and why)."""

    VALID_CASHABLE = 0x00
    VALID_RESTRICTED = 0x01
    VALID_NONRESTRICTED = 0x02
    UNABLE_TO_VALIDATE = 0x80
    NOT_A_VALID_NUMBER = 0x81
    NOT_IN_SYSTEM = 0x82
    MARKED_PENDING = 0x83
    ALREADY_REDEEMED = 0x84
    EXPIRED = 0x85
    INFO_NOT_AVAILABLE = 0x86
    AMOUNT_DOES_NOT_MATCH = 0x87
    EXCEEDS_AUTO_REDEMPTION_LIMIT = 0x88
    STATUS_QUERY = 0xFF


#: The transfer codes that authorise the redemption.
AUTHORISING = frozenset({TransferCode.VALID_CASHABLE, TransferCode.VALID_RESTRICTED,
                         TransferCode.VALID_NONRESTRICTED})


class RedemptionStatus(enum.IntEnum):
    """0x71 reply: where the machine's redemption cycle stands."""

    CASHABLE_REDEEMED = 0x00
    RESTRICTED_REDEEMED = 0x01
    NONRESTRICTED_REDEEMED = 0x02
    WAITING_FOR_71 = 0x20
    PENDING = 0x40
    REJECTED_BY_HOST = 0x80
    VALIDATION_DOES_NOT_MATCH = 0x81
    NOT_A_VALID_FUNCTION = 0x82
    NOT_A_VALID_AMOUNT = 0x83
    EXCEEDS_CREDIT_LIMIT = 0x84
    NOT_A_MULTIPLE_OF_DENOMINATION = 0x85
    AMOUNT_DOES_NOT_MATCH_TICKET = 0x86
    UNABLE_TO_ACCEPT = 0x87
    TIMEOUT = 0x88
    LINK_DOWN = 0x89
    REDEMPTION_DISABLED = 0x8A
    VALIDATOR_FAILURE = 0x8B
    NOT_COMPATIBLE = 0xC0
    NO_VALIDATION_INFO = 0xFF


#: The 0x71 replies that carry the status byte alone (no amount, parsing code or data).
SHORT_STATUSES = frozenset({RedemptionStatus.NOT_COMPATIBLE, RedemptionStatus.NO_VALIDATION_INFO})
