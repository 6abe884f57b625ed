"""The host's side of AFT: one transfer to or from a gaming machine, made exactly once.

:func:`aft_transfer` sends the 0x72 transfer request and, when no readable answer about this
transaction comes back (a reply lost, a machine that lost power), interrogates the machine (0x72,
code 0xFF, index 0) for the newest transaction: if it is this one, that is the answer; if it is
not, the machine never made it and the same request (same transaction ID, which the machine applies
at most once) is sent again. ``exchange`` writes a poll and returns what the machine answered
(``b""`` when nothing came in time), so the same function drives a serial port, a pty or, in tests,
a :class:`firmware.sas.responder.SasMachine` directly (``egm sim sas-host aft``).
"""

from __future__ import annotations

from collections.abc import Callable

from drivers.sas import messages as msg
from drivers.sas.aft import TransferCode, TransferType
from drivers.sas.aft_receipt import AftReceiptData
from drivers.sas.codec import Ack, HostDecoder, LongPoll, Reply, encode_poll

#: Write a poll, return the bytes the machine answered (b"" when none came in time).
Exchange = Callable[[bytes], bytes]


class HostAftError(Exception):
    """The machine never answered about the transfer."""


def ask(exchange: Exchange, poll: LongPoll) -> object | None:
    """Send ``poll``; the typed body of the machine's reply, or None (no reply, a bad CRC, a NACK)."""
    wire = exchange(encode_poll(poll))
    decoder = HostDecoder(poll.address)
    decoder.expect(poll)
    decoder.receive_data(wire)
    for event in decoder.events():
        if isinstance(event, Reply) and event.command == poll.command:
            try:
                return msg.parse_reply(event.command, event.data)
            except ValueError:
                return None
    return None


def aft_transfer(exchange: Exchange, address: int, *, cents: int, transaction_id: str, asset_number: int,
                 to_machine: bool = True, partial: bool = False, flags: int = 0,
                 attempts: int = 3) -> msg.AftTransferReply | msg.AftShortReply:
    """Transfer ``cents`` of in-house cashable credit to the machine (or from it, ``to_machine``
    false); the machine's final answer about ``transaction_id``. Raises :class:`HostAftError`
    when the machine gives none in ``attempts`` rounds of request and interrogation."""
    request = msg.AftTransfer(
        TransferCode.PARTIAL_ALLOWED if partial else TransferCode.FULL_ONLY, 0,
        TransferType.IN_HOUSE_TO_MACHINE if to_machine else TransferType.IN_HOUSE_TO_HOST,
        cents, 0, 0, flags, asset_number, bytes(20), transaction_id, 0, 0, b"", 0)
    poll = LongPoll(address, 0x72, request.encode())
    interrogation = LongPoll(address, 0x72, msg.AftInterrogate(TransferCode.INTERROGATE, 0).encode())
    for _ in range(attempts):
        reply = ask(exchange, poll)
        if _about(reply, transaction_id) or isinstance(reply, msg.AftShortReply):
            return reply                                      # type: ignore[return-value]
        status = ask(exchange, interrogation)
        if _about(status, transaction_id):
            return status                                     # type: ignore[return-value]
    raise HostAftError(f"no answer about AFT transaction {transaction_id} from machine {address}")


def aft_lock(exchange: Exchange, address: int, *, lock_code: int, condition: int = 0,
             timeout_hundredths: int = 0) -> msg.AftStatus | None:
    """0x74: request (0x00), cancel (0x80) or interrogate (0xFF) the lock; the machine's status."""
    reply = ask(exchange, LongPoll(address, 0x74,
                                   msg.AftLockRequest(lock_code, condition, timeout_hundredths).encode()))
    return reply if isinstance(reply, msg.AftStatus) else None


def aft_receipt_data(exchange: Exchange, address: int, texts: dict[int, str]) -> bool:
    """0x75: set the machine's receipt texts (code -> text, "" = its default); True when it ACKed
    them, False for a NACK or no answer. ValueError for texts 0x75 cannot carry."""
    poll = LongPoll(address, 0x75, AftReceiptData(tuple(texts.items())).encode())
    decoder = HostDecoder(address)
    decoder.expect(poll)
    decoder.receive_data(exchange(encode_poll(poll)))
    return any(isinstance(event, Ack) for event in decoder.events())


def _about(reply: object, transaction_id: str) -> bool:
    return isinstance(reply, msg.AftTransferReply) and reply.transaction_id == transaction_id
