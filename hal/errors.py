"""Device-layer errors: one hierarchy, wrapped with ``raise ... from`` at every layer boundary.

``DeviceError`` is what the cabinet catches: an *init* error means the device could not be brought
up (missing port, unknown backend, power-up handshake failed); an *operation* error means a device
that was working failed a request (timeout, closed, refused); ``DeviceGoneError`` means it vanished
(unplugged) and the hot-plug monitor will reopen it when it returns. Bad bytes from a device are a
protocol *remote* error (``drivers.codec``); the driver logs, resynchronises and keeps going.
"""

from __future__ import annotations


class DeviceError(Exception):
    """Base of every device-layer error."""


class DeviceInitError(DeviceError):
    """The device could not be opened or brought to a known state."""


class BackendError(DeviceInitError):
    """The configuration names a backend that does not exist or cannot be imported."""


class DeviceOperationError(DeviceError):
    """A request to an open device failed."""


class DeviceTimeoutError(DeviceOperationError):
    """The device did not answer within its deadline."""


class DeviceClosedError(DeviceOperationError):
    """A request to a device that is not open."""


class DeviceGoneError(DeviceOperationError):
    """The device disappeared (unplugged, port closed under us)."""
