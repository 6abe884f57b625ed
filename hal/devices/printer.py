"""The ticket printer: vouchers out, each counted printed only when the printer confirms it.

Events: :class:`~hal.events.TicketPrinted` (the printer confirmed the ticket) or
:class:`~hal.events.TicketNotPrinted` (with the reason), exactly once per ticket sent;
:class:`~hal.events.PaperLow`; :class:`~hal.events.DeviceFault` (paper out, jam, chassis open,
failure) and its clearing.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from hal.base import Device
from hal.devices.ticket import Receipt, Ticket


@dataclass(frozen=True, slots=True)
class PrinterStatus:
    """What the printer said when asked: its condition as text (``paper_out, jam`` or ``none``)
    and its firmware version if it reports one."""

    text: str
    version: str | None = None


class TicketPrinter(Device):
    """What the cabinet asks of any ticket printer."""

    device_class: ClassVar[str] = "printer"

    @abstractmethod
    def print_voucher(self, ticket: Ticket) -> None:
        """Send ``ticket``; its outcome follows as ``TicketPrinted`` or ``TicketNotPrinted``.
        A second ticket while one is unconfirmed is a :class:`~hal.errors.DeviceOperationError`."""

    @abstractmethod
    def print_receipt(self, receipt: Receipt) -> None:
        """Send a text ``receipt``; its outcome follows as ``TicketPrinted`` or ``TicketNotPrinted``
        whose ``validation`` is the receipt's key. The same rules as :meth:`print_voucher`."""

    @property
    @abstractmethod
    def printing(self) -> str | None:
        """The validation number of the ticket (or the key of the receipt) awaiting confirmation."""

    @property
    @abstractmethod
    def fault(self) -> str | None:
        """What stops tickets now (``paper_out``, ``jam`` ...), or None: the printer is ready."""

    @abstractmethod
    def status(self) -> PrinterStatus:
        """Ask for the status now (its events are queued as usual)."""


__all__ = ["PrinterStatus", "TicketPrinter"]
