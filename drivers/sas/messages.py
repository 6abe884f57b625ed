"""Typed bodies of the SAS long polls and their replies (the data between command and CRC).

``REQUESTS`` and ``REPLIES`` map a command to its body class; :func:`parse_request` and
:func:`parse_reply` turn a decoded :class:`~drivers.sas.codec.LongPoll` / ``Reply`` into a body.
The identity, handpay and game information bodies are in
``drivers.sas.game_info`` (listed here too); the ACK-only polls carry no body. Money and meters are integers (credits of the accounting
denomination or cents, as each field says in ``docs/protocols/sas.md``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import astuple, dataclass
from typing import ClassVar, Self

from drivers.sas.aft_receipt import AftReceiptData
from drivers.sas.bcd import from_bcd, to_bcd
from drivers.sas.game_info import (
    EnabledFeatures,
    EnabledGames,
    GameConfiguration,
    GameInformation,
    GameNumber,
    HandpayInfo,
    RealTimeEvents,
)
from drivers.sas.game_info import (
    MachineInfo as MachineInfo,  # re-exported: it was defined here
)
from drivers.sas.layout import Body, Field

# -- meters (0x0F-0x1E, 0x20): BCD fields whose widths each command fixes ---------------------

#: Names and BCD widths of the meters each meter poll returns, in wire order.
METER_LAYOUTS: dict[int, tuple[tuple[str, int], ...]] = {
    0x0F: (("total_cancelled_credits", 4), ("total_coin_in", 4), ("total_coin_out", 4),
           ("total_drop", 4), ("total_jackpot", 4), ("games_played", 4)),
    0x10: (("total_cancelled_credits", 4),),
    0x11: (("total_coin_in", 4),),
    0x12: (("total_coin_out", 4),),
    0x13: (("total_drop", 4),),
    0x14: (("total_jackpot", 4),),
    0x15: (("games_played", 4),),
    0x16: (("games_won", 4),),
    0x17: (("games_lost", 4),),
    0x18: (("games_since_power_up", 2), ("games_since_door_closed", 2)),
    0x19: (("total_coin_in", 4), ("total_coin_out", 4), ("total_drop", 4),
           ("total_jackpot", 4), ("games_played", 4)),
    0x1A: (("current_credits", 4),),
    0x1C: (("total_coin_in", 4), ("total_coin_out", 4), ("total_drop", 4),
           ("total_jackpot", 4), ("games_played", 4), ("games_won", 4),
           ("slot_door_opened", 4), ("power_reset", 4)),
    0x1D: (("cumulative_progressive_wins", 4),),
    0x1E: (("bills_1", 4), ("bills_5", 4), ("bills_10", 4), ("bills_20", 4), ("bills_50", 4),
           ("bills_100", 4)),
    0x20: (("total_bills_dollars", 4),),
}


@dataclass(frozen=True, slots=True)
class Meters:
    """The reply of a meter poll: its meters by name (rolled over at their widths on encode)."""

    command: int
    values: tuple[tuple[str, int], ...]

    def encode(self) -> bytes:
        names = [name for name, _ in METER_LAYOUTS[self.command]]
        if [name for name, _ in self.values] != names:
            raise ValueError(f"meter poll 0x{self.command:02X} sends {names}")
        return b"".join(to_bcd(value, width) for (_, value), (_, width)
                        in zip(self.values, METER_LAYOUTS[self.command], strict=True))

    @classmethod
    def decode_for(cls, command: int, data: bytes) -> Meters:
        layout = METER_LAYOUTS[command]
        if len(data) != sum(width for _, width in layout):
            raise ValueError(f"meter reply 0x{command:02X} of {len(data)} bytes")
        values, at = [], 0
        for name, width in layout:
            values.append((name, from_bcd(data[at : at + width])))
            at += width
        return cls(command, tuple(values))

    def __getitem__(self, name: str) -> int:
        return dict(self.values)[name]


# -- identity, signature, bills, clock --------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SasVersion(Body):
    """0x54 reply (after its length byte): SAS version ("602") and the machine's serial number."""

    version: str
    serial: str
    layout: ClassVar[tuple[Field, ...]] = (("ascii", 3), ("rest", 0))

    def encode(self) -> bytes:
        return SasVersion._raw(self.version, self.serial.encode("ascii"))

    @staticmethod
    def _raw(version: str, serial: bytes) -> bytes:
        if len(version) != 3 or len(serial) > 40:
            raise ValueError("SAS version is 3 characters and the serial at most 40")
        return version.encode("ascii") + serial

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) < 3 or len(data) > 43:
            raise ValueError(f"0x54 body of {len(data)} bytes")
        return cls(data[:3].decode("ascii"), data[3:].decode("ascii"))


