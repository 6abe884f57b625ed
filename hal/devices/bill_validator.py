"""The bill validator: notes and vouchers in, each held in escrow until the cabinet decides.

Events: :class:`~hal.events.NoteEscrowed` / :class:`~hal.events.TicketEscrowed` (the cabinet
answers :meth:`BillValidator.stack` or :meth:`BillValidator.return_escrow`), then
:class:`~hal.events.NoteStacked` / :class:`~hal.events.TicketStacked` exactly once, or
:class:`~hal.events.Returned`; :class:`~hal.events.Rejected` for what it would not take;
:class:`~hal.events.DeviceFault` (jam, stacker full or open, cheat, failure) and its clearing.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable, Mapping
from typing import ClassVar

from hal.base import Device


class BillValidator(Device):
    """What the cabinet asks of any bill validator."""

    device_class: ClassVar[str] = "bill_validator"

    #: The cabinet sets it: the acknowledgement of a stacked item waits for
    #: :meth:`credit_recorded`, so a power cut between the two leaves a credited note, never a
    #: stacked one that was not credited. A validator that acknowledges on its own ignores it.
    ack_on_record: bool = False

    @abstractmethod
    def enable(self, denominations_cents: Iterable[int], *, tickets: bool = True) -> None:
        """Accept exactly the notes worth ``denominations_cents`` (and vouchers if ``tickets``)."""

    @abstractmethod
    def disable(self) -> None:
        """Accept nothing."""

    @abstractmethod
    def stack(self) -> None:
        """Stack the item in escrow; its ``*Stacked`` event follows, once.
        :class:`~hal.errors.DeviceOperationError` if nothing is in escrow."""

    @abstractmethod
    def return_escrow(self) -> None:
        """Hand the item in escrow back; :class:`~hal.events.Returned` follows."""

    @property
    @abstractmethod
    def escrowed(self) -> bool:
        """A note or voucher is held in escrow, waiting for stack or return."""

    @property
    @abstractmethod
    def notes(self) -> Mapping[int, int]:
        """The notes the validator knows: its note code -> value in cents."""

    @abstractmethod
    def status(self) -> str:
        """Ask for the status now (its events are queued as usual): the status, as a technician
        reads it (``IDLING``, ``DISABLED`` ...)."""

    def credit_recorded(self) -> None:
        """The last ``*Stacked`` item's credit (or its refusal) is in critical memory: the
        validator may acknowledge it (see :attr:`ack_on_record`). Nothing to do by default."""


__all__ = ["BillValidator"]
