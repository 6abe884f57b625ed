"""The cabinet's device slots: which device is fitted in each, and where it is looked for."""

from __future__ import annotations

from dataclasses import dataclass

from hal.base import Device
from hal.devices.bill_validator import BillValidator
from hal.devices.io_board import IoBoard
from hal.devices.printer import TicketPrinter
from hal.devices.shoe import CardShoe
from hal.devices.touch import Touchscreen

#: Device names (events, tilts, ``egm simctl``) of the cabinet's device slots.
DEVICE_NAMES = ("bill_validator", "printer", "io_board", "touch", "shoe")


@dataclass
class Devices:
    """The cabinet's devices by slot (None: not fitted). Created and closed by the caller."""

    bill_validator: BillValidator | None = None
    printer: TicketPrinter | None = None
    io_board: IoBoard | None = None
    touch: Touchscreen | None = None
    shoe: CardShoe | None = None

    def slots(self) -> dict[str, Device | None]:
        """Every slot (None: not fitted), in :data:`DEVICE_NAMES` order."""
        return {"bill_validator": self.bill_validator, "printer": self.printer,
                "io_board": self.io_board, "touch": self.touch, "shoe": self.shoe}

    def items(self) -> list[tuple[str, Device]]:
        return [(n, d) for n, d in self.slots().items() if d is not None]

    def port(self, name: str) -> str | None:
        """Where the device in slot ``name`` is looked for (its serial port or input node), or None."""
        device = self.slots().get(name)
        return None if device is None else device.port


def not_connected(name: str, port: str | None, cause: str) -> str:
    """A disconnection tilt's reason: the device, where it is looked for, and why it is not there."""
    return f"{name} not connected ({port or 'no port'}): {cause}"