@dataclass(frozen=True, slots=True)
class RomSignatureRequest(Body):
    seed: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 2),)


@dataclass(frozen=True, slots=True)
class RomSignature(Body):
    signature: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 2),)


@dataclass(frozen=True, slots=True)
class LastBill(Body):
    """0x48 reply: country code, denomination code (SAS tables), and that denomination's meter."""

    country_code: int
    denomination_code: int
    bill_meter: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 1), ("bcd", 1), ("bcd", 4))


@dataclass(frozen=True, slots=True)
class DateTime(Body):
    """0x7E reply and 0x7F request: MMDDYYYY and HHMMSS in BCD."""

    when: dt.datetime
    layout: ClassVar[tuple[Field, ...]] = (("rest", 0),)

    def encode(self) -> bytes:
        w = self.when
        return to_bcd(w.month * 1_000_000 + w.day * 10_000 + w.year, 4) + to_bcd(
            w.hour * 10_000 + w.minute * 100 + w.second, 3)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) != 7:
            raise ValueError(f"date and time of {len(data)} bytes")
        date, time = f"{from_bcd(data[:4]):08d}", f"{from_bcd(data[4:]):06d}"
        return cls(dt.datetime(int(date[4:]), int(date[:2]), int(date[2:4]),
                               int(time[:2]), int(time[2:4]), int(time[4:])))


# -- selected meters (0x2F) and extended meters (0x6F, 0xAF) -----------------------------------

#: BCD width of the meter codes this terminal reports through 0x2F (cents-valued meters are 5).
METER_CODE_WIDTHS: dict[int, int] = {
    **{code: 4 for code in range(0x00, 0x0D)},
    0x0D: 5, 0x0E: 5, 0x0F: 5, 0x10: 5, 0x11: 4, 0x12: 4, 0xA0: 5, 0xB8: 5,
}


@dataclass(frozen=True, slots=True)
class SelectedMetersRequest:
    game: int
    codes: tuple[int, ...]

    def encode(self) -> bytes:
        return to_bcd(self.game, 2) + bytes(self.codes)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) < 2:
            raise ValueError("0x2F body without a game number")
        return cls(from_bcd(data[:2]), tuple(data[2:]))


@dataclass(frozen=True, slots=True)
class SelectedMeters:
    game: int
    meters: tuple[tuple[int, int], ...]     #: (meter code, value)

    def encode(self) -> bytes:
        out = to_bcd(self.game, 2)
        for code, value in self.meters:
            out += bytes((code,)) + to_bcd(value, METER_CODE_WIDTHS[code])
        return out

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) < 2:
            raise ValueError("0x2F reply without a game number")
        meters, at = [], 2
        while at < len(data):
            code = data[at]
            width = METER_CODE_WIDTHS.get(code)
            if width is None or at + 1 + width > len(data):
                raise ValueError(f"meter code 0x{code:02X} of unknown width or cut short")
            meters.append((code, from_bcd(data[at + 1 : at + 1 + width])))
            at += 1 + width
        return cls(from_bcd(data[:2]), tuple(meters))


