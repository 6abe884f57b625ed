"""The host's side of a ticket redemption (0x70, 0x71), for ``egm sim sas-host`` and the tests.

:func:`redeem_ticket` runs one cycle over ``transact``, the host's way of sending a long poll and
getting the typed reply (``drivers.sas.messages.parse_reply``), or None when the machine does not
answer: it reads the ticket in escrow (0x70), authorises it for ``amount_cents`` (or rejects it
with a transfer code of 0x80 and above) and asks the outcome (0x71, transfer code 0xFF) until the
machine has one. The caller sees exception 0x68 on its general polls meanwhile; this function
does not read exceptions, so it can run between the host's own general polls.
"""

from __future__ import annotations

from collections.abc import Callable

from drivers.sas.codec import LongPoll
from drivers.sas.messages import RedeemTicket, TicketValidationData
from drivers.sas.validation import (
    RedemptionStatus,
    TicketStatus,
    TransferCode,
    validation_from_bcd,
    validation_to_bcd,
)

Transact = Callable[[LongPoll], object]

#: The statuses of a cycle not finished yet.
UNFINISHED = frozenset({RedemptionStatus.WAITING_FOR_71, RedemptionStatus.PENDING})


class RedemptionError(Exception):
    """The machine did not take part in the redemption as SAS says (no reply, no ticket, ...)."""


def _ask(transact: Transact, poll: LongPoll) -> TicketValidationData:
    reply = transact(poll)
    if not isinstance(reply, TicketValidationData):
        raise RedemptionError(f"no reply to long poll 0x{poll.command:02X}: {reply!r}")
    return reply


def ticket_in_escrow(transact: Transact, address: int) -> str | None:
    """0x70: the validation number of the ticket in the machine's escrow, None if there is none."""
    reply = _ask(transact, LongPoll(address, 0x70))
    if reply.status == TicketStatus.NO_TICKET:
        return None
    return validation_from_bcd(reply.validation_data)


def redeem_ticket(transact: Transact, address: int, amount_cents: int, *,
                  transfer_code: int = TransferCode.VALID_CASHABLE, validation: str | None = None,
                  between: Callable[[], None] = lambda: None, tries: int = 10) -> TicketValidationData:
    """Redeem the ticket in escrow (``validation``: check it is that one) and return the final
    0x71 reply. ``between`` runs before each status query (the host's general polls, time for the
    validator to stack); it must poll something (a general poll, another address): the same
    status query twice in a row is a retry, which the machine answers with its previous reply
    (implied ACK, docs/protocols/sas.md). Raises :class:`RedemptionError` when the machine holds no ticket, another
    one, or gives no final status in ``tries`` queries."""
    escrowed = ticket_in_escrow(transact, address)
    if escrowed is None:
        raise RedemptionError("no ticket in escrow")
    if validation is not None and escrowed != validation:
        raise RedemptionError(f"the machine holds ticket {escrowed}, not {validation}")
    reply = _ask(transact, LongPoll(address, 0x71, RedeemTicket(
        transfer_code, amount_cents, 0, validation_to_bcd(escrowed)).encode()))
    for _ in range(tries):
        if reply.status not in UNFINISHED:
            return reply
        between()
        reply = _ask(transact, LongPoll(address, 0x71, RedeemTicket(TransferCode.STATUS_QUERY, 0, 0, b"").encode()))
    raise RedemptionError(f"no final status after {tries} queries (last 0x{reply.status:02X})")
