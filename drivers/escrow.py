"""Escrow and credit-once, written once for every bill validator driver (ID-003, SSP).

A validator holds one item at a time in escrow: a note (its value, None if the protocol's code for
it is unknown) or a voucher (its barcode, None until read). The cabinet says stack or return; the
validator reports the item stacked, and the driver credits it **exactly once**
(``NoteStacked``/``TicketStacked``), however often the protocol repeats the report. With
``hold_ack`` the driver's acknowledgement of a credited item waits until the cabinet says the credit
is in critical memory (:meth:`Escrow.recorded`; the ``credit_recorded`` of the bill validator
interface).

Each driver's tracker subclasses :class:`Escrow` and keeps its protocol's own parts: which status
or poll event means escrowed, stacked, returned; unknown codes; what to send back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hal.events import (
    DeviceEvent,
    DeviceFault,
    FaultKind,
    NoteEscrowed,
    NoteStacked,
    Returned,
    TicketEscrowed,
    TicketStacked,
)

log = logging.getLogger(__name__)

#: A fault as the cabinet is told it: its kind and the protocol's words for it.
Fault = tuple[FaultKind, str]
#: A protocol's fault codes (statuses, poll events) and what each tells the cabinet.
FaultTable = Mapping[int, Fault]


def dollars(cents: int) -> str:
    return f"${cents // 100}.{cents % 100:02d}"


@dataclass(slots=True)
class EscrowItem:
    """What is in escrow. ``key`` is the protocol's identity of it (the same escrow reported again
    has the same key); ``origin`` says where it came from in the protocol, for the log."""

    key: object
    value_cents: int | None = None
    ticket: bool = False
    barcode: str | None = None     #: a voucher's number (None until read)
    origin: str = ""
    credited: bool = False
    recorded: bool = False         #: the cabinet has the credit in critical memory (ACK it now)
    refused: bool = False          #: the driver returns it, never credits it (an unknown note)
    decided: bool = False          #: the cabinet (or the driver) said stack or return

    @property
    def known(self) -> bool:
        """The cabinet can be told what it is: a note of a known value, a voucher read."""
        return self.barcode is not None if self.ticket else self.value_cents is not None

    def describe(self) -> str:
        if self.ticket:
            return f"ticket {self.barcode}" if self.barcode is not None else "unread ticket"
        what = f"{dollars(self.value_cents)} note" if self.value_cents is not None else "unknown note"
        return f"{what} ({self.origin})" if self.origin else what


class Escrow:
    """The item in escrow and its credit, once; events are appended to the caller's list."""

    def __init__(self, device: str, notes: Mapping[int, int], *, hold_ack: bool = False) -> None:
        self.device = device
        self.notes = dict(notes)      #: the protocol's note code (escrow code, channel) -> cents
        #: Hold the ACK of a credited item until :meth:`recorded` (the cabinet committed it).
        self.hold_ack = hold_ack
        self.item: EscrowItem | None = None

    @property
    def escrowed(self) -> bool:
        """Something is in escrow awaiting the cabinet's stack or return."""
        item = self.item
        return item is not None and not item.credited and not item.refused and item.known

    def place(self, item: EscrowItem, events: list[DeviceEvent]) -> bool:
        """``item`` entered escrow: reported (if known) unless it is the one already there, still
        uncredited (the same escrow reported again: False)."""
        current = self.item
        if current is not None and not current.credited and current.key == item.key:
            return False
        if self.escrowed:
            log.warning("%s: escrow changed from %s to %s", self.device, self.describe(),
                        item.describe())
        self.item = item
        self.announce(events)
        return True

    def announce(self, events: list[DeviceEvent]) -> None:
        """Tell the cabinet what is in escrow (once it is known: a voucher once read)."""
        item = self.item
        if item is not None and item.known and not item.refused:
            events.append(self._event(item, TicketEscrowed, NoteEscrowed))

    def credit(self, events: list[DeviceEvent]) -> bool:
        """The item was stacked: credit it, once (False: already credited). An item the cabinet
        cannot be told about is logged for the attendant and credits nothing."""
        item = self.item
        assert item is not None
        if item.credited:
            return False
        item.credited = True
        if item.known:
            events.append(self._event(item, TicketStacked, NoteStacked))
        else:
            log.error("%s: %s was stacked: nothing credited, for the attendant", self.device,
                      item.describe())
        return True

    def _event(self, item: EscrowItem, ticket: type[TicketEscrowed | TicketStacked],
               note: type[NoteEscrowed | NoteStacked]) -> DeviceEvent:
        """The event ``ticket`` (with the barcode) or ``note`` (with the value) for a known item."""
        if item.ticket:
            return ticket(self.device, item.barcode or "")
        return note(self.device, item.value_cents or 0)

    @property
    def ack_due(self) -> bool:
        """Whether the stacked item may be acknowledged now (see ``hold_ack``)."""
        item = self.item
        return not (self.hold_ack and item is not None and item.credited and not item.recorded)

    def recorded(self) -> None:
        """The cabinet has recorded the credit of the item being stacked: it may be ACKed."""
        if self.item is not None and self.item.credited:
            self.item.recorded = True

    def returned(self, events: list[DeviceEvent]) -> None:
        """The item came back out to the player: ``Returned`` if it was escrowed."""
        if self.escrowed:
            events.append(Returned(self.device))
        self.item = None

    def report_faults(self, cleared: Iterable[Fault], began: Iterable[Fault], events: list[DeviceEvent]) -> None:
        """Tell the cabinet the faults that ``cleared`` and then those that ``began``; a fault that
        begins loses the item in escrow (:meth:`drop`)."""
        for kind, detail in cleared:
            events.append(DeviceFault(self.device, kind, detail, cleared=True))
        for kind, detail in began:
            events.append(DeviceFault(self.device, kind, detail))
            self.drop(detail)

    def drop(self, why: str) -> None:
        """The item is gone for ``why`` (a fault, a reset): neither credited nor returned."""
        if self.escrowed:
            log.error("%s: %s in escrow lost to %s: not credited, not returned", self.device,
                      self.describe(), why)
        self.item = None

    def describe(self) -> str:
        return "nothing" if self.item is None else self.item.describe()


__all__ = ["Escrow", "EscrowItem", "dollars"]


class EscrowFront:
    """What a bill validator driver tells the cabinet of its escrow, read from its tracker."""

    _tracker: Escrow

    @property
    def escrowed(self) -> bool:
        """A note or voucher is held in escrow, waiting for stack or return."""
        return self._tracker.escrowed

    @property
    def notes(self) -> dict[int, int]:
        """The validator's notes as it reported them: the protocol's note code -> cents."""
        return dict(self._tracker.notes)