@dataclass(frozen=True, slots=True)
class ExtendedMetersRequest:
    """0x6F / 0xAF: a game and up to 12 two-byte meter codes (LSB first)."""

    game: int
    codes: tuple[int, ...]

    def encode(self) -> bytes:
        return to_bcd(self.game, 2) + b"".join(c.to_bytes(2, "little") for c in self.codes)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) < 2 or len(data) % 2:
            raise ValueError(f"extended meters request of {len(data)} bytes")
        codes = tuple(int.from_bytes(data[i : i + 2], "little") for i in range(2, len(data), 2))
        return cls(from_bcd(data[:2]), codes)


@dataclass(frozen=True, slots=True)
class ExtendedMeters:
    """0x6F / 0xAF reply: per meter its code (2 bytes LSB first), its width and its BCD value."""

    game: int
    meters: tuple[tuple[int, int, int], ...]    #: (meter code, BCD width, value)

    def encode(self) -> bytes:
        out = to_bcd(self.game, 2)
        for code, width, value in self.meters:
            out += code.to_bytes(2, "little") + bytes((width,)) + to_bcd(value, width)
        return out

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) < 2:
            raise ValueError("extended meters reply without a game number")
        meters, at = [], 2
        while at < len(data):
            if at + 3 > len(data):
                raise ValueError("extended meter header cut short")
            code, width = int.from_bytes(data[at : at + 2], "little"), data[at + 2]
            if at + 3 + width > len(data):
                raise ValueError(f"extended meter 0x{code:04X} cut short")
            meters.append((code, width, from_bcd(data[at + 3 : at + 3 + width])))
            at += 3 + width
        return cls(from_bcd(data[:2]), tuple(meters))


# -- ticketing (TITO) ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ValidationId(Body):
    """0x4C request and reply: the machine's validation ID and next sequence number."""

    machine_id: int
    sequence: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 3), ("bin", 3))


@dataclass(frozen=True, slots=True)
class EnhancedValidationRequest(Body):
    function_code: int      #: 0x00 current, 0x01-0x1F a buffer index, 0xFF look ahead
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1),)


@dataclass(frozen=True, slots=True)
class EnhancedValidation(Body):
    """0x4D reply: one validation record (amount in cents, number as 16 BCD digits)."""

    validation_type: int
    index: int
    date: int               #: MMDDYYYY
    time: int               #: HHMMSS
    validation_number: int
    amount: int
    ticket_number: int
    validation_system_id: int
    expiration: int
    pool_id: int
    layout: ClassVar[tuple[Field, ...]] = (
        ("bin", 1), ("bin", 1), ("bcd", 4), ("bcd", 3), ("bcd", 8), ("bcd", 5), ("bcd", 2),
        ("bcd", 1), ("bcd", 4), ("bin", 2))


@dataclass(frozen=True, slots=True)
class PendingCashout(Body):
    """0x57 reply (system validation): cashout type and amount in cents."""

    cashout_type: int
    amount: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bcd", 5))


@dataclass(frozen=True, slots=True)
class ValidationNumber(Body):
    """0x58 request: the host's validation number for the pending cashout."""

    validation_system_id: int
    validation_number: int
    layout: ClassVar[tuple[Field, ...]] = (("bcd", 1), ("bcd", 8))


@dataclass(frozen=True, slots=True)
class Status(Body):
    """A one-byte status or flag reply (0x58, 0x7C, 0x7D, 0x94)."""

    status: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1),)


