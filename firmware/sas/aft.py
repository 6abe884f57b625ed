"""AFT (advanced funds transfer), in-house cashable: the long polls 0x72 and 0x74 as a poll set.

* **0x72 transfer funds**: in-house cashable transfers to the credit meter (type 0x00) and from it to
  the host (0x80), full only (code 0x00) or partial allowed (0x01). A transfer that moves money is
  one ledger record (``Ledger.transfer_in`` / ``transfer_out``), committed with its meter and credit
  change before the reply is sent; its reference is the transaction ID, so a request whose ID is
  in the history buffer is never applied again: the same request again is answered with the
  recorded transfer's status (the host retried after a lost reply), another one with 0x81 (ID not
  unique). The record raises exception 0x69 (``firmware.sas.events``). Interrogation (codes 0xFF
  and 0xFE, index 0: the newest transaction; 0x01-0x7F and 0x81-0xFF: the history buffer) reads
  the same records, so after a power cut at any step it tells the host the truth.
* **0x74 lock and status**: the lock (refused in a game, a tilt, a handpay, or when the transfers
  the host asks for are not available), its timeout, and the status from critical memory.

* **Receipts** (flag 7 of a transfer, 0x75 for their texts): ``firmware.sas.aft_receipts``; a
  transfer asking for a receipt when none can be printed is refused with 0x90, before anything
  moves; its receipt status is in every reply and interrogation about it.

What it needs of the cabinet is :class:`AftCabinet` (``firmware/cabinet/sas_aft.py``).
Transfers here complete at once (no transfer is ever pending) and the host cashout flags
(bits 0-3) are not supported. docs/protocols/sas.md, "AFT", gives the sources and what differs.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from drivers.sas.aft import (
    INTERROGATIONS,
    MAX_BUFFER_INDEX,
    AftStatusBit,
    Available,
    LockCode,
    LockStatus,
    ReceiptStatus,
    TransferCode,
    TransferFlag,
    TransferStatus,
    TransferType,
)
from drivers.sas.aft_receipt import transfer_receipt_fields
from drivers.sas.messages import (
    AftBodyError,
    AftCancel,
    AftInterrogate,
    AftLockRequest,
    AftShortReply,
    AftStatus,
    AftTransfer,
    AftTransferReply,
    parse_request,
)
from firmware.ledger.errors import CriticalMemoryError, LedgerError
from firmware.ledger.ledger import Ledger
from firmware.sas.aft_history import AftHistory, reply_of, sas_date
from firmware.sas.aft_lock import AftLock
from firmware.sas.aft_receipts import AftReceipts, ReceiptCabinet
from firmware.sas.responder import Handler, PollRefused

#: The transfer types supported, and the direction of each.
DIRECTIONS: dict[int, str] = {TransferType.IN_HOUSE_TO_MACHINE: "in", TransferType.IN_HOUSE_TO_HOST: "out"}

S = TransferStatus


class AftCabinet(ReceiptCabinet, Protocol):
    """What AFT needs of the cabinet (implemented in ``firmware/cabinet/sas_aft.py``)."""

    def refusal(self, direction: str) -> str | None:
        """Why a transfer ``"in"`` or ``"out"`` cannot be made now (a game in progress, a tilt, a
        handpay, disabled, ...), or None."""
        ...

    def credit_room(self) -> int:
        """How many more cents the credit meter may take now."""
        ...

    def lock_refusal(self) -> str | None:
        """Why the machine cannot be locked for a transfer now, or None."""
        ...

    def hold(self, until: float | None) -> None:
        """Hold play until the monotonic time ``until`` (the AFT lock), or stop holding (None)."""
        ...

    def show_transfer(self, direction: str, cents: int) -> None:
        """Tell the player that ``cents`` were transferred in or out."""
        ...


@dataclass(frozen=True, slots=True)
class AftSettings:
    """``[sas] aft`` and what AFT reports: the asset number and the transfer limit (cents)."""

    asset_number: int
    transfer_limit_cents: int
    enabled: bool = True


class Refused(Exception):
    """A transfer request refused with ``status``; nothing was changed."""

    def __init__(self, status: TransferStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status


class AftPolls:
    """The AFT poll set of one machine, over its ledger and cabinet. With AFT off (``settings.enabled``
    false) it answers nothing: 0x72 and 0x74 get no reply, as any long poll the machine does not support."""

    def __init__(self, ledger: Ledger, cabinet: AftCabinet, settings: AftSettings, *,
                 clock: Callable[[], dt.datetime] = dt.datetime.now,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self._ledger = ledger
        self._cabinet = cabinet
        self.settings = settings
        self._clock = clock
        self.history = AftHistory(ledger)
        self.lock = AftLock(monotonic)
        #: the transfers' receipts (a power cut's leftovers are settled here, at power-up)
        self.receipts = AftReceipts(ledger, cabinet, self.history, settings.asset_number)
        #: the reply to the last transfer request of this power-up (refused or done), reported by an
        #: interrogation of index 0 before the history's newest
        self._current: AftTransferReply | AftShortReply | None = None

    def handlers(self) -> Mapping[int, Handler]:
        if not self.settings.enabled:
            return {}
        return {0x72: self.transfer_poll, 0x74: self.lock_poll, 0x75: self.receipts.set_data}

    # --- 0x72 ----------------------------------------------------------------------------------
    def transfer_poll(self, data: bytes) -> bytes:
        self.receipts.kick()
        try:
            request = parse_request(0x72, data)
        except AftBodyError as exc:
            return self._unreadable(S(exc.status)).encode()
        if isinstance(request, AftInterrogate):
            return self.interrogate(request).encode()
        if isinstance(request, AftCancel):
            # nothing is ever pending here: a cancel is answered with the current status
            return self.interrogate(AftInterrogate(TransferCode.INTERROGATE_STATUS_ONLY, 0)).encode()
        assert isinstance(request, AftTransfer)
        return self.transfer(request).encode()

    def interrogate(self, request: AftInterrogate) -> AftTransferReply | AftShortReply:
        """The status of the transaction the host asks for (nothing changes)."""
        if request.transfer_code not in INTERROGATIONS:
            return AftShortReply(0, S.UNSUPPORTED_TRANSFER_CODE)
        index = request.transaction_index
        if index == 0:
            if self._current is not None:
                return self._current
            newest = self.history.newest()
            return self._reply(newest) if newest else AftShortReply(0, S.NO_INFORMATION, ReceiptStatus.NONE)
        body = self.history.entry(index)
        return self._reply(body) if body else AftShortReply(index, S.NO_INFORMATION, ReceiptStatus.NONE)

    def _reply(self, body: Mapping[str, Any]) -> AftTransferReply:
        return reply_of(body, self.receipts.status(body))

    def transfer(self, request: AftTransfer) -> AftTransferReply | AftShortReply:
        """Make the transfer ``request`` asks for, once; its reply."""
        if request.transfer_code not in (TransferCode.FULL_ONLY, TransferCode.PARTIAL_ALLOWED):
            self._current = AftShortReply(0, S.UNSUPPORTED_TRANSFER_CODE)
            return self._current
        done = self.history.find(request.transaction_id)
        if done is not None and _same_request(done, request):
            return self._reply(done)         # a retry: the transfer it asked for is made already
        try:
            if done is not None:
                raise Refused(S.ID_NOT_UNIQUE, f"transaction {request.transaction_id} was made already")
            direction, cents = self._check(request)
            reply = self._commit(request, direction, cents)
        except Refused as refused:
            self._current = reply = self._refusal(request, refused.status)
            return reply
        self._current = None                 # the history's newest is this transfer
        return reply

    def _check(self, request: AftTransfer) -> tuple[str, int]:
        """The direction and amount of the transfer ``request`` asks for, or :class:`Refused`."""
        direction = DIRECTIONS.get(request.transfer_type)
        if direction is None or request.transaction_index != 0 or request.restricted or request.nonrestricted:
            raise Refused(S.NOT_A_VALID_FUNCTION, "only in-house cashable transfers are supported")
        if request.asset_number != self.settings.asset_number:
            raise Refused(S.ASSET_NUMBER_MISMATCH, f"asset number {request.asset_number}")
        if request.cashable <= 0:
            raise Refused(S.NOT_A_VALID_AMOUNT, "nothing to transfer")
        if request.cashable % self._ledger.denom_cents:
            raise Refused(S.NOT_A_MULTIPLE_OF_DENOMINATION, f"{request.cashable} cents")
        if request.transfer_flags & TransferFlag.ONLY_IF_LOCKED and not self.lock.locked:
            raise Refused(S.NOT_LOCKED, "the host asked for a locked machine")
        try:
            transfer_receipt_fields(request.receipt_data)
        except ValueError as exc:
            raise Refused(S.NOT_A_VALID_FUNCTION, str(exc)) from None
        if request.transfer_flags & TransferFlag.RECEIPT_REQUEST and (why := self.receipts.refusal()):
            raise Refused(S.RECEIPT_UNAVAILABLE, why)
        if (why := self._cabinet.refusal(direction)) is not None:
            raise Refused(S.UNABLE_NOW, why)
        limit = self.transfer_limit() if direction == "in" else min(
            self._ledger.credits_cents, self.settings.transfer_limit_cents)
        limit -= limit % self._ledger.denom_cents
        cents = request.cashable
        if cents > limit:
            if request.transfer_code != TransferCode.PARTIAL_ALLOWED or limit <= 0:
                raise Refused(S.EXCEEDS_LIMIT, f"{cents} cents over the {limit} cents possible now")
            cents = limit
        return direction, cents

    def transfer_limit(self) -> int:
        """The most that may be transferred to the credit meter now (cents)."""
        return max(0, min(self.settings.transfer_limit_cents, self._cabinet.credit_room()))

    def _commit(self, request: AftTransfer, direction: str, cents: int) -> AftTransferReply:
        meter = "transfers_in" if direction == "in" else "transfers_out"
        date, clock = sas_date(self._clock())
        status = S.FULL_SUCCESS if cents == request.cashable else S.PARTIAL_SUCCESS
        body: dict[str, Any] = {
            "source": "aft", "status": int(status), "code": request.transfer_code,
            "type": request.transfer_type, "requested": request.cashable, "flags": request.transfer_flags,
            "asset": request.asset_number, "expiration": request.expiration, "pool": request.pool_id,
            "receipt_data": request.receipt_data.hex(), "position": self.history.next_position(),
            "date": date, "time": clock, "cumulative": self._ledger.meters.get(meter, 0) + cents}
        record = self._ledger.transfer_in if direction == "in" else self._ledger.transfer_out
        try:
            record(cents, request.transaction_id, **body)
        except CriticalMemoryError:
            raise
        except LedgerError as exc:           # refused by critical memory itself: nothing written
            raise Refused(S.UNABLE_NOW, str(exc)) from None
        self._cabinet.show_transfer(direction, cents)
        if request.transfer_flags & TransferFlag.LOCK_AFTER_TRANSFER and request.lock_timeout:
            self._cabinet.hold(self.lock.lock(request.lock_timeout))
        else:
            self._release()
        done = {**body, "cents": cents, "reference": request.transaction_id}
        self.receipts.after_transfer(done)
        return self._reply(done)

    def _refusal(self, request: AftTransfer, status: TransferStatus) -> AftTransferReply:
        date, clock = sas_date(self._clock())
        meter = "transfers_out" if request.transfer_type == TransferType.IN_HOUSE_TO_HOST else "transfers_in"
        return AftTransferReply(
            0, status, ReceiptStatus.NONE, request.transfer_type, request.cashable, request.restricted,
            request.nonrestricted, request.transfer_flags, request.asset_number, request.transaction_id,
            date, clock, request.expiration, request.pool_id, self._ledger.meters.get(meter, 0), 0, 0)

    def _unreadable(self, status: TransferStatus) -> AftTransferReply:
        date, clock = sas_date(self._clock())
        reply = AftTransferReply(0, status, ReceiptStatus.NONE, 0, 0, 0, 0, 0, self.settings.asset_number,
                                 "", date, clock, 0, 0, 0, 0, 0)
        self._current = reply
        return reply

    # --- 0x74 ----------------------------------------------------------------------------------
    def lock_poll(self, data: bytes) -> bytes:
        self.receipts.kick()
        try:
            request = AftLockRequest.decode(data)
        except ValueError as exc:                 # a lock timeout not in BCD: NACK, as Monaco does
            raise PollRefused(f"0x74: {exc}") from None
        if request.lock_code == LockCode.REQUEST:
            wanted = request.transfer_condition & (Available.TO_MACHINE | Available.FROM_MACHINE)
            if (request.lock_timeout and self._cabinet.lock_refusal() is None
                    and wanted & self.available() == wanted):
                self._cabinet.hold(self.lock.lock(request.lock_timeout))
        elif request.lock_code == LockCode.CANCEL:
            self._release()
        elif request.lock_code != LockCode.INTERROGATE:
            raise PollRefused(f"0x74: lock code 0x{request.lock_code:02X} is not 00, 80 or FF")
        return self.status().encode()

    def available(self) -> int:
        """The transfers possible now (0x74's available transfers)."""
        bits = 0
        if self._cabinet.refusal("in") is None and self.transfer_limit() >= self._ledger.denom_cents:
            bits |= Available.TO_MACHINE
        if self._cabinet.refusal("out") is None and self._ledger.credits_cents > 0:
            bits |= Available.FROM_MACHINE
        return bits

    def status(self) -> AftStatus:
        """The 0x74 reply, from critical memory and the cabinet."""
        locked = self.lock.locked
        if not locked:
            self._cabinet.hold(None)
        return AftStatus(
            self.settings.asset_number, LockStatus.LOCKED if locked else LockStatus.NOT_LOCKED,
            self.available(), 0, AftStatusBit.IN_HOUSE_ENABLED | AftStatusBit.PARTIAL_TO_HOST
            | AftStatusBit.ANY_ENABLED | (AftStatusBit.RECEIPT_PRINTER if self.receipts.refusal() is None else 0),
            MAX_BUFFER_INDEX, self._ledger.credits_cents, 0, 0,
            self.transfer_limit(), 0, 0)

    def _release(self) -> None:
        self.lock.release()
        self._cabinet.hold(None)


def _same_request(done: Mapping[str, Any], request: AftTransfer) -> bool:
    """The recorded transfer is what ``request`` asks for (a retry, not a new transfer)."""
    return (done["code"], done["type"], done["requested"], done["flags"], done["asset"]) == (
        request.transfer_code, request.transfer_type, request.cashable, request.transfer_flags,
        request.asset_number)