@dataclass(frozen=True, slots=True)
class TicketValidationData(Body):
    """0x70 reply and 0x71 reply: status, amount in cents, parsing code, validation data.

    The status alone (a one-byte body) when there is nothing else to say: 0x70 with no ticket in
    escrow (0xFF), 0x71 not compatible with the redemption cycle (0xC0) or with no validation
    information (0xFF); the Aristocrat Monaco client's LP 70 / LP 71 parsers send them so."""

    status: int
    amount: int = 0
    parsing_code: int = 0
    validation_data: bytes = b""
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bcd", 5), ("bin", 1), ("rest", 0))

    def encode(self) -> bytes:
        if self.status in (0xC0, 0xFF) and not self.validation_data and not self.amount:
            return bytes((self.status,))
        return bytes((self.status,)) + to_bcd(self.amount, 5) + bytes((self.parsing_code,)) + self.validation_data

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) == 1:
            return cls(data[0])
        if len(data) < 7:
            raise ValueError(f"ticket validation data of {len(data)} bytes")
        return cls(data[0], from_bcd(data[1:6]), data[6], data[7:])


@dataclass(frozen=True, slots=True)
class RedeemTicket(Body):
    """0x71 request: the host's verdict on the inserted ticket (parsing code 0: 9 BCD bytes)."""

    transfer_code: int
    amount: int
    parsing_code: int
    validation_data: bytes
    restricted_expiration: int | None = None
    pool_id: int | None = None
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bcd", 5), ("bin", 1))

    def encode(self) -> bytes:
        if self.transfer_code == 0xFF and not self.validation_data:
            return b"\xff"
        out = bytes((self.transfer_code,)) + to_bcd(self.amount, 5) + bytes((self.parsing_code,))
        out += self.validation_data
        if self.restricted_expiration is not None:
            out += to_bcd(self.restricted_expiration, 4) + (self.pool_id or 0).to_bytes(2, "little")
        return out

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) == 1 and data[0] == 0xFF:         # the status query: the transfer code alone
            return cls(0xFF, 0, 0, b"")
        if len(data) < 7:
            raise ValueError(f"0x71 request of {len(data)} bytes")
        head = (data[0], from_bcd(data[1:6]), data[6])
        rest = data[7:]
        if head[2] == 0 and len(rest) == 9 + 6:
            return cls(*head, rest[:9], from_bcd(rest[9:13]), int.from_bytes(rest[13:], "little"))
        return cls(*head, rest)


@dataclass(frozen=True, slots=True)
class ExtendedValidationStatus(Body):
    """0x7B request: which status bits to change, their new states, default expirations (days)."""

    control_mask: int
    status_bits: int
    cashable_expiration: int
    restricted_expiration: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 2), ("bin", 2), ("bcd", 2), ("bcd", 2))


@dataclass(frozen=True, slots=True)
class ExtendedValidationStatusReply(Body):
    asset_number: int
    status_bits: int
    cashable_expiration: int
    restricted_expiration: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 4), ("bin", 2), ("bcd", 2), ("bcd", 2))


@dataclass(frozen=True, slots=True)
class ExtendedTicketData:
    """0x7C request: data elements (code, bytes), each sent as code, length, data."""

    elements: tuple[tuple[int, bytes], ...]

    def encode(self) -> bytes:
        return b"".join(bytes((code, len(value))) + value for code, value in self.elements)

    @classmethod
    def decode(cls, data: bytes) -> Self:
        elements, at = [], 0
        while at < len(data):
            if at + 2 > len(data) or at + 2 + data[at + 1] > len(data):
                raise ValueError("ticket data element cut short")
            elements.append((data[at], data[at + 2 : at + 2 + data[at + 1]]))
            at += 2 + data[at + 1]
        return cls(tuple(elements))


@dataclass(frozen=True, slots=True)
class TicketData(Body):
    """0x7D request: host ID, expiration (days), location and two address lines."""

    host_id: int
    expiration: int
    location: str
    address1: str
    address2: str
    layout: ClassVar[tuple[Field, ...]] = (("bin", 2), ("bin", 1), ("lascii", 0), ("lascii", 0),
                                           ("lascii", 0))


# -- AFT (0x72, 0x74) -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AftLockRequest(Body):
    """0x74 request: lock code, transfer condition, lock timeout in hundredths of a second."""

    lock_code: int
    transfer_condition: int
    lock_timeout: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bin", 1), ("bcd", 2))


@dataclass(frozen=True, slots=True)
class AftStatus(Body):
    """0x74 reply: lock and AFT status, current amounts in cents, transfer limit."""

    asset_number: int
    game_lock_status: int
    available_transfers: int
    host_cashout_status: int
    aft_status: int
    max_buffer_index: int
    cashable: int
    restricted: int
    nonrestricted: int
    transfer_limit: int
    restricted_expiration: int
    restricted_pool_id: int
    layout: ClassVar[tuple[Field, ...]] = (
        ("bin", 4), ("bin", 1), ("bin", 1), ("bin", 1), ("bin", 1), ("bin", 1), ("bcd", 5),
        ("bcd", 5), ("bcd", 5), ("bcd", 5), ("bcd", 4), ("bin", 2))


@dataclass(frozen=True, slots=True)
class AftInterrogate(Body):
    """0x72 request of two bytes: transfer code 0xFF (or 0xFE, status only) asks for a transaction:
    index 0 the current or newest, 0x01-0x7F a history buffer position, 0x81-0xFF relative (0xFF
    the newest in the history)."""

    transfer_code: int
    transaction_index: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1), ("bin", 1))


@dataclass(frozen=True, slots=True)
class AftCancel(Body):
    """0x72 request of one byte: transfer code 0x80, cancel the transfer request in progress."""

    transfer_code: int
    layout: ClassVar[tuple[Field, ...]] = (("bin", 1),)


class AftBodyError(ValueError):
    """A 0x72 transfer request the machine cannot read: ``status`` is the transfer status SAS gives
    for it (0x82 not a valid function, 0x83 not a valid amount, 0x95 transaction ID not valid)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _aft_field(data: bytes, at: int, size: int) -> bytes:
    if at + size > len(data):
        raise AftBodyError(0x82, f"0x72 request ends at {len(data)} bytes, a field needs {at + size}")
    return data[at : at + size]


def _aft_bcd(data: bytes, at: int, size: int) -> int:
    try:
        return from_bcd(_aft_field(data, at, size))
    except AftBodyError:
        raise
    except ValueError as exc:
        raise AftBodyError(0x83, str(exc)) from None


@dataclass(frozen=True, slots=True)
class AftTransfer(Body):
    """0x72 request: a transfer to or from the machine (amounts in cents)."""

    transfer_code: int
    transaction_index: int
    transfer_type: int      #: in-house to or from the machine, bonus, debit (drivers.sas.aft.TransferType)
    cashable: int           #: cents
    restricted: int         #: cents
    nonrestricted: int      #: cents
    transfer_flags: int     #: drivers.sas.aft.TransferFlag
    asset_number: int       #: the machine's asset number: a transfer for another machine is refused
    registration_key: bytes
    transaction_id: str     #: 1-20 ASCII characters
    expiration: int
    pool_id: int
    receipt_data: bytes
    lock_timeout: int
    layout: ClassVar[tuple[Field, ...]] = (
        ("bin", 1), ("bin", 1), ("bin", 1), ("bcd", 5), ("bcd", 5), ("bcd", 5), ("bin", 1),
        ("bin", 4), ("raw", 20), ("lascii", 0), ("bcd", 4), ("bin", 2), ("lraw", 0), ("bcd", 2))

    def __post_init__(self) -> None:
        text = self.transaction_id
        if not (text.isascii() and valid_transaction_id(text.encode("ascii"))):
            raise ValueError(f"an AFT transaction ID is 1-20 printable ASCII characters, not {self.transaction_id!r}")

    @classmethod
    def decode(cls, data: bytes) -> Self:
        """Raises :class:`AftBodyError` with the transfer status of what is wrong."""
        head = _aft_field(data, 0, 3)
        cashable, restricted, nonrestricted = (_aft_bcd(data, at, 5) for at in (3, 8, 13))
        flags, asset = data[18:19], _aft_field(data, 19, 4)
        key = _aft_field(data, 23, 20)
        size = _aft_field(data, 43, 1)[0]
        raw_id = _aft_field(data, 44, size)
        if not valid_transaction_id(raw_id):
            raise AftBodyError(0x95, f"transaction ID {raw_id!r} is not 1-20 printable ASCII characters")
        at = 44 + size
        expiration = _aft_bcd(data, at, 4)
        pool = int.from_bytes(_aft_field(data, at + 4, 2), "little")
        receipt_size = _aft_field(data, at + 6, 1)[0]
        receipt = _aft_field(data, at + 7, receipt_size)
        at += 7 + receipt_size
        lock_timeout = _aft_bcd(data, at, 2)
        if at + 2 != len(data):
            raise AftBodyError(0x82, f"{len(data) - at - 2} bytes left over after the 0x72 request")
        return cls(head[0], head[1], head[2], cashable, restricted, nonrestricted, flags[0], int.from_bytes(asset, "little"), key,
                   raw_id.decode("ascii"), expiration, pool, receipt, lock_timeout)


def valid_transaction_id(raw: bytes) -> bool:
    """1-20 printable ASCII characters."""
    return 1 <= len(raw) <= 20 and all(0x20 <= b < 0x7F for b in raw)


@dataclass(frozen=True, slots=True)
class AftShortReply:
    """0x72 reply of two bytes (buffer position, transfer status: a cancel, an unsupported transfer
    code, a transfer not compatible with the one in progress) or three (and the receipt status: no
    transfer information available)."""

    buffer_position: int
    transfer_status: int
    receipt_status: int | None = None

    def encode(self) -> bytes:
        out = bytes((self.buffer_position, self.transfer_status))
        return out if self.receipt_status is None else out + bytes((self.receipt_status,))

    @classmethod
    def decode(cls, data: bytes) -> Self:
        if len(data) not in (2, 3):
            raise ValueError(f"short 0x72 reply of {len(data)} bytes")
        return cls(data[0], data[1], data[2] if len(data) == 3 else None)


#: BCD width of the cumulative meters of a 0x72 reply once the transfer is complete (0 while pending).
AFT_METER_WIDTH = 5
#: The transfer status "pending" (drivers.sas.aft.TransferStatus.PENDING).
AFT_PENDING = 0x40


@dataclass(frozen=True, slots=True)
class _AftReplyHead(Body):
    """The fixed part of a 0x72 reply, before its three cumulative meters."""

    buffer_position: int
    transfer_status: int
    receipt_status: int
    transfer_type: int
    cashable: int
    restricted: int
    nonrestricted: int
    transfer_flags: int
    asset_number: int
    transaction_id: str
    date: int
    time: int
    expiration: int
    pool_id: int
    layout: ClassVar[tuple[Field, ...]] = (
        ("bin", 1), ("bin", 1), ("bin", 1), ("bin", 1), ("bcd", 5), ("bcd", 5), ("bcd", 5),
        ("bin", 1), ("bin", 4), ("lascii", 0), ("bcd", 4), ("bcd", 3), ("bcd", 4), ("bin", 2))


@dataclass(frozen=True, slots=True)
class AftTransferReply(_AftReplyHead):
    """0x72 reply: the transaction's status, amounts, date (MMDDYYYY) and time (HHMMSS) of
    completion, and the cumulative meters (cents) of its transfer type, each a size byte and that
    many BCD bytes (0-9). While the transfer is pending, date and time are zero and the meters are
    sent with a size of 0."""

    cumulative_cashable: int
    cumulative_restricted: int
    cumulative_nonrestricted: int

    def encode(self) -> bytes:
        values = astuple(self)
        width = 0 if self.transfer_status == AFT_PENDING else AFT_METER_WIDTH
        return _AftReplyHead(*values[:-3]).encode() + b"".join(
            bytes((width,)) + (to_bcd(value, width) if width else b"") for value in values[-3:])

    @classmethod
    def decode(cls, data: bytes) -> Self:
        head, at = _AftReplyHead.decode_prefix(data)
        meters = []
        for _ in range(3):
            if at >= len(data) or data[at] > 9 or at + 1 + data[at] > len(data):
                raise ValueError("0x72 reply: a cumulative meter cut short or wider than 9 bytes")
            meters.append(from_bcd(data[at + 1 : at + 1 + data[at]]) if data[at] else 0)
            at += 1 + data[at]
        if at != len(data):
            raise ValueError(f"{len(data) - at} bytes left over after the 0x72 reply")
        return cls(*astuple(head), *meters)


def _aft_request(data: bytes) -> AftTransfer | AftInterrogate | AftCancel:
    if len(data) == 1:
        return AftCancel.decode(data)
    return AftInterrogate.decode(data) if len(data) == 2 else AftTransfer.decode(data)


def _aft_reply(data: bytes) -> AftTransferReply | AftShortReply:
    return AftShortReply.decode(data) if len(data) in (2, 3) else AftTransferReply.decode(data)


def _meters(command: int) -> Callable[[bytes], Meters]:
    return lambda data: Meters.decode_for(command, data)


#: The decoder of each poll's data (request) and of its reply's data.
REQUESTS: dict[int, Callable[[bytes], object]] = {
    0x21: RomSignatureRequest.decode, 0x2F: SelectedMetersRequest.decode,
    0x4C: ValidationId.decode, 0x4D: EnhancedValidationRequest.decode,
    0x58: ValidationNumber.decode, 0x6F: ExtendedMetersRequest.decode, 0x71: RedeemTicket.decode,
    0x72: _aft_request, 0x74: AftLockRequest.decode, 0x75: AftReceiptData.decode, 0x7B: ExtendedValidationStatus.decode,
    0x7C: ExtendedTicketData.decode, 0x7D: TicketData.decode, 0x7F: DateTime.decode,
    0xAF: ExtendedMetersRequest.decode,
    0x0E: RealTimeEvents.decode, 0x53: GameNumber.decode, 0xA0: GameNumber.decode, 0xB5: GameNumber.decode,
}
REPLIES: dict[int, Callable[[bytes], object]] = {
    **{command: _meters(command) for command in METER_LAYOUTS},
    0x1B: HandpayInfo.decode, 0x1F: MachineInfo.decode, 0x21: RomSignature.decode, 0x2F: SelectedMeters.decode,
    0x48: LastBill.decode, 0x4C: ValidationId.decode, 0x4D: EnhancedValidation.decode,
    0x54: SasVersion.decode, 0x57: PendingCashout.decode, 0x58: Status.decode,
    0x6F: ExtendedMeters.decode, 0x70: TicketValidationData.decode,
    0x71: TicketValidationData.decode, 0x72: _aft_reply, 0x74: AftStatus.decode,
    0x7B: ExtendedValidationStatusReply.decode, 0x7C: Status.decode, 0x7D: Status.decode,
    0x7E: DateTime.decode, 0x94: Status.decode, 0xAF: ExtendedMeters.decode,
    0x51: GameNumber.decode, 0x53: GameConfiguration.decode, 0x55: GameNumber.decode,
    0x56: EnabledGames.decode, 0xA0: EnabledFeatures.decode, 0xB5: GameInformation.decode,
}


def parse_request(command: int, data: bytes) -> object:
    """The typed body of a poll's data, or the raw bytes for polls without one.

    Raises ValueError if the data does not fit the body.
    """
    decoder = REQUESTS.get(command)
    return data if decoder is None else decoder(data)


def parse_reply(command: int, data: bytes) -> object:
    """The typed body of a reply's data, or the raw bytes (ValueError if it does not fit)."""
    decoder = REPLIES.get(command)
    return data if decoder is None else decoder(data)
